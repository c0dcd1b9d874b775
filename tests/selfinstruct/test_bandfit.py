"""Bands fitted to the target set size: the pooled-shape band, the ladder (only ever wider), and
the replay that picks the narrowest rung reaching the target."""

from __future__ import annotations

import numpy as np

from agentlab.selfinstruct.bandfit import AgentSample, fit_domain, fit_thresholds, ladder, pooled_shape_band
from agentlab.selfinstruct.calibrate import PairwiseDistribution
from agentlab.selfinstruct.config import Band, Thresholds


def _dists() -> dict[str, PairwiseDistribution]:
    rng = np.random.default_rng(0)
    wide = rng.normal(0.25, 0.10, 5000)  # a well-sampled domain
    narrow = np.linspace(0.28, 0.36, 66)  # 12 seeds: 66 pairs, sample spread far too small
    return {"big": PairwiseDistribution("big", ["A"], 100, wide), "small": PairwiseDistribution("small", ["B"], 12, narrow)}


def test_pooled_shape_band_is_centred_on_the_domain_median() -> None:
    dists = _dists()
    band = pooled_shape_band(dists, "small", 0.99)
    assert band.tau1 < 0.28 and band.tau2 > 0.36  # the pooled spread, not the 66 pairs' range
    mid = (band.tau1 + band.tau2) / 2
    assert abs(mid - float(np.median(dists["small"].scores))) < 0.05


def test_ladder_only_widens() -> None:
    own = Band(tau1=0.30, tau2=0.35)
    rungs = ladder(own, _dists(), "small")
    assert rungs[0] == ("own", own)
    for (_, a), (_, b) in zip(rungs, rungs[1:]):
        assert b.tau1 <= a.tau1 and b.tau2 >= a.tau2
    assert rungs[-1][1].tau2 > rungs[1][1].tau2


class NumberScorer:
    """BERTScore stand-in for the selection logic: texts are numbers, a pair scores 1 - |a - b|."""

    def matrix(self, a: list[str], b: list[str]) -> np.ndarray:
        x, y = np.array([float(t) for t in a]), np.array([float(t) for t in b])
        return 1.0 - np.abs(x[:, None] - y[None, :])


def test_fit_picks_the_narrowest_rung_that_reaches_the_target() -> None:
    dists = {"d": PairwiseDistribution("d", ["A"], 3, np.array([0.80, 0.85, 0.90]))}
    seeds = ["0.50", "0.55", "0.60"]
    cands = [f"{v:.3f}" for v in np.linspace(0.40, 0.72, 17)]
    own = Band(tau1=0.88, tau2=1.0)  # only candidates within 0.12 of every item: few fit
    fit = fit_domain("d", own, [AgentSample("A", seeds, cands)], dists, NumberScorer(), target=12, round_size=5)
    sizes = {label: r["A"] for label, r in fit.reached.items()}
    assert sizes["own"] < 12 and fit.chosen != "own" and fit.met
    labels = list(fit.reached)
    # every rung before the chosen one fell short
    assert all(sizes[label] < 12 for label in labels[: labels.index(fit.chosen)])
    unreachable = fit_domain("d", own, [AgentSample("A", seeds, cands)], dists, NumberScorer(), target=500)
    # no rung gets there on these candidates: the band is not what is short, so it stays
    assert unreachable.chosen == "own" and unreachable.band == own and not unreachable.met
    assert "no rung reaches 500" in unreachable.describe()


def test_fit_thresholds_touches_only_short_domains_and_never_narrows() -> None:
    dists = {
        "d": PairwiseDistribution("d", ["A"], 3, np.array([0.80, 0.85, 0.90])),
        "e": PairwiseDistribution("e", ["B"], 3, np.array([0.70, 0.75, 0.80])),
    }
    th = Thresholds(scorer="s", num_layers=6, tau1=0.5, tau2=1.0, leakage_tau=0.9,
                    per_domain={"d": Band(tau1=0.88, tau2=1.0), "e": Band(tau1=0.7, tau2=0.8)})
    cands = [f"{v:.3f}" for v in np.linspace(0.40, 0.72, 17)]
    new, fits = fit_thresholds(th, {"d": [AgentSample("A", ["0.50", "0.55", "0.60"], cands)]}, dists, NumberScorer(), 12, 5)
    assert [f.domain for f in fits] == ["d"]
    assert new.per_domain["e"] == th.per_domain["e"]
    d_old, d_new = th.per_domain["d"], new.per_domain["d"]
    assert d_new.tau1 <= d_old.tau1 and d_new.tau2 >= d_old.tau2 and d_new != d_old
    assert new.fitted is not None and set(new.fitted) == {"d"} and "reaches 12" in new.fitted["d"]
    assert Thresholds(**new.model_dump()).fitted == new.fitted  # round-trips through thresholds.json
