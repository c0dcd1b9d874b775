"""Variance a reader can trust: per-domain success with a 95 % interval, pass@k and pass^k over seeds.

``agentlab exec --seeds K`` runs each task K times (seeds ``seed .. seed+K-1``). From its rows
(:func:`seed_stats`), per domain and overall:

* **mean**: the mean over seeds of the per-seed success rate (with every (task, seed) present,
  the fraction of all episodes that succeeded).
* **95 % interval**, K ≥ 2: Student's t-interval over the K per-seed success rates,
  ``mean ± t(0.975, K-1) · sd / √K`` (clipped to [0, 1]). Each seed's rate is one replicate of
  the whole evaluation, so this says how far the score moves when the run is repeated with
  other seeds; the t quantile (12.7 for K=2, 4.30 for K=3) keeps it honest for small K, where a
  normal or bootstrap interval over 2-5 values is far too narrow. It does not cover the choice
  of tasks: a zero-width interval means every seed scored the same, not that the domain's
  score is known exactly. K = 1: the Wilson score interval over the tasks (successes of n
  Bernoulli trials), which stays inside [0, 1] and is sensible at 0 % and 100 % and small n,
  where the normal approximation is not.
* **pass@k** (at least one of k episodes succeeds) and **pass^k** (all k succeed), for k = 1..n,
  with the unbiased estimators over a task's n episodes of which c succeeded:
  ``pass@k = 1 - C(n-c, k) / C(n, k)`` and ``pass^k = C(c, k) / C(n, k)``, averaged over tasks.
  Both equal c/n at k = 1; pass@k never falls and pass^k never rises as k grows. k goes up to
  the fewest episodes any task of the group has (an interrupted run may have fewer for some).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

#: the row of :func:`seed_stats` that pools every domain
OVERALL = "overall"
#: two-sided 95 %: the normal quantile (Wilson) and Student's t quantiles for 1..30 degrees of freedom
Z95 = 1.959963984540054
T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
        2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
        2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)


def t_quantile_975(df: int) -> float:
    """Student's t 0.975 quantile: tabulated to 30 degrees of freedom, then the Cornish-Fisher
    expansion (within 2e-6 of the exact value from 31 on)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    if df <= len(T975):
        return T975[df - 1]
    z = Z95
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at 0 and n successes the bound is exactly 0 (or 1); rounding would leave it just off
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, low, high)``: the 95 % Student t-interval of the mean of ``values`` (at least 2),
    clipped to [0, 1] (the values are success rates)."""
    k = len(values)
    if k < 2:
        raise ValueError("a t-interval needs at least 2 values")
    mean = sum(values) / k
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (k - 1))
    half = t_quantile_975(k - 1) * sd / math.sqrt(k)
    return (mean, max(0.0, mean - half), min(1.0, mean + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task from n episodes with c successes: 1 - C(n-c, k) / C(n, k)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k episodes succeed) of one task: C(c, k) / C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


@dataclass
class SeedStats:
    """One domain's (or :data:`OVERALL`) success over seeds."""

    domain: str
    tasks: int
    seeds: int
    episodes: int
    mean: float
    ci_low: float
    ci_high: float
    #: "t" (t-interval over the per-seed rates, K >= 2) or "wilson" (over the tasks, K = 1)
    method: str
    pass_at: dict[int, float] = field(default_factory=dict)
    pass_hat: dict[int, float] = field(default_factory=dict)

    def line(self) -> str:
        """``calc: mean=0.667 95% CI [0.421, 0.912] (t over 3 seeds; 4 tasks) pass@3=0.750 pass^3=0.500``"""
        if self.method == "t":
            how = f"t over {self.seeds} seeds; {self.tasks} tasks"
        else:
            how = f"Wilson over {self.tasks} tasks; 1 seed"
        k = max(self.pass_at, default=0)
        passes = f" pass@{k}={self.pass_at[k]:.3f} pass^{k}={self.pass_hat[k]:.3f}" if k else ""
        return f"{self.domain}: mean={self.mean:.3f} 95% CI [{self.ci_low:.3f}, {self.ci_high:.3f}] ({how}){passes}"


def _stats(domain: str, rows: list[Mapping[str, Any]]) -> SeedStats:
    by_seed: dict[Any, list[bool]] = defaultdict(list)
    by_task: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        ok = bool(r.get("success"))
        by_seed[r.get("seed", 0)].append(ok)
        by_task[str(r.get("id"))].append(ok)
    rates = [sum(v) / len(v) for v in by_seed.values()]
    if len(rates) >= 2:
        mean, low, high = t_interval(rates)
        method = "t"
    else:
        wins = sum(bool(r.get("success")) for r in rows)
        mean = wins / len(rows)
        low, high = wilson_interval(wins, len(rows))
        method = "wilson"
    kmax = min(len(v) for v in by_task.values())
    counts = [(len(v), sum(v)) for v in by_task.values()]
    pass_at = {k: sum(pass_at_k(n, c, k) for n, c in counts) / len(counts) for k in range(1, kmax + 1)}
    pass_hat = {k: sum(pass_hat_k(n, c, k) for n, c in counts) / len(counts) for k in range(1, kmax + 1)}
    return SeedStats(domain=domain, tasks=len(by_task), seeds=len(rates), episodes=len(rows), mean=mean,
                     ci_low=low, ci_high=high, method=method, pass_at=pass_at, pass_hat=pass_hat)


def seed_stats(rows: Iterable[Mapping[str, Any]]) -> list[SeedStats]:
    """Per domain (sorted), then :data:`OVERALL`: mean success, its 95 % interval, pass@k and pass^k.

    ``rows`` are ``results.jsonl`` rows (``id``, ``domain``, ``seed``, ``success``); a (task, seed)
    appearing twice is a :class:`DataError` (a results file that mixes two runs).
    """
    rows = list(rows)
    if not rows:
        raise DataError("no result rows to compute statistics from")
    seen: set[tuple[Any, Any]] = set()
    for r in rows:
        key = (r.get("id"), r.get("seed", 0))
        if key in seen:
            raise DataError(f"task {key[0]} has two rows for seed {key[1]}; the results mix two runs")
        seen.add(key)
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[str(r.get("domain"))].append(r)
    return [_stats(d, g) for d, g in sorted(groups.items())] + [_stats(OVERALL, rows)]


def seed_stats_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """:func:`seed_stats` as a DataFrame: one row per domain (and ``overall``) with ``mean``,
    ``ci_low``, ``ci_high``, ``method`` and one ``pass@k`` / ``pass^k`` column per k."""
    import pandas as pd

    records = []
    for s in seed_stats(rows):
        rec: dict[str, Any] = {"domain": s.domain, "tasks": s.tasks, "seeds": s.seeds, "episodes": s.episodes,
                               "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high, "method": s.method}
        rec.update({f"pass@{k}": v for k, v in s.pass_at.items()})
        rec.update({f"pass^{k}": v for k, v in s.pass_hat.items()})
        records.append(rec)
    return pd.DataFrame.from_records(records)
