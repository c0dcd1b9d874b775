"""Embedding router: complete sorted distributions, obvious cases, save/load, bad options."""

from __future__ import annotations

import math

import pytest

from agentlab.errors import CheckpointError, ConfigError
from agentlab.metaagent import load_training_set
from agentlab.metaagent.baselines.embedding import EmbeddingRouter


@pytest.fixture(scope="module")
def small_pool(pool):
    return pool.subset(["SheetAgent", "VLCAgent", "MapsAgent", "ClockAgent"])


@pytest.fixture(scope="module")
def train(small_pool):
    return load_training_set(small_pool, source="seed", per_agent=6)


TASKS = [
    ("Sum column B of budget.xlsx into a new sheet called Totals", "SheetAgent"),
    ("Play the movie file on the desktop in fullscreen and turn the volume up", "VLCAgent"),
    ("Get walking directions to the nearest train station", "MapsAgent"),
    ("Set an alarm for 6:30 tomorrow morning", "ClockAgent"),
]


@pytest.mark.parametrize("mode", ["centroid", "knn"])
def test_ranks_obvious_tasks(small_pool, train, mode):
    router = EmbeddingRouter(small_pool, mode=mode, k=2)
    router.fit(train)
    ranks = router.rank([t for t, _ in TASKS])
    for r, (_, gold) in zip(ranks, TASKS):
        assert [n for n, _ in r][0] == gold
        assert sorted(n for n, _ in r) == sorted(small_pool.names)
        probs = [p for _, p in r]
        assert probs == sorted(probs, reverse=True)
        assert math.isclose(sum(probs), 1.0, abs_tol=1e-6)
    routed = router.route([TASKS[0][0]])
    assert routed[0].agent == "SheetAgent"


def test_temperature_sharpens(small_pool, train):
    cold = EmbeddingRouter(small_pool, temperature=0.01)
    warm = EmbeddingRouter(small_pool, temperature=1.0)
    cold.fit(train)
    warm.fit(train)
    assert cold.rank([TASKS[1][0]])[0][0][1] > warm.rank([TASKS[1][0]])[0][0][1]


def test_save_load_round_trip(small_pool, train, tmp_path):
    router = EmbeddingRouter(small_pool, mode="knn", k=2)
    router.fit(train)
    router.save(tmp_path / "emb")
    again = EmbeddingRouter.load(tmp_path / "emb", small_pool)
    tasks = [t for t, _ in TASKS]
    assert again.cfg == router.cfg
    for a, b in zip(router.rank(tasks), again.rank(tasks)):
        assert [n for n, _ in a] == [n for n, _ in b]
        assert [p for _, p in a] == pytest.approx([p for _, p in b], abs=1e-6)


def test_bad_input(small_pool, tmp_path):
    with pytest.raises(ConfigError, match="mode"):
        EmbeddingRouter(small_pool, mode="nearest")
    with pytest.raises(ConfigError, match="unknown_option"):
        EmbeddingRouter(small_pool, unknown_option=1)
    with pytest.raises(CheckpointError, match="not fitted"):
        EmbeddingRouter(small_pool).rank(["anything"])
    with pytest.raises(CheckpointError, match="router.json missing"):
        EmbeddingRouter.load(tmp_path, small_pool)
    (tmp_path / "router.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupt"):
        EmbeddingRouter.load(tmp_path, small_pool)
