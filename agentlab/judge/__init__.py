"""Judging an end state: getters read it (files, a device, a screen), metrics compare, evaluators combine.

The floor under task files: it knows nothing of agents, routers or runs, so a task's evaluator
can be checked when the task loads and run by whatever carried the task out.
"""
