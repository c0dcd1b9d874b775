"""The hybrid router: AgentToken decoding with the sentence encoder's prior (product of experts)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.data import load_training_set
from agentlab.metaagent.hybrid import HybridRouter
from agentlab.metaagent.router import CHECKPOINT_ROUTERS, router_class
from agentlab.metaagent.train import TrainConfig

AGENTS = ["SheetAgent", "SpotifyAgent", "MailAgent"]
TASKS = ["Add a SUM formula under column C of budget.xlsx", "Play my Discover Weekly playlist", "Email the report to Bob"]


@pytest.fixture(scope="module")
def fitted(pool):
    sub = pool.subset(AGENTS)
    train = load_training_set(sub, source="seed", per_agent=4)
    router = router_class("hybrid")(
        sub, use_cache=False, progress=False, agenttoken={"train": TrainConfig(epochs=30), "max_word_tokens": 2, "calibrate": True})
    assert isinstance(router, HybridRouter) and "hybrid" in CHECKPOINT_ROUTERS
    metrics = router.fit(train)
    return sub, train, router, metrics


def test_hybrid_routes_and_ranks_like_a_router(fitted) -> None:
    sub, _, router, metrics = fitted
    assert metrics["temperature"] >= 0.25 and metrics["embed_temperature"] > 0
    assert metrics["weight"] in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0) and router.weight == metrics["weight"]  # chosen out of fold
    res = router.route(TASKS)
    assert [r.agent for r in res] == AGENTS
    for r in router.rank(TASKS):
        assert abs(sum(p for _, p in r) - 1) < 1e-5 and sorted(n for n, _ in r) == sorted(AGENTS)


def test_prior_is_zero_for_the_encoders_favourite_and_scales_with_weight(fitted) -> None:
    _, _, router, _ = fitted
    prior = router.prior(TASKS)
    assert prior.shape == (3, 3) and torch.allclose(prior.max(1).values, torch.zeros(3)) and bool((prior <= 0).all())
    saved = router.weight
    router.weight = 2 * saved
    try:
        assert torch.allclose(router.prior(TASKS), 2 * prior)
    finally:
        router.weight = saved


def test_weight_zero_is_agenttoken_and_a_strong_prior_follows_the_encoder(fitted) -> None:
    _, _, router, _ = fitted
    plain, saved = router.token.route(TASKS), router.weight
    try:
        router.weight = 0.0
        assert [r.agent for r in router.route(TASKS)] == [r.agent for r in plain]
        router.weight = 1e4
        enc_top = [r[0][0] for r in router.embed.rank(TASKS)]
        assert [r.agent for r in router.route(TASKS)] == enc_top
    finally:
        router.weight = saved


def test_hybrid_save_load_round_trip(fitted, tmp_path: Path) -> None:
    sub, _, router, _ = fitted
    router.save(tmp_path / "hy")
    again = HybridRouter.load(tmp_path / "hy", sub, use_cache=False, progress=False)
    assert again.embed_temperature == router.embed_temperature and again.token.temperature == router.token.temperature
    assert again.weight == router.weight and again.rank(TASKS) == router.rank(TASKS)
    router.save(tmp_path / "light", encoder=False)  # hybrid.json only: the encoder is refitted on the seeds
    light = HybridRouter.load(tmp_path / "light", sub, use_cache=False, progress=False)
    assert light.weight == router.weight and light.embed_temperature == router.embed_temperature
    assert not (tmp_path / "light" / "embedding").exists() and [r.agent for r in light.route(TASKS)] == AGENTS


def test_choose_weight_prefers_the_expert_that_is_right_out_of_fold() -> None:
    import numpy as np

    from agentlab.metaagent.hybrid import choose_weight

    y = np.array([0, 1, 2, 0, 1, 2])
    token = torch.zeros(6, 3)  # AgentToken has no opinion
    good = np.eye(3, dtype=np.float32)[y]  # the encoder is always right
    assert choose_weight(token, 1.0, good, 0.1, y) >= 2.0  # ties on accuracy -> the lower NLL: trust the encoder
    token_right = torch.from_numpy(np.eye(3, dtype=np.float32)[y] * 5)
    bad = np.eye(3, dtype=np.float32)[(y + 1) % 3]  # the encoder is always wrong
    assert choose_weight(token_right, 1.0, bad, 0.1, y) == 0.25


def test_hybrid_loads_a_plain_agenttoken_checkpoint_and_fits_its_encoder(fitted, tmp_path: Path) -> None:
    sub, _, router, _ = fitted
    router.token.save(tmp_path / "tok")
    again = HybridRouter.load(tmp_path / "tok", sub, use_cache=False, progress=False)
    assert isinstance(again.token, AgentTokenRouter) and again.embed.agents == AGENTS
    assert [r.agent for r in again.route(TASKS)] == AGENTS


def test_shipped_hybrid_routes_through_the_exec_door(pool) -> None:
    """``agentlab exec --router hybrid`` builds its route function from data/tokens + hybrid.json."""
    from types import SimpleNamespace

    from agentlab.run.episode import router_route
    from agentlab.metaagent.router import ROUTERS

    assert "hybrid" in ROUTERS
    route = router_route("hybrid", pool)
    task = SimpleNamespace(instruction="Play the Discover Weekly playlist on Spotify", id="t", source=None)
    assert route(task) == "SpotifyAgent"  # type: ignore[arg-type]
