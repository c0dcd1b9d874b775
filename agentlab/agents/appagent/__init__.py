"""AppAgent (explore, then deploy): the agent itself (:mod:`.agent`), what both phases share
(:mod:`.core`), exploration and demonstrations (:mod:`.explore`), the element documentation
(:mod:`.docs_store`), the runners behind pool documents (:mod:`.runner`) and its commands
(:mod:`.cli`, ``agentlab agent ...``)."""
