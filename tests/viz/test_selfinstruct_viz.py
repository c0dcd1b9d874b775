"""Self-instruct figures: candidate outcomes, candidate scores against the band, distinct-n."""

from __future__ import annotations

import pytest

from agentlab.viz.selfinstruct import candidate_outcomes, candidate_scores, distinct_n, status_counts

CANDS = [
    {"agent": "A", "status": "accepted", "min_existing": 0.2, "max_existing": 0.4, "text": "ok one"},
    {"agent": "A", "status": "above_tau2", "min_existing": 0.3, "max_existing": 0.9, "text": "copy"},
    {"agent": "A", "status": "accepted", "min_existing": 0.25, "max_existing": 0.35, "text": "ok two"},
    {"agent": "B", "status": "below_tau1", "min_existing": 0.01, "max_existing": 0.3, "text": "off topic"},
    {"agent": "B", "status": "leak", "leak_score": 0.9, "text": "a benchmark task"},
]


def test_status_counts_and_outcome_bars():
    assert status_counts(CANDS) == {"A": {"accepted": 2, "above_tau2": 1}, "B": {"below_tau1": 1, "leak": 1}}
    fig = candidate_outcomes(CANDS)
    by = {tr.name: list(tr.y) for tr in fig.data}
    assert by["accepted"] == [2, 0] and by["leak"] == [0, 1]
    assert list(fig.data[0].x) == ["A", "B"]
    assert "67% accepted" in fig.layout.xaxis.ticktext[0]


def test_candidate_scores_panels_band_and_points():
    fig = candidate_scores(CANDS, {"A": (0.1, 0.5), "B": (0.05, 0.45)})
    assert len(fig.layout.shapes) == 2 and fig.layout.shapes[0].x0 == 0.1
    acc = next(tr for tr in fig.data if tr.name == "accepted")
    assert list(acc.x) == [0.2, 0.25] and list(acc.y) == [0.4, 0.35]
    assert not any(tr.name == "leak" for tr in fig.data)  # leaked ones were never scored against the set
    assert [a.text for a in fig.layout.annotations] == ["A", "B"]
    empty = candidate_scores([], {})
    assert "no scored candidates" in empty.layout.title.text


def test_distinct_n():
    assert distinct_n(["a b c", "a b d"], 2) == pytest.approx(3 / 4)
    assert distinct_n(["one"], 2) == 0.0


def test_dataset_composition_stacks_sources():
    from agentlab.viz.selfinstruct import dataset_composition

    rows = [{"agent": "A", "source": "seed"}] * 3 + [{"agent": "A", "source": "generated"}] * 2 + [{"agent": "B", "source": "seed"}]
    fig = dataset_composition(rows)
    by = {tr.name: list(tr.y) for tr in fig.data}
    assert by == {"seed": [3, 1], "generated": [2, 0]}
    assert "(6 in all)" in fig.layout.title.text
