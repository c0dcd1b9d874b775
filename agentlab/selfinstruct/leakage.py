"""Leakage filter: generated demonstrations must not be (near-)copies of benchmark test tasks.

The paper "applies BertScore filtering to exclude any overlap with test tasks". A candidate
whose BERTScore with any test task exceeds ``leakage_tau`` is dropped and counted per agent.
The test tasks are the public OSWorld / OSWorld-multi / AppAgent instructions and the project's
own routing set (``data/benchmarks/routing_set_v2.jsonl``), which is the second set routers are
scored on, so no demonstration may come near it either. The lists are read only here and in
evaluation, never shown to the generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentlab.errors import ConfigError
from agentlab.similarity import SimilarityScorer


def leakage_tasks() -> list[str]:
    """Every test task generated data must stay away from: the public benchmarks, then the
    project's routing set v2."""
    from agentlab.eval.benchmarks import all_instructions, load_project_set

    return all_instructions() + [t.instruction for t in load_project_set()]


@dataclass(frozen=True)
class LeakageCheck:
    """Per-candidate maximum BERTScore against the benchmark tasks and the closest task."""

    max_score: np.ndarray
    nearest: list[str]
    leaked: np.ndarray  # bool


class LeakageFilter:
    """Scores candidates against every benchmark instruction (one batched call per check)."""

    def __init__(self, scorer: SimilarityScorer, tasks: list[str], tau: float) -> None:
        if not 0.0 < tau <= 1.0:
            raise ConfigError(f"leakage_tau={tau} must lie in (0, 1]")
        self.scorer = scorer
        self.tasks = list(dict.fromkeys(t for t in tasks if t.strip()))
        self.tau = float(tau)

    @classmethod
    def from_benchmarks(cls, scorer: SimilarityScorer, tau: float) -> LeakageFilter:
        return cls(scorer, leakage_tasks(), tau)

    def check(self, candidates: list[str]) -> LeakageCheck:
        if not candidates or not self.tasks:
            z = np.zeros(len(candidates), dtype=np.float32)
            return LeakageCheck(z, [""] * len(candidates), z.astype(bool))
        mat = self.scorer.matrix(candidates, self.tasks)
        best = mat.argmax(axis=1)
        mx = mat[np.arange(len(candidates)), best]
        return LeakageCheck(mx, [self.tasks[j] for j in best], mx > self.tau)
