"""PC-Agent (runner ``pcagent``): a hierarchy of manager, progress, decision and reflection agents.

Built from the PC-Agent paper's method (Liu et al., 2025): the manager splits an instruction
into parameterised subtasks and fills them from a communication hub; a progress agent keeps
a running summary of the current subtask; a decision agent reasons and emits one desktop
action; a reflection agent compares the screen before and after it. Active perception lists
accessibility elements plus OCR text boxes. :mod:`agentlab.agents.pcagent.runner` ties them
together; ``docs/agents/pcagent.md`` describes what differs from the paper.
"""
