"""Leakage filter: generated demonstrations must not be (near-)copies of benchmark test tasks.

The paper "applies BertScore filtering to exclude any overlap with test tasks". A candidate
whose BERTScore with any test task exceeds ``leakage_tau`` is dropped and counted per agent.
The test tasks are the public OSWorld / OSWorld-multi / AppAgent instructions and the project's
own routing set (``data/benchmarks/routing_set_v2.jsonl``), which is the second set routers are
scored on, so no demonstration may come near it either. The lists are read only here and in
evaluation, never shown to the generator.

The public lists are an input the user fetches (``agentlab benchmarks fetch``). Without them the
filter still checks the project's set, says in one line which lists it checked, and a run
records ``leakage_free: false`` (``leakage.json``): its output is never called leakage-free.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from agentlab.errors import ConfigError
from agentlab.llm.similarity import SimilarityScorer

log = logging.getLogger(__name__)


def leakage_sources() -> tuple[list[str], list[str]]:
    """(test-task lists checked, public lists missing). The project's routing set is always
    checked; the public lists only when they have been fetched (``agentlab benchmarks fetch``)."""
    from agentlab.eval.public_lists import leakage_sources as public

    present, missing = public()
    return [*present, "data/benchmarks/routing_set_v2.jsonl"], missing


def leakage_tasks() -> list[str]:
    """Every test task generated data must stay away from: the public benchmarks that are
    present, then the project's routing set v2 (:func:`leakage_sources` says which)."""
    from agentlab.eval.benchmarks import load_appagent, load_osworld, load_project_set

    _, missing = leakage_sources()
    out: list[str] = []
    if "osworld/tasks.jsonl" not in missing:
        out += [t.instruction for t in load_osworld() + load_osworld(multi=True)]
    if "appagent/tasks.jsonl" not in missing:
        out += [t.instruction for t in load_appagent()]
    return out + [t.instruction for t in load_project_set()]


def coverage_line(checked: list[str], missing: list[str]) -> str:
    """The one line a leakage filter says about what it checked against."""
    line = f"leakage filter: checked against {', '.join(checked)}"
    if missing:
        line += (f"; NOT against {', '.join(missing)} (not fetched: `agentlab benchmarks fetch`), so what it keeps "
                 "cannot be called leakage-free")
    return line


@dataclass(frozen=True)
class LeakageCheck:
    """Per-candidate maximum BERTScore against the benchmark tasks and the closest task."""

    max_score: np.ndarray
    nearest: list[str]
    leaked: np.ndarray  # bool


class LeakageFilter:
    """Scores candidates against every benchmark instruction (one batched call per check)."""

    def __init__(self, scorer: SimilarityScorer, tasks: list[str], tau: float, *,
                 checked: list[str] | None = None, missing: list[str] | None = None) -> None:
        if not 0.0 < tau <= 1.0:
            raise ConfigError(f"leakage_tau={tau} must lie in (0, 1]")
        self.scorer = scorer
        self.tasks = list(dict.fromkeys(t for t in tasks if t.strip()))
        self.tau = float(tau)
        #: the test-task lists behind ``tasks``, and the public ones that were not there
        self.checked = list(checked or ["(given tasks)"])
        self.missing = list(missing or [])

    @property
    def leakage_free(self) -> bool:
        """Whether what passes may be called leakage-free: only when no list was missing."""
        return not self.missing

    def coverage(self) -> dict[str, object]:
        """What a run records about its leakage check (``leakage.json``, reports)."""
        return {"checked": self.checked, "missing": self.missing, "leakage_free": self.leakage_free,
                "tau": self.tau, "tasks": len(self.tasks)}

    @classmethod
    def from_benchmarks(cls, scorer: SimilarityScorer, tau: float) -> LeakageFilter:
        checked, missing = leakage_sources()
        log.info("%s", coverage_line(checked, missing))  # the run's report and CLI repeat it (report.leakage_sentence)
        return cls(scorer, leakage_tasks(), tau, checked=checked, missing=missing)

    def check(self, candidates: list[str]) -> LeakageCheck:
        if not candidates or not self.tasks:
            z = np.zeros(len(candidates), dtype=np.float32)
            return LeakageCheck(z, [""] * len(candidates), z.astype(bool))
        mat = self.scorer.matrix(candidates, self.tasks)
        best = mat.argmax(axis=1)
        mx = mat[np.arange(len(candidates)), best]
        return LeakageCheck(mx, [self.tasks[j] for j in best], mx > self.tau)
