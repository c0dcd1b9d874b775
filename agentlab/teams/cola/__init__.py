"""COLA (``agentlab exec --team cola``): planner, scheduler, decision agents, reviewer, backtracking.

See ``docs/agents/cola.md``. The team is entered through :func:`agentlab.teams.cola.run.run_cola`.
"""
