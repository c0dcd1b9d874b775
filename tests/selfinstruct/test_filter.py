"""Algorithm 1 on hand-made score matrices: priority order, all-pairs check, exactness."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agentlab.errors import ConfigError
from agentlab.selfinstruct.filter import greedy_filter, priority, violations


def test_priority_is_min_distance_to_either_threshold() -> None:
    ce = np.array([[0.5, 0.3], [0.25, 0.45], [0.9, 0.95]])
    d = priority(ce, 0.2, 0.6)
    # row 0: min(|.5-.2|,|.5-.6|)=.1, min(.1,.3)=.1 -> .1 ; row 1: .05 vs .15 -> .05 ; row 2: .3,.35 -> .3
    assert np.allclose(d, [0.1, 0.05, 0.3])


def test_candidates_are_visited_in_descending_priority_and_checked_against_new_items() -> None:
    tau1, tau2 = 0.2, 0.6
    # existing set: 2 items. Candidate 0 is nearest a threshold (low d), candidate 2 most central.
    ce = np.array(
        [
            [0.22, 0.40],  # d = .02
            [0.35, 0.45],  # d = .15
            [0.40, 0.40],  # d = .20 -> visited first
        ]
    )
    cc = np.array(
        [
            [1.0, 0.3, 0.3],
            [0.3, 1.0, 0.7],  # 1 vs 2 too similar (> tau2)
            [0.3, 0.7, 1.0],
        ]
    )
    res = greedy_filter(["a", "b", "c"], ce, cc, tau1, tau2)
    ranks = {d.index: d.rank for d in res.decisions}
    assert [i for i, _ in sorted(ranks.items(), key=lambda kv: kv[1])] == [2, 1, 0]
    # c first (accepted), then b violates against c (new item) -> rejected, then a accepted
    assert res.accepted == [2, 0]
    b = res.decisions[1]
    assert not b.accepted and b.reason == "above_tau2" and b.violated_by == ("new", 2)
    assert res.accepted_texts == ["c", "a"]
    assert res.counts() == {"accepted": 2, "above_tau2": 1}


def test_rejects_below_tau1_against_existing_with_first_violation() -> None:
    ce = np.array([[0.5, 0.1, 0.05]])
    res = greedy_filter(["x"], ce, np.ones((1, 1)), 0.2, 0.6)
    dec = res.decisions[0]
    assert res.accepted == [] and dec.reason == "below_tau1"
    assert dec.violated_by == ("existing", 1) and dec.violating_score == pytest.approx(0.1)


def _brute_force(ce: np.ndarray, cc: np.ndarray, t1: float, t2: float) -> list[int]:
    """Algorithm 1 written as literally as the paper's pseudocode (lazy pair checks)."""
    d = [min(min(abs(s - t1), abs(s - t2)) for s in row) for row in ce]
    order = sorted(range(len(d)), key=lambda i: (-d[i], i))
    new: list[int] = []
    for i in order:
        valid = True
        for s in list(ce[i]) + [cc[i, j] for j in new]:
            if s < t1 or s > t2:
                valid = False
                break
        if valid:
            new.append(i)
    return new


def test_matches_literal_pseudocode_and_final_set_satisfies_band_on_random_matrices() -> None:
    rng = np.random.default_rng(0)
    for _trial in range(50):
        m, n = rng.integers(1, 25), rng.integers(1, 15)
        ce = rng.uniform(0.0, 0.7, size=(m, n))
        cc = rng.uniform(0.0, 0.7, size=(m, m))
        cc = (cc + cc.T) / 2
        t1, t2 = sorted(rng.uniform(0.05, 0.6, size=2))
        res = greedy_filter([str(i) for i in range(m)], ce, cc, t1, t2)
        assert res.accepted == _brute_force(ce, cc, t1, t2)
        acc = res.accepted
        assert all(t1 <= ce[i, j] <= t2 for i in acc for j in range(n))
        assert all(t1 <= cc[i, j] <= t2 for i, j in itertools.permutations(acc, 2))
        assert violations(cc[np.ix_(acc, acc)], t1, t2) == 0


def test_empty_existing_set_and_inverted_band() -> None:
    res = greedy_filter(["a", "b"], np.zeros((2, 0)), np.array([[1, 0.3], [0.3, 1]]), 0.2, 0.6)
    assert res.accepted == [0, 1]
    with pytest.raises(ConfigError, match="tau1=0.7 is greater than tau2=0.5"):
        greedy_filter(["a"], np.zeros((1, 1)), np.ones((1, 1)), 0.7, 0.5)
