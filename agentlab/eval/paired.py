"""Paired comparison of two runs on the tasks both ran: McNemar's exact test and a paired bootstrap.

Why paired: two configurations run on the same tasks are compared task by task. Tasks differ far
more in difficulty than the configurations do, so comparing two overall rates (two independent
samples) throws away most of the information and needs many more tasks to see anything; pairing
keeps each task's difficulty out of the difference.

* **Which pairs** (:func:`pair_outcomes`). When the runs share seeds, the pairs are (task, seed)
  on those shared seeds (both runs saw the same seed of the same task); when they share none
  (``--seed 0`` against ``--seed 1``), the pairs are tasks, each run's episodes of the task
  pooled. A pair is *excluded* when either run has a harness error on it (the task was not
  judged: an environment error, not the agent's): a (task, seed) with shared seeds, the whole
  task otherwise. What only one run ran is counted, never compared.
* **McNemar's exact test** (:func:`mcnemar`), when every task has exactly one outcome per run:
  only the discordant tasks (A succeeded and B failed, or the reverse) carry information; under
  "no difference" each is equally likely to go either way, so the count of "only B succeeded"
  among the n discordant tasks is Binomial(n, 1/2). The two-sided p-value is
  ``min(1, 2 · P(X ≤ min(b, c)))``, computed exactly with integers (no normal approximation,
  which is poor for the few discordant tasks an agent benchmark has).
* **The paired bootstrap** (:func:`paired_bootstrap`) of the difference B − A in ExecutionAcc
  (a task's score: the mean of its episodes; the difference: the mean over tasks of B's score
  minus A's): tasks are resampled with replacement and, when a task has several seeds, its
  seeds within each resampled task (the two-stage bootstrap of a nested design: tasks are
  one source of variation, seeds another), together for both runs when the seeds are paired.
  The 95 % interval is the 2.5th and 97.5th percentiles of the resampled differences; its
  p-value (used when McNemar does not apply) is twice the smaller share of resampled
  differences on either side of zero. The generator is seeded, so the same inputs give the same
  interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agentlab.errors import ConfigError, DataError

#: the domain of a row that records none (rows of early versions)
NO_DOMAIN = "(no domain)"
#: resampled differences computed at once (bounds the memory of the seed level to ~ chunk·tasks·seeds)
_CHUNK = 500


@dataclass(frozen=True)
class Outcome:
    """One episode of one run, as the comparison needs it."""

    id: str
    seed: int
    domain: str
    success: bool
    harness_error: bool = False


@dataclass(frozen=True)
class PairedTask:
    """A task both runs ran, with each run's outcomes (seed order; position i of ``a`` and ``b`` is
    the same seed when :attr:`Pairing.by` is ``"task and seed"``)."""

    id: str
    domain: str
    a: tuple[bool, ...]
    b: tuple[bool, ...]

    @property
    def score_a(self) -> float:
        return sum(self.a) / len(self.a)

    @property
    def score_b(self) -> float:
        return sum(self.b) / len(self.b)


@dataclass(frozen=True)
class Pairing:
    """What the two runs have in common and what was left out of the comparison."""

    tasks: list[PairedTask]
    #: "task and seed" (shared seeds paired) or "task" (no seed in common: each run's seeds pooled)
    by: str
    shared_seeds: list[int]
    #: task ids only one run ran (on the seeds compared)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    #: what was excluded for a harness error in either run: "id" or "id (seed s)"
    excluded: list[str] = field(default_factory=list)

    @property
    def seeds_paired(self) -> bool:
        return self.by == "task and seed"

    @property
    def one_outcome_each(self) -> bool:
        """Every task has one outcome per run: McNemar's test applies."""
        return all(len(t.a) == 1 and len(t.b) == 1 for t in self.tasks)

    @property
    def episodes(self) -> int:
        return sum(len(t.a) for t in self.tasks)


@dataclass(frozen=True)
class McNemar:
    """The 2×2 table of paired outcomes and McNemar's exact two-sided p-value."""

    both: int
    only_a: int  #: A succeeded, B failed
    only_b: int  #: B succeeded, A failed
    neither: int
    p_value: float


@dataclass(frozen=True)
class BootstrapDiff:
    """B − A in ExecutionAcc (fractions) with its paired-bootstrap 95 % interval."""

    diff: float
    low: float
    high: float
    p_value: float
    resamples: int
    seed: int


def _group(outcomes: Iterable[Outcome], which: str) -> dict[str, dict[int, Outcome]]:
    out: dict[str, dict[int, Outcome]] = defaultdict(dict)
    for o in outcomes:
        if o.seed in out[o.id]:
            raise DataError(f"run {which}: task {o.id} has two rows for seed {o.seed}; the results mix two runs")
        out[o.id][o.seed] = o
    return dict(out)


