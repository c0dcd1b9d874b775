"""agentlab: a research workbench for specialized generalist computer assistants.

The package reproduces the AgentStore idea (an AgentPool of heterogeneous agents, a
MetaAgent that routes tasks with learnable AgentTokens, self-instructed training data)
and the environments the agents act in. Sub-packages are imported lazily by callers so
that ``import agentlab`` stays cheap (no torch import).
"""

__version__ = "0.1.0"
