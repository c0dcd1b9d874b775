"""Multi-agent tasks by reverse synthesis: combine single-agent tasks into pairs and triples,
reword them with a model, and keep those whose combined reference solution still scores 1.

Above self-instruct (it reuses its leakage filter against the public benchmarks and the
project's routing set) and the task spec (what it writes are task files).
"""
