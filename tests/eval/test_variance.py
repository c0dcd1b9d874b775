"""Seed statistics: intervals and pass@k / pass^k on cases worked out by hand, and their properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.errors import DataError
from agentlab.eval.variance import (
    OVERALL,
    pass_at_k,
    pass_hat_k,
    seed_stats,
    seed_stats_frame,
    t_interval,
    t_quantile_975,
    wilson_interval,
)


def rows(table: dict[str, tuple[str, list[bool]]]) -> list[dict]:
    """{task id: (domain, [success per seed 0, 1, ...])} -> result rows."""
    return [{"id": i, "domain": d, "seed": s, "success": ok} for i, (d, oks) in table.items() for s, ok in enumerate(oks)]


def test_pass_estimators_by_hand() -> None:
    # n=5 episodes, c=2 successes: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7) and pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 1) == pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 4) == 1.0 and pass_hat_k(5, 2, 3) == 0.0  # 4 draws always include a success
    assert pass_at_k(3, 0, 3) == 0.0 and pass_hat_k(3, 3, 3) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_wilson_interval_by_hand() -> None:
    # 8 of 10: centre (0.8 + z²/20)/(1 + z²/10), half z·sqrt(0.016 + z²/400)/(1 + z²/10) -> [0.4902, 0.9433]
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low, high = wilson_interval(0, 4)  # 0 %: the interval still has width, from 0
    assert low == 0.0 and high == pytest.approx(0.4899, abs=1e-4)
    assert wilson_interval(3, 3)[1] == 1.0


def test_t_interval_by_hand() -> None:
    # per-seed rates 0.5, 0.75, 1.0: mean 0.75, sd 0.25, half = 4.302653 * 0.25 / sqrt(3) = 0.6210 -> clipped
    mean, low, high = t_interval([0.5, 0.75, 1.0])
    assert mean == pytest.approx(0.75) and (low, high) == (pytest.approx(0.75 - 0.62103, abs=1e-5), 1.0)
    mean, low, high = t_interval([0.4, 0.5, 0.5, 0.6])  # sd 0.08165, t(3)=3.182446 -> half 0.12992
    assert (low, high) == (pytest.approx(0.37008, abs=1e-5), pytest.approx(0.62992, abs=1e-5))
    assert t_interval([0.5, 0.5]) == (0.5, 0.5, 0.5)  # every seed scored the same: zero width


def test_t_quantiles_match_scipy() -> None:
    from scipy import stats  # installed with the test extras (scikit-learn and sentence-transformers need it)

    for df in (1, 2, 3, 10, 30, 31, 45, 200):
        assert t_quantile_975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=2e-6)


def test_seed_stats_per_domain_and_overall() -> None:
    table = {"a": ("calc", [True, True, False]), "b": ("calc", [False, True, False]),
             "c": ("os", [True, True, True]), "d": ("os", [False, False, False])}
    calc, os_, overall = seed_stats(rows(table))
    assert [s.domain for s in (calc, os_, overall)] == ["calc", "os", OVERALL]
    # calc per-seed rates 0.5, 1.0, 0.0: mean 0.5, sd 0.5, half 4.302653*0.5/sqrt(3) = 1.2421 -> [0, 1]
    assert (calc.mean, calc.ci_low, calc.ci_high, calc.method, calc.seeds, calc.tasks) == (0.5, 0.0, 1.0, "t", 3, 2)
    # calc: task a (n=3, c=2), b (n=3, c=1): pass@2 = mean(1 - 0/3, 1 - 1/3); pass^2 = mean(1/3, 0)
    assert calc.pass_at[2] == pytest.approx(5 / 6) and calc.pass_hat[2] == pytest.approx(1 / 6)
    assert calc.pass_at[3] == 1.0 and calc.pass_hat[3] == 0.0 and calc.pass_at[1] == pytest.approx(0.5)
    assert os_.pass_at == {1: 0.5, 2: 0.5, 3: 0.5} and os_.ci_low == os_.ci_high == 0.5  # seeds agree exactly
    # overall per-seed rates 0.5, 0.75, 0.25: mean 0.5, sd 0.25 -> half 0.62103
    assert overall.mean == pytest.approx(0.5) and overall.ci_high == pytest.approx(1.0)
    assert overall.ci_low == pytest.approx(0.0) and overall.episodes == 12
    line = calc.line()
    assert line == "calc: mean=0.500 95% CI [0.000, 1.000] (t over 3 seeds; 2 tasks) pass@3=1.000 pass^3=0.000"


def test_one_seed_falls_back_to_wilson_over_tasks() -> None:
    table = {f"t{i}": ("calc", [i < 8]) for i in range(10)}
    calc, overall = seed_stats(rows(table))
    assert (calc.method, calc.mean, calc.pass_at, calc.pass_hat) == ("wilson", 0.8, {1: 0.8}, {1: 0.8})
    assert (round(calc.ci_low, 4), round(calc.ci_high, 4)) == (0.4902, 0.9433)
    assert calc.line().startswith("calc: mean=0.800 95% CI [0.490, 0.943] (Wilson over 10 tasks; 1 seed)")


def test_an_interrupted_run_counts_pass_at_k_to_the_fewest_episodes() -> None:
    calc, _ = seed_stats(rows({"a": ("calc", [True, False, True]), "b": ("calc", [True, True])}))
    assert sorted(calc.pass_at) == [1, 2]


def test_duplicate_rows_and_no_rows_are_data_errors() -> None:
    with pytest.raises(DataError, match="two rows for seed 0"):
        seed_stats(rows({"a": ("calc", [True])}) * 2)
    with pytest.raises(DataError):
        seed_stats([])


def test_the_frame_has_one_column_per_k() -> None:
    frame = seed_stats_frame(rows({"a": ("calc", [True, False]), "b": ("os", [True, True])}))
    assert list(frame["domain"]) == ["calc", "os", OVERALL]
    assert {"mean", "ci_low", "ci_high", "method", "pass@1", "pass@2", "pass^1", "pass^2"} <= set(frame.columns)
    assert frame.loc[frame.domain == "calc", "pass^2"].item() == 0.0


@given(n=st.integers(1, 12), data=st.data())
def test_pass_at_k_rises_pass_hat_k_falls_and_both_start_at_the_mean(n, data) -> None:  # type: ignore[no-untyped-def]
    c = data.draw(st.integers(0, n))
    at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hat = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert at[0] == pytest.approx(c / n) and hat[0] == pytest.approx(c / n)
    assert all(b >= a - 1e-12 for a, b in zip(at, at[1:])) and all(b <= a + 1e-12 for a, b in zip(hat, hat[1:]))
    assert all(h <= a + 1e-12 for a, h in zip(at, hat))


@given(st.lists(st.floats(0, 1), min_size=2, max_size=10))
def test_the_t_interval_holds_the_mean_inside_zero_one(rates) -> None:  # type: ignore[no-untyped-def]
    mean, low, high = t_interval(rates)
    assert 0.0 <= low <= mean + 1e-12 and mean - 1e-12 <= high <= 1.0
    assert math.isclose(mean, sum(rates) / len(rates), abs_tol=1e-12)


@given(n=st.integers(1, 200), data=st.data())
def test_wilson_holds_the_proportion(n, data) -> None:  # type: ignore[no-untyped-def]
    k = data.draw(st.integers(0, n))
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
