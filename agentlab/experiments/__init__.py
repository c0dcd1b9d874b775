"""The studies behind notebook 04 and ``benchmarks/``: one module per study, each a typed config, a ``run``, typed results.

- :mod:`.routing_table` -- Table 4 / Table 5 analog: every router fitted and measured on the same data
  (:mod:`.routing_report`: its Markdown per domain, the benchmark's results file);
- :mod:`.pool_growth` -- Figure 3 analog: accuracy as agents join the pool;
- :mod:`.data_size` -- Figure 5 analog: accuracy per demonstration budget, filtered vs unfiltered data;
- :mod:`.manager_mode` -- hash-manager mode on multi-app tasks (top-K recall, AgentMatch);
- :mod:`.pool_scale` -- latency and accuracy with up to 1,000 agents (synthetic distractors), AgentToken vs ICL;
- :mod:`.route_latency` -- routing latency per task, one new task at a time, cold and warm;
- :mod:`.training_cost` -- Table 5 analog: AgentToken vs LoRA vs prompt tuning, each fitted in a fresh process;
- :mod:`.tuning` -- which hidden state, prompt and training setting make AgentToken route well;
- :mod:`.router_ablation` -- each AgentToken change side by side;
- :mod:`.multi_agent`, :mod:`.execution_acc`, :mod:`.desktop_arch`, :mod:`.enrolment` -- Tables 1, 2, 3 and 7
  analogs (execution), Agent S2 / PC-Agent, enrolment of new agents;
- :mod:`.heldout` -- the code specialists (typed toolkits) on the held-out tasks against the generalist;
- :mod:`.android_agent`, :mod:`.env_overhead`, :mod:`.scale_out`, :mod:`.selfinstruct_cost` -- what
  AndroidEnv (and AppAgent on it), the desktop env and workspace, Ray workers and self-instruct's filter cost;
  :mod:`.desktop_apps` (part of the env overhead) -- per desktop application: launch, tree, GUI replay time and pass rate;
- helpers they share: :mod:`.routing_data` (the data of one run), :mod:`.fit_cost` (time,
  memory, parameters of a fit), :mod:`.subsets` (per-domain and evenly spread task subsets),
  :mod:`.markdown` (results tables), and small study helpers of notebooks 03 and 05
  (:mod:`.token_training`, :mod:`.scripted_demo`).

Floor 7 of the architecture: imports metaagent, eval, selfinstruct, pool and llm, never viz,
notebooks or the CLI. Studies log progress (``logging``); plots live in ``agentlab.viz``.
"""
