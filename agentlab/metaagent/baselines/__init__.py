"""Baseline MetaAgent routers measured against AgentToken on the same backbone and data.

- :class:`~agentlab.metaagent.baselines.icl.ICLRouter`: every agent document in the prompt
  (the paper's ICL router), answer parsed from ``###Name###``.
- :class:`~agentlab.metaagent.baselines.lora.LoRARouter`: LoRA adapters on the frozen
  backbone, trained to generate ``###Name###``.
- :class:`~agentlab.metaagent.baselines.prompt_tuning.PromptTuningRouter`: trainable virtual
  tokens (soft prompt), same data and answer.
- :class:`~agentlab.metaagent.baselines.embedding.EmbeddingRouter`: MiniLM sentence
  embeddings of the demonstrations, nearest centroid or kNN (like semantic-router).

The three LM routers rank the pool by the log-likelihood of each agent's answer string
(:mod:`~agentlab.llm.scoring`), so every router yields a full
distribution over the pool. Modules are imported by name (``ROUTERS``) because they pull
in torch and peft.
"""
