"""Pool/benchmark/score figures: the data that goes in is the data the traces carry."""

from __future__ import annotations

import numpy as np
import pytest

from agentlab.eval.benchmarks import BenchmarkTask
from agentlab.viz import benchmark_overview, pool_overview, score_distributions, upper_triangle


def test_pool_overview_counts_every_agent_once(pool):
    fig = pool_overview(pool)
    total = sum(sum(tr.y) for tr in fig.data)
    assert total == len(pool)
    assert {tr.name for tr in fig.data} == {"GUI", "CLI"}
    # one panel per platform; calc agents are on the desktop panel
    desktop_gui = next(tr for tr in fig.data if tr.name == "GUI" and tr.xaxis == "x")
    assert "calc" in desktop_gui.x
    n_calc = sum(1 for a in pool if a.domain == "calc")
    calc_total = sum(tr.y[list(tr.x).index("calc")] for tr in fig.data if tr.xaxis == "x")
    assert calc_total == n_calc
    assert str(len(pool)) in fig.layout.title.text


def test_benchmark_overview_counts_multi_app_tasks_in_each_domain():
    tasks = [
        BenchmarkTask("a", "x", "osworld", "calc", ("calc",)),
        BenchmarkTask("b", "y", "osworld", "calc", ("calc",)),
        BenchmarkTask("c", "z", "osworld-multi", None, ("calc", "writer")),
    ]
    fig = benchmark_overview(tasks)
    by = {tr.name.split(" ")[0]: dict(zip(tr.x, tr.y)) for tr in fig.data}
    assert by["osworld"]["calc"] == 2 and by["osworld"]["writer"] == 0
    assert by["osworld-multi"] == {"calc": 1, "writer": 1}
    assert list(fig.data[0].x) == ["calc", "writer"]  # canonical domain order


def test_upper_triangle_takes_pairs_once():
    m = np.arange(16, dtype=float).reshape(4, 4)
    assert upper_triangle(m).tolist() == [1, 2, 3, 6, 7, 11]
    with pytest.raises(ValueError):
        upper_triangle(np.zeros((2, 3)))


def test_score_distributions_one_box_per_group_and_band():
    rng = np.random.default_rng(0)
    fig = score_distributions({"calc": rng.random(10), "empty": [], "x": rng.random(5)}, band=(0.2, 0.4))
    assert [tr.type for tr in fig.data] == ["box", "box"]
    assert fig.data[0].name == "calc (n=10)"
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].y0 == 0.2
    assert "central 95%" in fig.layout.title.text
