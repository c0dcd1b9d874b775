"""Threshold calibration (the Appendix D / Figure 7 analog) for OUR scoring model.

The paper picked tau1=0.8, tau2=0.9 from the distribution of pairwise BERTScores between real
same-domain tasks under its scorer. MiniLM layer-6 BERTScore lives on another scale (pairs of
real tasks score ~0.1-0.5), so those numbers do not transfer: we recompute the distribution on
the pool's hand-written demonstrations, per domain, and take its central ``coverage`` band.

Because Algorithm 1 demands the band against *every* item of a growing set, a band that holds
95% of random real pairs is violated by almost every candidate once the set nears 100 items.
:func:`acceptance_curve` replays Algorithm 1 on a fixed pool of real generated candidates for
several coverages so the band can be chosen for the target set size, and the choice reported.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from agentlab.pool import AgentPool
from agentlab.selfinstruct.config import Band, SelfInstructConfig, Thresholds
from agentlab.selfinstruct.filter import greedy_filter
from agentlab.selfinstruct.leakage import leakage_tasks
from agentlab.selfinstruct.scorer import load_scorer
from agentlab.llm.similarity import SimilarityScorer

log = logging.getLogger(__name__)


@dataclass
class PairwiseDistribution:
    """Pairwise BERTScores (i<j) between hand-written demonstrations of one domain."""

    domain: str
    agents: list[str]
    n_items: int
    scores: np.ndarray

    def band(self, coverage: float) -> Band:
        lo = (1.0 - coverage) / 2.0
        q1, q2 = np.quantile(self.scores, [lo, 1.0 - lo]) if self.scores.size else (0.0, 1.0)
        return Band(tau1=round(float(q1), 4), tau2=round(float(q2), 4))

    def summary(self) -> dict[str, float | int | str]:
        s = self.scores
        return {
            "domain": self.domain,
            "items": self.n_items,
            "pairs": int(s.size),
            "mean": float(s.mean()),
            "p2.5": float(np.quantile(s, 0.025)),
            "p97.5": float(np.quantile(s, 0.975)),
            "min": float(s.min()),
            "max": float(s.max()),
        }


def pairwise_distribution(pool: AgentPool, scorer: SimilarityScorer) -> dict[str, PairwiseDistribution]:
    """Per-domain distribution of pairwise BERTScores of the pool's hand-written demonstrations.

    All domains are scored in one batched call (every demo against every demo), then the
    same-domain upper triangles are read out. This is what notebook 01 plots (Figure 7 analog).
    """
    texts: list[str] = []
    domain_of: list[str] = []
    for agent in pool:
        for d in agent.demonstrations:
            texts.append(d.text)
            domain_of.append(agent.domain)
    # Score each domain block separately: same-domain pairs are all we need.
    out: dict[str, PairwiseDistribution] = {}
    for domain, names in pool.by_domain().items():
        idx = [i for i, d in enumerate(domain_of) if d == domain]
        items = [texts[i] for i in idx]
        mat = scorer.matrix(items, items)
        iu = np.triu_indices(len(items), k=1)
        out[domain] = PairwiseDistribution(domain, list(names), len(items), np.asarray(mat)[iu])
    return out


def calibrate(
    pool: AgentPool,
    scorer: SimilarityScorer,
    *,
    coverage: float = 0.99,
    per_domain: bool = True,
    leakage_tau: float | None = None,
    leakage_quantile: float = 0.99,
    benchmark_tasks: list[str] | None = None,
    target_size: int | None = None,
    distributions: dict[str, PairwiseDistribution] | None = None,
) -> Thresholds:
    """Thresholds from the pool's same-domain pairwise distribution.

    The global band is the central ``coverage`` band of all same-domain pairs pooled; per-domain
    bands (when ``per_domain``) use each domain's own pairs. ``leakage_tau`` defaults to the
    ``leakage_quantile`` of the hand-written demonstrations' nearest-benchmark-task scores: a
    generated task may be no closer to a test task than 99% of the human-written ones are.
    """
    dists = distributions or pairwise_distribution(pool, scorer)
    if leakage_tau is None:
        leakage_tau = leakage_calibration(pool, scorer, benchmark_tasks, leakage_quantile)
    allpairs = np.concatenate([d.scores for d in dists.values()])
    glob = PairwiseDistribution("*", pool.names, sum(d.n_items for d in dists.values()), allpairs).band(coverage)
    desc = scorer.describe()
    return Thresholds(
        scorer=str(desc["scorer"]),
        num_layers=int(desc["num_layers"]),
        tau1=glob.tau1,
        tau2=glob.tau2,
        leakage_tau=float(leakage_tau),
        per_domain={k: v.band(coverage) for k, v in dists.items()} if per_domain else {},
        coverage=coverage,
        target_size=target_size,
    )


def leakage_calibration(
    pool: AgentPool, scorer: SimilarityScorer, tasks: list[str] | None = None, quantile: float = 0.99
) -> float:
    """Quantile of each hand-written demo's highest BERTScore against any test task
    (:func:`agentlab.selfinstruct.leakage.leakage_tasks` unless ``tasks`` is given)."""
    if tasks is None:
        tasks = leakage_tasks()
    seeds = [d.text for a in pool for d in a.demonstrations]
    nearest = scorer.matrix(seeds, list(dict.fromkeys(tasks))).max(axis=1)
    return round(float(np.quantile(nearest, quantile)), 4)


@dataclass
class CurvePoint:
    candidates_seen: int
    set_size: int


@dataclass
class AcceptanceCurve:
    """Set size reached as real candidates are fed through Algorithm 1 in rounds."""

    coverage: float
    band: Band
    points: list[CurvePoint] = field(default_factory=list)

    @property
    def final_size(self) -> int:
        return self.points[-1].set_size if self.points else 0


def replay(
    seeds_scores: np.ndarray,
    cand_seed_scores: np.ndarray,
    cand_cand_scores: np.ndarray,
    band: Band,
    round_size: int,
) -> list[CurvePoint]:
    """Replay the iterative pipeline (Algorithm 1 per round, S_i grows) on precomputed scores.

    ``seeds_scores`` is unused by the algorithm (seeds are never re-checked) but fixes ``n``.
    """
    n_seeds = seeds_scores.shape[0]
    m = cand_seed_scores.shape[0]
    accepted: list[int] = []
    points = [CurvePoint(0, n_seeds)]
    for start in range(0, m, round_size):
        batch = list(range(start, min(m, start + round_size)))
        # existing = seeds + accepted so far, as columns
        ce = np.concatenate([cand_seed_scores[batch], cand_cand_scores[np.ix_(batch, accepted)]], axis=1)
        cc = cand_cand_scores[np.ix_(batch, batch)]
        res = greedy_filter([str(i) for i in batch], ce, cc, band.tau1, band.tau2)
        accepted.extend(batch[i] for i in res.accepted)
        points.append(CurvePoint(batch[-1] + 1, n_seeds + len(accepted)))
    return points


def acceptance_curve(
    seeds: list[str],
    candidates: list[str],
    scorer: SimilarityScorer,
    bands: dict[float, Band],
    round_size: int = 48,
) -> list[AcceptanceCurve]:
    """For each coverage's band, how large the set grows on the same real candidates.

    One BERTScore call scores candidates against seeds and against each other; each band is
    then a cheap replay of the pipeline on those numbers.
    """
    full = scorer.matrix(candidates, seeds + candidates)
    cs, cc = full[:, : len(seeds)], full[:, len(seeds) :]
    ss = np.zeros((len(seeds), len(seeds)))
    return [AcceptanceCurve(cov, band, replay(ss, cs, cc, band, round_size)) for cov, band in sorted(bands.items())]


def domain_distributions(pool: AgentPool | None = None, scorer: SimilarityScorer | None = None) -> dict[str, PairwiseDistribution]:
    """Figure-7 analog for notebooks: per-domain pairwise BERTScores of the pool's own demos."""
    if scorer is None:
        scorer = load_scorer(SelfInstructConfig())
    return pairwise_distribution(pool or AgentPool.from_dir(), scorer)
