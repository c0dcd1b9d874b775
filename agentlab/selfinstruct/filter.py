"""Algorithm 1 of AgentStore (Appendix D): greedy BERTScore band filtering with prioritised order.

Exactly as the paper states it:

1. for every candidate ``y'`` compute ``d(y') = min_{y in S_i} min(|s(y',y) - tau1|, |s(y',y) - tau2|)``
   (the smallest distance of any of its scores against the *existing* set to either threshold);
2. sort candidates by ``d`` descending (ties keep generation order);
3. walk them in that order and accept ``y'`` only if ``tau1 <= s(y', y) <= tau2`` for every
   ``y in S_i ∪ S_new`` (existing items first, then the ones accepted earlier in this pass),
   stopping at the first violation.

The scores are computed up front in one batched BERTScore call (candidates against existing
items and against each other; F1 is symmetric), so the greedy loop only indexes a matrix: the
result is identical to scoring pairs lazily, and much faster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agentlab.errors import ConfigError
from agentlab.llm.similarity import SimilarityScorer


@dataclass(frozen=True)
class Decision:
    """What Algorithm 1 decided for one candidate (``index`` into the candidate list)."""

    index: int
    text: str
    d: float
    rank: int
    accepted: bool
    #: ``accepted`` | ``below_tau1`` | ``above_tau2`` (the first violation found)
    reason: str
    #: which item violated the band: ``("existing", j)`` or ``("new", j)``; None when accepted
    violated_by: tuple[str, int] | None
    violating_score: float | None
    #: scores against the existing set S_i (for the report)
    min_existing: float
    max_existing: float
    mean_existing: float


@dataclass
class FilterResult:
    """Accepted candidates (in acceptance order) and one decision per candidate."""

    accepted: list[int] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    @property
    def accepted_texts(self) -> list[str]:
        by_index = {d.index: d.text for d in self.decisions}
        return [by_index[i] for i in self.accepted]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.decisions:
            out[d.reason] = out.get(d.reason, 0) + 1
        return out


def priority(cand_vs_existing: np.ndarray, tau1: float, tau2: float) -> np.ndarray:
    """Step 2: ``d(y')`` for every candidate (row). With no existing items, ``d`` is +inf."""
    s = np.asarray(cand_vs_existing, dtype=np.float64)
    if s.shape[1] == 0:
        return np.full(s.shape[0], np.inf)
    return np.minimum(np.abs(s - tau1), np.abs(s - tau2)).min(axis=1)


def greedy_filter(
    candidates: list[str],
    cand_vs_existing: np.ndarray,
    cand_vs_cand: np.ndarray,
    tau1: float,
    tau2: float,
) -> FilterResult:
    """Run Algorithm 1 on precomputed scores.

    ``cand_vs_existing``: ``[m, n]`` BERTScore of each candidate against each item of ``S_i``.
    ``cand_vs_cand``: ``[m, m]`` BERTScore between candidates (only off-diagonal entries are read).
    """
    if tau1 > tau2:
        raise ConfigError(f"thresholds: tau1={tau1} is greater than tau2={tau2}; the band would be empty")
    m = len(candidates)
    ce = np.asarray(cand_vs_existing, dtype=np.float64).reshape(m, -1)
    cc = np.asarray(cand_vs_cand, dtype=np.float64).reshape(m, m)
    d = priority(ce, tau1, tau2)
    # Descending by d; a stable sort on -d keeps generation order among ties.
    order = np.argsort(-d, kind="stable")
    result = FilterResult()
    decisions: dict[int, Decision] = {}
    for rank, i in enumerate(order.tolist()):
        row = ce[i]
        violation: tuple[str, int, float] | None = None
        for j in range(row.shape[0]):
            if row[j] < tau1 or row[j] > tau2:
                violation = ("existing", j, float(row[j]))
                break
        if violation is None:
            for j in result.accepted:
                s = cc[i, j]
                if s < tau1 or s > tau2:
                    violation = ("new", j, float(s))
                    break
        ok = violation is None
        if ok:
            result.accepted.append(i)
        if violation is None:
            reason, violated_by, violating_score = "accepted", None, None
        else:
            reason = "below_tau1" if violation[2] < tau1 else "above_tau2"
            violated_by, violating_score = (violation[0], violation[1]), violation[2]
        decisions[i] = Decision(
            index=i,
            text=candidates[i],
            d=float(d[i]),
            rank=rank,
            accepted=ok,
            reason=reason,
            violated_by=violated_by,
            violating_score=violating_score,
            min_existing=float(row.min()) if row.size else float("nan"),
            max_existing=float(row.max()) if row.size else float("nan"),
            mean_existing=float(row.mean()) if row.size else float("nan"),
        )
    result.decisions = [decisions[i] for i in range(m)]
    return result


def score_and_filter(
    scorer: SimilarityScorer,
    candidates: list[str],
    existing: list[str],
    tau1: float,
    tau2: float,
) -> tuple[FilterResult, np.ndarray, np.ndarray]:
    """Score candidates against ``existing + candidates`` in ONE BERTScore call, then filter.

    Returns the filter result and the two score matrices (kept for the report).
    """
    if not candidates:
        return FilterResult(), np.zeros((0, len(existing))), np.zeros((0, 0))
    full = scorer.matrix(candidates, existing + candidates)
    ce, cc = full[:, : len(existing)], full[:, len(existing) :]
    return greedy_filter(candidates, ce, cc, tau1, tau2), ce, cc


def violations(scores: np.ndarray, tau1: float, tau2: float) -> int:
    """Number of off-diagonal pairs of a square score matrix outside ``[tau1, tau2]``."""
    s = np.asarray(scores)
    mask = ~np.eye(s.shape[0], dtype=bool)
    return int(((s < tau1) | (s > tau2))[mask].sum())