def pair_outcomes(a: Iterable[Outcome], b: Iterable[Outcome]) -> Pairing:
    """The pairs of runs ``a`` and ``b`` (see the module docstring). Raises :class:`DataError`
    when they have no task in common, or every shared one had a harness error."""
    ga, gb = _group(a, "A"), _group(b, "B")
    seeds_a = {s for d in ga.values() for s in d}
    seeds_b = {s for d in gb.values() for s in d}
    shared_seeds = sorted(seeds_a & seeds_b)
    by = "task and seed" if shared_seeds else "task"
    if shared_seeds:  # compare on the seeds both ran
        keep = set(shared_seeds)
        ga = {t: {s: o for s, o in d.items() if s in keep} for t, d in ga.items()}
        gb = {t: {s: o for s, o in d.items() if s in keep} for t, d in gb.items()}
        ga, gb = {t: d for t, d in ga.items() if d}, {t: d for t, d in gb.items() if d}
    tasks: list[PairedTask] = []
    excluded: list[str] = []
    only_a, only_b = sorted(set(ga) - set(gb)), sorted(set(gb) - set(ga))
    for tid in sorted(set(ga) & set(gb)):
        ra, rb = ga[tid], gb[tid]
        if shared_seeds:
            units = sorted(set(ra) & set(rb))
            if not units:  # each run ran other seeds of this task (an interrupted run)
                only_a.append(tid)
                only_b.append(tid)
                continue
            kept = []
            for s in units:
                if ra[s].harness_error or rb[s].harness_error:
                    excluded.append(f"{tid} (seed {s})" if len(shared_seeds) > 1 else tid)
                else:
                    kept.append(s)
            if kept:
                tasks.append(PairedTask(tid, ra[kept[0]].domain, tuple(ra[s].success for s in kept),
                                        tuple(rb[s].success for s in kept)))
        elif any(o.harness_error for o in (*ra.values(), *rb.values())):
            excluded.append(tid)
        else:
            tasks.append(PairedTask(tid, next(iter(ra.values())).domain, tuple(ra[s].success for s in sorted(ra)),
                                    tuple(rb[s].success for s in sorted(rb))))
    if not tasks and not excluded:
        raise DataError("the runs have no task in common; nothing to compare")
    if not tasks:
        raise DataError(f"every task the runs have in common ({len(excluded)}) had a harness error in one of them; "
                        "nothing to compare")
    return Pairing(tasks=tasks, by=by, shared_seeds=shared_seeds, only_a=sorted(set(only_a)),
                   only_b=sorted(set(only_b)), excluded=excluded)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact two-sided p-value from the discordant counts: ``min(1, 2·P(X ≤ min))`` with
    X ~ Binomial(only_a + only_b, 1/2); 1 when there is no discordant pair."""
    if only_a < 0 or only_b < 0:
        raise ValueError("counts must be >= 0")
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1))
    # exact in integers, one division at the end (2**n overflows no float for n < 1024;
    # beyond, Python's int/int true division is still correctly rounded)
    return min(1.0, 2 * tail / 2**n)


def mcnemar(tasks: Sequence[PairedTask]) -> McNemar:
    """McNemar's exact test over tasks with one outcome per run (:attr:`Pairing.one_outcome_each`)."""
    if not all(len(t.a) == 1 and len(t.b) == 1 for t in tasks):
        raise ValueError("McNemar's test needs one outcome per task and run")
    both = sum(t.a[0] and t.b[0] for t in tasks)
    only_a = sum(t.a[0] and not t.b[0] for t in tasks)
    only_b = sum(t.b[0] and not t.a[0] for t in tasks)
    return McNemar(both=both, only_a=only_a, only_b=only_b, neither=len(tasks) - both - only_a - only_b,
                   p_value=mcnemar_exact(only_a, only_b))


def _padded(rows: Sequence[tuple[bool, ...]]) -> tuple[np.ndarray, np.ndarray]:
    counts = np.array([len(r) for r in rows], dtype=np.int64)
    out = np.zeros((len(rows), int(counts.max())), dtype=np.float64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out, counts


def _seed_means(values: np.ndarray, counts: np.ndarray, idx: np.ndarray, draw: np.ndarray) -> np.ndarray:
    """Per resample and drawn task, the mean over its drawn seeds (positions ``draw``, of which the
    first ``counts[task]`` count)."""
    k = counts[idx]
    taken = values[idx[..., None], draw]
    mask = np.arange(values.shape[1]) < k[..., None]
    return np.asarray((taken * mask).sum(axis=-1) / k)


def paired_bootstrap(tasks: Sequence[PairedTask], *, resamples: int = 2000, seed: int = 0,
                     seeds_paired: bool = True) -> BootstrapDiff:
    """The difference B − A in ExecutionAcc over ``tasks`` with its paired-bootstrap 95 % interval
    (see the module docstring). ``seeds_paired``: position i of a task's ``a`` and ``b`` is the
    same seed, so the seeds are resampled together."""
    if resamples < 1:
        raise ConfigError(f"--bootstrap must be at least 1, not {resamples}")
    if not tasks:
        raise DataError("no paired task to resample")
    if seeds_paired and any(len(t.a) != len(t.b) for t in tasks):
        raise ValueError("paired seeds need as many outcomes of each run per task")
    n = len(tasks)
    va, ca = _padded([t.a for t in tasks])
    vb, cb = _padded([t.b for t in tasks])
    observed = float(np.mean([t.score_b - t.score_a for t in tasks]))
    rng = np.random.default_rng(seed)
    several = bool(ca.max() > 1 or cb.max() > 1)
    diffs = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _CHUNK):
        m = min(_CHUNK, resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        if not several:
            d = vb[idx, 0] - va[idx, 0]
        else:
            ua = rng.random((m, n, va.shape[1]))
            draw_a = (ua * ca[idx][..., None]).astype(np.int64)
            draw_b = draw_a if seeds_paired else (rng.random((m, n, vb.shape[1])) * cb[idx][..., None]).astype(np.int64)
            d = _seed_means(vb, cb, idx, draw_b) - _seed_means(va, ca, idx, draw_a)
        diffs[start:start + m] = d.mean(axis=1)
    low, high = (float(x) for x in np.percentile(diffs, [2.5, 97.5]))
    # ties at zero count on both sides, so identical runs get p = 1
    p = min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))
    return BootstrapDiff(diff=observed, low=low, high=high, p_value=p, resamples=resamples, seed=seed)
