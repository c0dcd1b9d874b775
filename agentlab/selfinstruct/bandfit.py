"""Per-domain bands fitted to the target set size: widen a short domain's band only as far as needed.

A domain with one agent has 12 hand-written demonstrations, so its calibrated band is read off
66 pairwise scores: the 0.5% / 99.5% quantiles are then little more than the sample's min and
max, which understate how far real same-domain pairs spread. Algorithm 1 asks a new row to lie in
the band against *every* row already kept, so such a band stops the set long before the target
(GmailAgent: 35 of 100 after 20 rounds, 3.8% acceptance).

The fit keeps the algorithm and changes only the estimate of the band, for the domains whose
agents are short of the target:

1. **Pooled shape.** Domains differ mainly in where their pair scores sit, less in how widely
   they spread. :func:`pooled_shape_band` centres the quantiles of *all* same-domain pairs of the
   pool (each taken around its own domain's median: thousands of pairs) on the domain's median.
2. **Ladder.** The candidates are the domain's own band, then its union with the pooled-shape
   band at increasing coverage (:data:`LADDER`). A union only widens, so rows accepted before
   stay inside the band of every later round (the journal refuses a narrowing revision).
3. **Replay.** Each band is tried by replaying Algorithm 1, round by round, on the candidates the
   domain's short agents already produced (their journal, minus those the quality check drops),
   starting from the seeds. The narrowest band whose replay reaches the target for every short
   agent of the domain is chosen. When none does, the recorded candidates, not the band, are
   what is short: the domain keeps its own band (more rounds are the remedy), and the fit says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from agentlab.selfinstruct.calibrate import PairwiseDistribution, replay
from agentlab.selfinstruct.config import Band, Thresholds
from agentlab.llm.similarity import SimilarityScorer

log = logging.getLogger(__name__)

#: coverages of the pooled-shape band tried after the domain's own band, narrowest first
LADDER = (0.99, 0.995, 0.999)


def pooled_shape_band(dists: dict[str, PairwiseDistribution], domain: str, coverage: float) -> Band:
    """The domain's median pair score plus the pooled central ``coverage`` band of deviations."""
    devs = np.concatenate([d.scores - np.median(d.scores) for d in dists.values() if d.scores.size])
    lo = (1.0 - coverage) / 2.0
    q1, q2 = np.quantile(devs, [lo, 1.0 - lo])
    med = float(np.median(dists[domain].scores))
    return Band(tau1=round(med + float(q1), 4), tau2=round(med + float(q2), 4))


def union(a: Band, b: Band) -> Band:
    return Band(tau1=min(a.tau1, b.tau1), tau2=max(a.tau2, b.tau2))


def ladder(own: Band, dists: dict[str, PairwiseDistribution], domain: str) -> list[tuple[str, Band]]:
    """The bands tried for ``domain``, narrowest first (each contains the one before)."""
    out = [("own", own)]
    for cov in LADDER:
        band = union(out[-1][1], pooled_shape_band(dists, domain, cov))
        out.append((f"own ∪ pooled {cov}", band))
    return out


@dataclass
class AgentSample:
    """What one short agent's replay starts from: its seeds and its recorded candidates, in order."""

    agent: str
    seeds: list[str]
    candidates: list[str]


@dataclass
class BandFit:
    """The choice for one domain: every rung's replayed set size per short agent, and the pick."""

    domain: str
    target: int
    chosen: str
    band: Band
    #: rung label -> {agent: set size the replay reached}
    reached: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def met(self) -> bool:
        return all(v >= self.target for v in self.reached[self.chosen].values())

    def describe(self) -> str:
        sizes = "; ".join(
            f"{label}: " + ", ".join(f"{a} {n}" for a, n in r.items()) for label, r in self.reached.items()
        )
        if self.met:
            return f"{self.chosen} [{self.band.tau1}, {self.band.tau2}] reaches {self.target} in replay ({sizes})"
        return (
            f"no rung reaches {self.target} in replay, so the own band [{self.band.tau1}, {self.band.tau2}] stays "
            f"({sizes})"
        )


def replay_sizes(
    samples: list[AgentSample], bands: list[tuple[str, Band]], scorer: SimilarityScorer, round_size: int
) -> dict[str, dict[str, int]]:
    """Set size each agent reaches under each band (one BERTScore matrix per agent)."""
    out: dict[str, dict[str, int]] = {label: {} for label, _ in bands}
    for s in samples:
        if not s.candidates:
            for label, _ in bands:
                out[label][s.agent] = len(s.seeds)
            continue
        full = np.asarray(scorer.matrix(s.candidates, s.seeds + s.candidates))
        cs, cc = full[:, : len(s.seeds)], full[:, len(s.seeds) :]
        ss = np.zeros((len(s.seeds), len(s.seeds)))
        for label, band in bands:
            out[label][s.agent] = replay(ss, cs, cc, band, round_size)[-1].set_size
    return out


def fit_domain(
    domain: str,
    own: Band,
    samples: list[AgentSample],
    dists: dict[str, PairwiseDistribution],
    scorer: SimilarityScorer,
    target: int,
    round_size: int = 30,
) -> BandFit:
    """The narrowest rung of :func:`ladder` whose replay reaches ``target`` for every sample
    (the domain's own band when none does)."""
    rungs = ladder(own, dists, domain)
    reached = replay_sizes(samples, rungs, scorer, round_size)
    for label, band in rungs:
        if all(n >= target for n in reached[label].values()):
            return BandFit(domain, target, label, band, reached)
    return BandFit(domain, target, "own", own, reached)


def fit_thresholds(
    thresholds: Thresholds,
    samples_by_domain: dict[str, list[AgentSample]],
    dists: dict[str, PairwiseDistribution],
    scorer: SimilarityScorer,
    target: int,
    round_size: int = 30,
) -> tuple[Thresholds, list[BandFit]]:
    """``thresholds`` with the band of every domain in ``samples_by_domain`` fitted to ``target``.

    Other domains keep their band. The record says which rung each fitted domain got
    (``fitted``), so a reader of ``thresholds.json`` sees that the band was widened and why.
    """
    per_domain = dict(thresholds.per_domain)
    fitted = dict(thresholds.fitted or {})
    fits = []
    for domain, samples in sorted(samples_by_domain.items()):
        fit = fit_domain(domain, thresholds.band(domain), samples, dists, scorer, target, round_size)
        log.info("band for %s: %s", domain, fit.describe())
        fits.append(fit)
        if fit.chosen != "own":
            per_domain[domain] = fit.band
            fitted[domain] = fit.describe()
    return thresholds.model_copy(update={"per_domain": per_domain, "fitted": fitted or None}), fits
