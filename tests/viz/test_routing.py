"""Routing figures: accuracy bars, confusion matrix, token projection, curves, tables."""

from __future__ import annotations

import numpy as np
import pytest

from agentlab.viz import accuracy_bars, confusion_matrix, loss_curves, project_2d, scaling_curves, table_figure, token_projection


def test_accuracy_bars_groups_and_scales():
    fig = accuracy_bars({"AgentToken": {"calc": 0.5, "all": 0.75}, "ICL": {"calc": 0.25, "writer": 1.0}})
    assert [tr.name for tr in fig.data] == ["AgentToken", "ICL"]
    assert list(fig.data[0].x) == ["calc", "all", "writer"]
    assert list(fig.data[0].y) == [50.0, 75.0, None]
    assert list(fig.data[1].y) == [25.0, None, 100.0]


def test_confusion_matrix_counts_and_accuracy():
    gold = ["A", "A", "B", "B", "C"]
    pred = ["A", "B", "B", None, "C"]
    fig = confusion_matrix(gold, pred, labels=["A", "B", "C"])
    hm = fig.data[0]
    assert list(hm.x) == ["A", "B", "C", "(none)"]
    z = np.asarray(hm.z)
    assert z[0].tolist() == [0.5, 0.5, 0.0, 0.0]
    assert z[1].tolist() == [0.0, 0.5, 0.0, 0.5]
    assert hm.text[2][2] == "1"
    assert "accuracy 60.0%" in fig.layout.title.text
    with pytest.raises(ValueError):
        confusion_matrix(["A"], [])


def test_project_2d_recovers_the_dominant_direction():
    rng = np.random.default_rng(0)
    t = rng.normal(size=50)
    x = np.outer(t, [3.0, 0, 0, 0]) + 0.01 * rng.normal(size=(50, 4))
    coords, ratio = project_2d(x)
    assert coords.shape == (50, 2)
    assert ratio[0] > 0.99
    assert abs(np.corrcoef(coords[:, 0], t)[0, 1]) > 0.99


def test_token_projection_one_trace_per_domain():
    w = np.eye(4)
    fig = token_projection(w, ["a", "b", "c", "d"], ["calc", "calc", "writer", "os"])
    assert [tr.name for tr in fig.data] == ["calc", "writer", "os"]
    assert list(fig.data[0].text) == ["a", "b"]
    assert "PC1" in fig.layout.xaxis.title.text
    with pytest.raises(ValueError):
        token_projection(w, ["a"], ["calc"])


def test_curves_and_tables():
    fig = loss_curves({"AgentToken": [2.0, 1.0, 0.5]})
    assert list(fig.data[0].x) == [1, 2, 3] and list(fig.data[0].y) == [2.0, 1.0, 0.5]
    fig = scaling_curves({"random": ([1, 2], [0.1, 0.2], [0.01, 0.02]), "GUI-first": ([1, 2], [0.3, 0.4])},
                         title="t", xaxis_title="agents")
    assert len(fig.data) == 3  # band + line + line
    assert fig.data[1].name == "random" and list(fig.data[1].y) == pytest.approx([10.0, 20.0])
    fig = table_figure([{"method": "AgentToken", "params": 17280}, {"method": "LoRA", "params": 1.5e5, "note": "x"}])
    assert list(fig.data[0].header.values) == ["<b>method</b>", "<b>params</b>", "<b>note</b>"]
    assert list(fig.data[0].cells.values[1]) == ["17280", "1.5e+05"]


def test_loss_curves_accept_explicit_x():
    fig = loss_curves({"a": ([1, 5, 10], [3.0, 1.0, 0.5])})
    assert list(fig.data[0].x) == [1, 5, 10]
    with pytest.raises(ValueError):
        loss_curves({"a": ([1, 2], [1.0, 2.0, 3.0])})


def test_token_projection_gives_twenty_domains_distinct_colours():
    groups = [f"d{i}" for i in range(20)]
    fig = token_projection(np.random.default_rng(0).normal(size=(20, 6)), groups, groups)
    assert len({tr.marker.color for tr in fig.data}) == 20


def test_accuracy_heatmap_cells_counts_and_blanks():
    from agentlab.viz import accuracy_heatmap

    fig = accuracy_heatmap({"AgentToken": {"calc": 0.5, "overall": 0.5}, "ICL": {"writer": 1.0, "overall": 1.0}},
                           {"AgentToken": {"calc": 4, "overall": 4}, "ICL": {"writer": 2, "overall": 2}})
    hm = fig.data[0]
    assert list(hm.x) == ["calc", "overall", "writer"] and list(hm.y) == ["AgentToken", "ICL"]
    assert hm.z[0][0] == 50.0 and hm.z[0][2] is None and hm.text[0][2] == ""
    assert hm.text[1][2] == "100<br><sub>n=2</sub>"
