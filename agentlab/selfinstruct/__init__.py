"""Self-instruct: grow each agent's ~10 hand-written demonstrations to ~100 with a generator LM,
keeping only candidates that pass the paper's BERTScore band filter (Algorithm 1) and do not
leak benchmark tasks.

Entry points: :func:`run_selfinstruct` (pipeline), :func:`calibrate` (threshold band from the
pool's pairwise BERTScores), :func:`load_demos` (the shipped dataset).
"""

from __future__ import annotations

from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds, sample_config
from agentlab.selfinstruct.filter import FilterResult, greedy_filter

__all__ = [
    "FilterResult",
    "SelfInstructConfig",
    "Thresholds",
    "calibrate",
    "domain_distributions",
    "sample_config",
    "greedy_filter",
    "load_demos",
    "run_selfinstruct",
]


def __getattr__(name: str):  # lazy: keep `import agentlab.selfinstruct` free of torch/datasets
    if name == "run_selfinstruct":
        from agentlab.selfinstruct.pipeline import run_selfinstruct

        return run_selfinstruct
    if name == "calibrate":
        from agentlab.selfinstruct.calibrate import calibrate

        return calibrate
    if name == "domain_distributions":
        from agentlab.selfinstruct.calibrate import domain_distributions

        return domain_distributions
    if name == "load_demos":
        from agentlab.selfinstruct.store import load_demos

        return load_demos
    raise AttributeError(name)
