"""Study helpers: hold-out split, nearest neighbours, pool growth orders, scripted demos, fit cost."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from agentlab.errors import ConfigError
from agentlab.metaagent.data import TrainingSet
from agentlab.experiments.pool_growth import addition_order
from agentlab.experiments.token_training import holdout_split, nearest_neighbours


def _set(sizes):
    agents = [f"A{i}" for i in range(len(sizes))]
    labels = [i for i, n in enumerate(sizes) for _ in range(n)]
    return TrainingSet(agents=agents, texts=[f"t{j}" for j in range(len(labels))], labels=labels,
                       domains=["d"] * len(labels))


def test_holdout_is_stratified_disjoint_and_keeps_every_agent():
    data = _set([12, 4, 1])
    train, held = holdout_split(data, 0.25, seed=1)
    assert Counter(held.labels) == {0: 3, 1: 1}  # ceil(0.25 n), but never an agent's only example
    assert Counter(train.labels) == {0: 9, 1: 3, 2: 1}
    assert not set(train.texts) & set(held.texts)
    assert holdout_split(data, 0.25, seed=1)[1].texts == held.texts  # seeded
    assert len(holdout_split(data, 0.0)[1]) == 0
    with pytest.raises(ConfigError):
        holdout_split(data, 1.0)


def test_nearest_neighbours_by_cosine():
    w = np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 1.0, 0], [0, 0, 5.0]])
    nn = nearest_neighbours(w, ["a", "b", "c", "d"], k=2)
    assert nn["a"][0][0] == "b" and nn["a"][0][1] == pytest.approx(0.9 / np.hypot(0.9, 0.1))
    assert nn["c"][0][0] == "b"
    assert all(n != "a" for n, _ in nn["a"])


def test_addition_orders(pool):
    gui = addition_order(pool, "gui_first", seed=0)
    kinds = [pool.get(n).interface for n in gui]
    n_gui = kinds.count("GUI")
    assert kinds == ["GUI"] * n_gui + ["CLI"] * (len(kinds) - n_gui)
    assert sorted(gui) == sorted(pool.names)
    cli = addition_order(pool, "cli_first", seed=0)
    assert pool.get(cli[0]).interface == "CLI"
    assert addition_order(pool, "random", seed=3) == addition_order(pool, "random", seed=3) != pool.names
    with pytest.raises(ConfigError):
        addition_order(pool, "alphabetical")


def test_scripted_lines_resolve_elements_on_the_latest_screen():
    from agentlab.envs.base import Element, Observation
    from agentlab.errors import DataError
    from agentlab.experiments.scripted_demo import scripted_lines

    def el(i, text):
        return Element(id=i, bbox=(0, 0, 10, 10), role="push button", text=text, resource_id=None, clickable=True)

    screens = [Observation(None, [el(1, "Add one"), el(2, "Greet")]), Observation(None, [el(7, "Greet now")])]
    current = {"obs": screens[0]}
    lines = scripted_lines(["click({add})", 'type("Ada")', "click({Greet})"], lambda: current["obs"])
    assert next(lines) == "click(1)"
    assert next(lines) == 'type("Ada")'
    current["obs"] = screens[1]  # the screen changed: numbers come from the new one
    assert next(lines) == "click(7)"
    with pytest.raises(DataError, match="no element whose text starts with 'Reset'"):
        next(scripted_lines(["click({Reset})"], lambda: screens[0]))


def test_measure_fit_times_and_sees_memory_growth():
    """Run in a fresh interpreter: inside a long test session the allocator may hand the
    64 MiB back from memory that is already resident, so RSS would not grow."""
    import json
    import subprocess
    import sys

    code = """
import json, time
from agentlab.experiments.fit_cost import measure_fit
class Grows:
    def trainable_parameters(self):
        return 0
    def fit(self, train):
        self.blob = bytearray(64 * 2**20)  # 64 MiB, touched
        for i in range(0, len(self.blob), 4096):
            self.blob[i] = 1
        time.sleep(0.1)
        return {"loss": 1.0}
metrics, cost = measure_fit(Grows(), None)
print(json.dumps([metrics, cost.seconds, cost.peak_rss_mib, cost.trainable_parameters]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    metrics, seconds, peak, params = json.loads(out.stdout.strip().splitlines()[-1])
    assert metrics == {"loss": 1.0}
    assert seconds >= 0.1
    assert peak is not None and 50 < peak < 400
    assert params == 0


def test_trainable_parameters_and_coverage(pool):
    """Routers declare what they train (``Router.trainable_parameters``); nothing probes them."""
    import torch

    from agentlab.experiments.pool_growth import domain_coverage
    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.baselines.embedding import EmbeddingRouter
    from agentlab.metaagent.head import AgentHead

    with_head = AgentTokenRouter(pool.subset(pool.names[:3]), use_cache=False)
    with_head.head = AgentHead(3, 5, init=torch.zeros(3, 5))
    assert with_head.trainable_parameters() == 15
    assert EmbeddingRouter(pool).trainable_parameters() == 0  # stores centroids, trains nothing
    assert domain_coverage(["SheetAgent"], pool, ["calc", "calc", "writer", "clock"]) == 0.5
