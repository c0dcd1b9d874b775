"""Paired comparison statistics: McNemar's exact test by hand, the paired bootstrap, and which tasks are paired."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.errors import DataError
from agentlab.eval.paired import (
    Outcome,
    PairedTask,
    mcnemar,
    mcnemar_exact,
    pair_outcomes,
    paired_bootstrap,
)


def outcomes(table: dict[str, list[bool | None]], domain: str = "calc", errors: frozenset[tuple[str, int]] = frozenset(),
             first_seed: int = 0) -> list[Outcome]:
    """{task id: [success per seed first_seed, first_seed+1, ...]} (None: no row for that seed) -> outcomes."""
    return [Outcome(tid, first_seed + s, domain, bool(ok), (tid, first_seed + s) in errors)
            for tid, oks in table.items() for s, ok in enumerate(oks) if ok is not None]


def singles(pairs: list[tuple[bool, bool]]) -> list[PairedTask]:
    return [PairedTask(f"t{i}", "calc", (a,), (b,)) for i, (a, b) in enumerate(pairs)]


@pytest.mark.parametrize(
    ("only_a", "only_b", "p"),
    [
        (1, 6, 16 / 128),  # n=7: P(X<=1) = (C(7,0)+C(7,1))/2^7 = 8/128, two-sided twice that
        (0, 5, 2 / 32),  # n=5: P(X=0) = 1/32
        (2, 10, 2 * (1 + 12 + 66) / 4096),  # n=12: 0.0386, the textbook "significant at 5 %" case
        (3, 3, 1.0),  # balanced: 2*P(X<=3) > 1 is capped at 1
        (0, 0, 1.0),  # no discordant pair: nothing to test
    ],
)
def test_mcnemar_exact_by_hand(only_a: int, only_b: int, p: float) -> None:
    assert mcnemar_exact(only_a, only_b) == pytest.approx(p, rel=1e-12)
    assert mcnemar_exact(only_b, only_a) == mcnemar_exact(only_a, only_b)


def test_mcnemar_exact_agrees_with_scipy() -> None:
    binomtest = pytest.importorskip("scipy.stats").binomtest
    for a in range(0, 25, 3):
        for b in range(0, 25, 4):
            if a + b:
                assert mcnemar_exact(a, b) == pytest.approx(binomtest(a, a + b, 0.5).pvalue, rel=1e-9), (a, b)
    # many discordant pairs: exact integers, no overflow, still a probability
    assert 0 < mcnemar_exact(480, 560) < 0.02


def test_mcnemar_counts_the_table() -> None:
    tasks = singles([(True, True)] * 3 + [(True, False)] * 1 + [(False, True)] * 6 + [(False, False)] * 2)
    m = mcnemar(tasks)
    assert (m.both, m.only_a, m.only_b, m.neither) == (3, 1, 6, 2)
    assert m.p_value == pytest.approx(16 / 128)
    with pytest.raises(ValueError, match="one outcome per task"):
        mcnemar([PairedTask("x", "calc", (True, False), (True, True))])


def test_bootstrap_contains_the_observed_difference_and_repeats_with_its_seed() -> None:
    tasks = singles([(True, True)] * 9 + [(False, True)] * 10 + [(True, False)] * 1 + [(False, False)] * 10)
    one = paired_bootstrap(tasks, resamples=2000, seed=7)
    assert one.diff == pytest.approx(9 / 30)  # B − A = (19 − 10) / 30
    assert one.low < one.diff < one.high
    assert 0 < one.low and one.high < 0.55  # 10 tasks won against 1 lost: clearly positive (McNemar p = 0.012)
    assert paired_bootstrap(tasks, resamples=2000, seed=7) == one  # the seed fixes the interval
    other = paired_bootstrap(tasks, resamples=2000, seed=8)
    assert (other.low, other.high) != (one.low, one.high) and other.diff == one.diff
    assert one.p_value < 0.05


def test_identical_runs_differ_by_nothing() -> None:
    tasks = singles([(True, True)] * 4 + [(False, False)] * 3)
    b = paired_bootstrap(tasks, resamples=500, seed=0)
    assert (b.diff, b.low, b.high, b.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_bootstrap_over_seeds_resamples_within_tasks() -> None:
    # every task: A succeeds on 1 of 3 seeds, B on 2 of 3 -> B − A = 1/3 exactly, but seeds vary
    tasks = [PairedTask(f"t{i}", "os", (True, False, False), (True, True, False)) for i in range(12)]
    b = paired_bootstrap(tasks, resamples=1000, seed=1, seeds_paired=True)
    assert b.diff == pytest.approx(1 / 3)
    assert b.low < 1 / 3 < b.high  # the seed level adds width a task-only bootstrap would not have
    assert paired_bootstrap(tasks, resamples=1000, seed=1, seeds_paired=True) == b
    unpaired = paired_bootstrap(tasks, resamples=1000, seed=1, seeds_paired=False)
    assert unpaired.diff == b.diff and unpaired.low < unpaired.diff < unpaired.high


def test_pairing_takes_the_intersection_and_leaves_out_harness_errors() -> None:
    a = outcomes({"t1": [True], "t2": [False], "t3": [True], "t4": [False], "t5": [True]})
    b = outcomes({"t3": [False], "t4": [True], "t5": [True], "t6": [True], "t7": [False]}, errors=frozenset({("t4", 0)}))
    p = pair_outcomes(a, b)
    assert [t.id for t in p.tasks] == ["t3", "t5"] and p.by == "task and seed" and p.shared_seeds == [0]
    assert p.excluded == ["t4"] and p.only_a == ["t1", "t2"] and p.only_b == ["t6", "t7"]
    assert p.one_outcome_each and [(t.a, t.b) for t in p.tasks] == [((True,), (False,)), ((True,), (True,))]
    # a harness error in the baseline excludes the task just the same
    p2 = pair_outcomes(outcomes({"t3": [True], "t5": [True]}, errors=frozenset({("t5", 0)})), b)
    assert [t.id for t in p2.tasks] == ["t3"] and p2.excluded == ["t5"]


def test_pairing_by_task_and_seed_on_the_shared_seeds() -> None:
    # A ran seeds 0-2, B seeds 1-3: compared on seeds 1 and 2, (task, seed) by (task, seed)
    a = outcomes({"x": [True, False, True], "y": [False, False, True], "z": [True, True, True]})
    b = outcomes({"x": [True, True, False], "y": [True, False, True], "z": [None, None, True]}, first_seed=1,
                 errors=frozenset({("x", 2)}))
    p = pair_outcomes(a, b)
    assert p.by == "task and seed" and p.shared_seeds == [1, 2] and p.seeds_paired
    assert p.excluded == ["x (seed 2)"]
    by_id = {t.id: t for t in p.tasks}
    assert (by_id["x"].a, by_id["x"].b) == ((False,), (True,))  # seed 1 only (seed 2 excluded)
    assert (by_id["y"].a, by_id["y"].b) == ((False, True), (True, False))  # seeds 1 and 2, in seed order
    assert p.only_a == ["z"] and not p.only_b  # B ran z on seed 3 only, which A did not run
    assert not p.one_outcome_each and p.episodes == 3


def test_runs_without_a_common_seed_are_paired_by_task() -> None:
    a = outcomes({"x": [True], "y": [False]})
    b = outcomes({"x": [False, True], "y": [True, True]}, first_seed=5)
    p = pair_outcomes(a, b)
    assert p.by == "task" and not p.seeds_paired and p.shared_seeds == []
    assert [(t.a, t.b) for t in p.tasks] == [((True,), (False, True)), ((False,), (True, True))]
    boot = paired_bootstrap(p.tasks, resamples=200, seed=0, seeds_paired=False)
    assert boot.diff == pytest.approx(((0.5 - 1) + (1 - 0)) / 2)


def test_what_cannot_be_compared_is_one_clear_error() -> None:
    with pytest.raises(DataError, match="no task in common"):
        pair_outcomes(outcomes({"x": [True]}), outcomes({"y": [True]}))
    with pytest.raises(DataError, match=r"every task the runs have in common \(1\) had a harness error"):
        pair_outcomes(outcomes({"x": [True]}), outcomes({"x": [True]}, errors=frozenset({("x", 0)})))
    with pytest.raises(DataError, match="task x has two rows for seed 0; the results mix two runs"):
        pair_outcomes(outcomes({"x": [True]}) * 2, outcomes({"x": [True]}))


pairs_strategy = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(pairs=pairs_strategy, seed=st.integers(0, 2**16))
def test_swapping_the_runs_negates_the_difference_and_keeps_the_p_value(pairs: list[tuple[bool, bool]], seed: int) -> None:
    ab = singles(pairs)
    ba = singles([(b, a) for a, b in pairs])
    m_ab, m_ba = mcnemar(ab), mcnemar(ba)
    assert m_ab.p_value == m_ba.p_value and (m_ab.only_a, m_ab.only_b) == (m_ba.only_b, m_ba.only_a)
    x, y = paired_bootstrap(ab, resamples=200, seed=seed), paired_bootstrap(ba, resamples=200, seed=seed)
    assert y.diff == pytest.approx(-x.diff, abs=1e-12)
    assert (y.low, y.high) == pytest.approx((-x.high, -x.low), abs=1e-12)
    assert y.p_value == pytest.approx(x.p_value)
    assert 0 <= x.p_value <= 1 and x.low <= x.high and -1 <= x.low and x.high <= 1
    assert not math.isnan(x.diff)


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.tuples(st.lists(st.booleans(), min_size=2, max_size=2), st.lists(st.booleans(), min_size=2, max_size=2)),
                     min_size=1, max_size=15), seed=st.integers(0, 1000))
def test_swapping_runs_with_paired_seeds_negates_the_interval(rows: list[tuple[list[bool], list[bool]]], seed: int) -> None:
    ab = [PairedTask(f"t{i}", "os", tuple(a), tuple(b)) for i, (a, b) in enumerate(rows)]
    ba = [PairedTask(t.id, t.domain, t.b, t.a) for t in ab]
    x, y = paired_bootstrap(ab, resamples=200, seed=seed), paired_bootstrap(ba, resamples=200, seed=seed)
    assert y.diff == pytest.approx(-x.diff, abs=1e-12)
    assert (y.low, y.high) == pytest.approx((-x.high, -x.low), abs=1e-12) and y.p_value == pytest.approx(x.p_value)
