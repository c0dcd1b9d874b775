"""Agent rows from the shrinkage discriminant: the rule, its fold into W_A + b_A, and the router with it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agentlab.errors import DataError
from agentlab.metaagent.discriminant import discriminant_rows, fit_scale, lda_init
from agentlab.metaagent.head import AgentHead
from agentlab.metaagent.train import TrainConfig, start_head, train_head


def _anisotropic(n_per: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Three classes whose means differ along low-variance directions, under a shared covariance
    with a few huge directions (like a small LM's hidden states)."""
    gen = torch.Generator().manual_seed(seed)
    d = 20
    scales = torch.ones(d)
    scales[:3] = 30.0  # dominant directions carry noise only
    means = torch.zeros(3, d)
    means[0, 5], means[1, 6], means[2, 7] = 3.0, 3.0, 3.0
    means[:, :3] = torch.tensor([[5.0, 0, 0], [0, 5.0, 0], [0, 0, 5.0]])  # small against their spread
    y = torch.arange(3).repeat_interleave(n_per)
    x = means[y] + torch.randn(len(y), d, generator=gen) * scales
    return x, y


def test_discriminant_beats_the_nearest_mean_under_a_shared_anisotropic_covariance() -> None:
    x, y = _anisotropic(200, 0)
    xt, yt = _anisotropic(300, 1)
    w, b = discriminant_rows(x, y, 3, shrinkage=0.1)
    lda = float(((xt @ w.T + b).argmax(1) == yt).float().mean())
    means = torch.stack([x[y == k].mean(0) for k in range(3)])
    nearest = float((torch.cdist(xt, means).argmin(1) == yt).float().mean())
    assert lda > nearest + 0.2, (lda, nearest)
    assert lda > 0.75


def test_full_shrinkage_is_the_nearest_mean_rule() -> None:
    x, y = _anisotropic(50, 2)
    w, b = discriminant_rows(x, y, 3, shrinkage=1.0)
    means = torch.stack([x[y == k].mean(0) for k in range(3)])
    z = x @ w.T + b
    # shrinkage 1: Σ is a scaled identity, so the discriminant orders classes by Euclidean distance
    assert torch.equal(z.argmax(1), torch.cdist(x, means).argmin(1))


def test_every_agent_needs_an_example_and_shrinkage_is_bounded() -> None:
    x, y = _anisotropic(5, 3)
    with pytest.raises(DataError, match=r"row\(s\) \[3\]"):
        discriminant_rows(x, y, 4)
    with pytest.raises(DataError, match="shrinkage"):
        discriminant_rows(x, y, 3, shrinkage=1.5)


def test_scale_and_offset_make_the_agent_tokens_win_over_words() -> None:
    x, y = _anisotropic(40, 4)
    lse = torch.full((len(y),), 25.0)  # the words' logsumexp, far above the raw discriminant values
    w, b = discriminant_rows(x, y, 3, shrinkage=0.3)
    s, c = fit_scale(w, b, x, lse, y)
    assert s > 0
    head = AgentHead(3, x.shape[1], init=s * w, bias=s * b + c)
    assert head.log_probs(x, lse).exp().sum(1).mean() > 0.5  # P(any agent) under V ∪ A
    w2, b2 = lda_init(x, lse, y, 3, 0.3)
    assert torch.allclose(w2, s * w) and torch.allclose(b2, s * b + c)
    # the scale changes no decision among the agents
    assert torch.equal(head.agent_logits(x).argmax(1), (x @ w.T + b).argmax(1))


def test_frozen_rows_and_their_biases_stay_bit_identical() -> None:
    x, y = _anisotropic(20, 5)
    lse = torch.zeros(len(y))
    cfg = TrainConfig.preset("lda").model_copy(update={"epochs": 3, "lr": 1e-2})
    head = start_head(cfg, torch.zeros(3, x.shape[1]), x, lse, y)
    assert head.has_bias and len(head.parameters_to_train()) == 2
    w0, b0 = head.weight.detach().clone(), head.bias.detach().clone()
    train_head(head, x, lse, y, cfg, trainable_rows=[2], progress=False)
    assert torch.equal(head.weight[:2], w0[:2]) and torch.equal(head.bias[:2], b0[:2])
    assert not torch.equal(head.bias[2], b0[2])


def test_a_head_without_bias_is_the_papers_head() -> None:
    head = AgentHead(2, 4, logit_bias=1.5, init=torch.ones(2, 4))
    assert not head.has_bias and head.parameters_to_train() == [head.weight]
    h = torch.randn(3, 4)
    assert torch.equal(head.agent_logits(h), h @ head.weight.T + 1.5)


AGENTS = ["SheetAgent", "SpotifyAgent", "MailAgent"]
TASKS = ["Add a SUM formula under column C of budget.xlsx", "Play my Discover Weekly playlist", "Email the report to Bob"]


def test_router_with_lda_rows_routes_saves_and_enrols(pool, tmp_path: Path) -> None:
    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.data import load_training_set

    sub = pool.subset(AGENTS + ["ClockAgent"])
    train = load_training_set(sub, source="seed", per_agent=6)
    router = AgentTokenRouter(sub, train=TrainConfig.preset("lda"), use_cache=False, progress=False, calibrate=True)
    m = router.fit(train.restrict(AGENTS))
    assert router.head is not None and router.head.has_bias
    assert router.trainable_parameters() == 3 * router.head.weight.shape[1] + 3
    assert m["agent_mass"] > 0.5 and m["temperature"] > 0
    routed = router.route(TASKS)
    assert [r.agent for r in routed] == AGENTS
    assert all(r.error is None for r in routed)  # an agent token wins the greedy decoding
    router.save(tmp_path / "ck")
    again = AgentTokenRouter.load(tmp_path / "ck", sub, use_cache=False, progress=False)
    assert again.head is not None and torch.equal(again.head.bias, router.head.bias)
    assert again.rank(TASKS) == router.rank(TASKS)
    w0, b0 = router.head.weight.detach().clone(), router.head.bias.detach().clone()
    router.add_agent("ClockAgent", train)
    assert torch.equal(router.head.weight[:3], w0) and torch.equal(router.head.bias[:3], b0)
    assert router.route(["Set an alarm for 6:30 tomorrow morning"])[0].agent == "ClockAgent"
