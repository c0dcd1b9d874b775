"""Margin loss and temperature calibration of the agent rows."""

from __future__ import annotations

import torch

from agentlab.metaagent.calibrate import calibrate, fit_temperature
from agentlab.metaagent.head import AgentHead
from agentlab.metaagent.train import TrainConfig, margin_loss, train_head


def test_margin_loss_counts_only_rivals_inside_the_margin() -> None:
    z = torch.tensor([[5.0, 4.5, 0.0, -3.0], [0.0, 10.0, 1.0, 2.0]])
    labels = torch.tensor([0, 1])
    # example 0: rivals 4.5 and 0.0 -> hinge(2 - 0.5) + hinge(2 - 5) = 1.5; example 1: 10 vs 2, 1 -> 0
    assert torch.isclose(margin_loss(z, labels, margin=2.0, hard_negatives=2), torch.tensor(1.5 / 4))
    assert float(margin_loss(z, labels, margin=0.1, hard_negatives=3)) == 0.0


def _blobs(n_per: int = 40, noise: float = 1.5, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(4, 16, generator=g) * 2
    labels = torch.arange(4).repeat_interleave(n_per)
    h = centers[labels] + noise * torch.randn(len(labels), 16, generator=g)
    return h, torch.zeros(len(labels)), labels


def test_margin_training_widens_the_gap_to_the_nearest_rival() -> None:
    h, lse, y = _blobs()
    gaps = []
    for margin in (0.0, 4.0):
        head = AgentHead(4, 16)
        train_head(head, h, lse - 50.0, y, TrainConfig(epochs=30, lr=1e-2, margin=margin), progress=False)
        with torch.no_grad():
            z = head.agent_logits(h)
            gold = z.gather(1, y.view(-1, 1)).squeeze(1)
            rival = z.scatter(1, y.view(-1, 1), float("-inf")).max(1).values
        gaps.append(float((gold - rival).median()))
    assert gaps[1] > gaps[0]


def test_fit_temperature_recovers_a_known_temperature() -> None:
    g = torch.Generator().manual_seed(1)
    true_logits = torch.randn(4000, 5, generator=g) * 2
    labels = torch.multinomial(torch.softmax(true_logits, -1), 1, generator=g).squeeze(1)
    assert 3.3 < fit_temperature(true_logits * 4, labels) < 4.8  # logits sharpened 4x -> T ~ 4
    assert fit_temperature(true_logits, labels) < 1.4


def test_calibration_softens_an_overconfident_head() -> None:
    h, lse, y = _blobs(noise=3.0)
    cfg = TrainConfig(epochs=40, lr=3e-2)
    t, acc, oof = calibrate(h, lse - 50.0, y, torch.arange(len(y)), torch.zeros(4, 16), cfg)
    assert t > 1.0 and 0.25 < acc < 1.0
    assert oof.shape == (len(y), 4) and acc == float((oof.argmax(1) == y).float().mean())
