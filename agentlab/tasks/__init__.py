"""The task spec: execution task files (start state, evaluator, gold agent or plan), their setup
writers, and the plan steps and routing decisions that name agents for them.

A low floor of its own (above judging, beside the pool and the envs), so that envs, routers,
teams and studies all read one definition of a task without importing each other.
"""
