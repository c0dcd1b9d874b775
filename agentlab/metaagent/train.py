"""Training the agent tokens: AdamW on ``W_A`` over cached frozen-backbone features.

The loss is the paper's: cross-entropy of the gold agent token, at the position after each
demonstration prompt, over the full ``V ∪ A`` vocabulary. With features cached, an epoch
over thousands of demonstrations is a few small matrix products. Incremental enrolment
trains only some rows; the others are restored after every step, so they stay bit-identical.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

from agentlab.metaagent.head import AgentHead

log = logging.getLogger(__name__)


class TrainConfig(BaseModel):
    """Hyper-parameters of one AgentToken training run (defaults: what works on SmolLM2-135M)."""

    model_config = ConfigDict(extra="forbid")

    lr: float = 1e-2
    weight_decay: float = 0.0
    epochs: int = 40
    batch_size: int = 32
    #: ``lda``: rows (and a per-agent bias) from a shrinkage linear discriminant of the training
    #: states (:mod:`agentlab.metaagent.discriminant`), then ``epochs`` of fine-tuning
    init: Literal["random", "name_mean", "zeros", "lda"] = "name_mean"
    init_scale: float = 1.0
    #: with ``init="lda"``: weight of the scaled identity in the shrunk within-agent covariance
    shrinkage: float = Field(0.5, ge=0.0, le=1.0)
    logit_bias: float = 0.0
    balance: bool = False  # weight examples so every agent counts equally (uneven generated data)
    #: hinge margin between the gold agent's logit and its ``hard_negatives`` nearest rivals (0: off)
    margin: float = 0.0
    margin_weight: float = 1.0
    hard_negatives: int = 3
    seed: int = 0

    @classmethod
    def preset(cls, name: str) -> TrainConfig:
        """``paper``: the AgentStore setting (lr 4e-5, weight decay 1.0, 10 epochs); ``default``;
        ``lda``: rows from the shrinkage discriminant (γ 0.5) and no gradient steps (chosen on held-out
        self-instruct demonstrations of both backbones, ``benchmarks/agenttoken_tuning.py --heldout``)."""
        if name == "paper":
            return cls(lr=4e-5, weight_decay=1.0, epochs=10)
        if name == "default":
            return cls()
        if name == "lda":
            return cls(init="lda", shrinkage=0.5, lr=1e-3, epochs=0)
        from agentlab.errors import ConfigError

        raise ConfigError(f"unknown training preset '{name}'; use default, paper or lda")


def initial_weights(
    cfg: TrainConfig, names: list[str], tokenizer: Any, word_head: torch.Tensor, dim: int
) -> torch.Tensor:
    """Starting ``W_A`` for ``names`` under ``cfg.init`` (seeded); ``lda`` rows depend on the
    training states and come from :func:`start_head` (here: zeros)."""
    from agentlab.metaagent.head import name_mean_init

    gen = torch.Generator().manual_seed(cfg.seed)
    if cfg.init in ("zeros", "lda"):
        return torch.zeros(len(names), dim)
    if cfg.init == "name_mean":
        return cfg.init_scale * name_mean_init(names, tokenizer, word_head.detach().cpu())
    std = float(word_head.detach().float().std())
    return cfg.init_scale * std * torch.randn(len(names), dim, generator=gen)


def start_head(
    cfg: TrainConfig, init: torch.Tensor, h: torch.Tensor, vocab_lse: torch.Tensor, labels: torch.Tensor
) -> AgentHead:
    """A fresh head for training: from ``init`` (see :func:`initial_weights`), or under ``init="lda"``
    from the shrinkage discriminant of (``h``, ``labels``) with its per-agent bias."""
    if cfg.init != "lda":
        return AgentHead(init.shape[0], init.shape[1], logit_bias=cfg.logit_bias, init=init)
    from agentlab.metaagent.discriminant import lda_init

    w, b = lda_init(h, vocab_lse, labels, init.shape[0], cfg.shrinkage)
    return AgentHead(init.shape[0], init.shape[1], logit_bias=cfg.logit_bias, init=w, bias=b)


def margin_loss(agent_logits: torch.Tensor, labels: torch.Tensor, margin: float, hard_negatives: int) -> torch.Tensor:
    """Mean hinge ``max(0, margin - (z_gold - z_rival))`` over each example's ``hard_negatives``
    highest-scoring wrong agents: the agents it is currently most easily confused with."""
    gold = agent_logits.gather(1, labels.view(-1, 1))
    rivals = agent_logits.scatter(1, labels.view(-1, 1), float("-inf"))
    k = max(1, min(hard_negatives, agent_logits.shape[1] - 1))
    top = rivals.topk(k, dim=1).values
    return torch.relu(margin - (gold - top)).mean()


def train_head(
    head: AgentHead,
    h: torch.Tensor,
    vocab_lse: torch.Tensor,
    labels: torch.Tensor,
    cfg: TrainConfig,
    *,
    trainable_rows: list[int] | None = None,
    progress: bool = True,
) -> dict[str, float]:
    """Fit ``head.weight`` (only ``trainable_rows`` when given); return loss/accuracy/seconds."""
    start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    h, vocab_lse, labels = h.float(), vocab_lse.float(), labels.long()
    frozen: torch.Tensor | None = None
    if trainable_rows is not None:
        keep = torch.ones(head.n_agents, dtype=torch.bool)
        keep[torch.tensor(trainable_rows)] = False
        frozen = keep
        saved = head.weight.detach().clone()
        saved_bias = head.bias.detach().clone()
    opt = torch.optim.AdamW(head.parameters_to_train(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    n = len(labels)
    weights: torch.Tensor | None = None
    if cfg.balance:
        counts = torch.bincount(labels, minlength=head.n_agents).float()
        weights = (1.0 / counts.clamp(min=1))[labels]
    epoch_loss = float("nan")
    bar = tqdm(range(cfg.epochs), desc="agent tokens", unit="epoch", disable=not progress)
    for _ in bar:
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for s in range(0, n, cfg.batch_size):
            idx = perm[s : s + cfg.batch_size]
            loss = head.loss(h[idx], vocab_lse[idx], labels[idx], None if weights is None else weights[idx])
            if cfg.margin > 0 and head.n_agents > 1:
                z = head.agent_logits(h[idx])
                loss = loss + cfg.margin_weight * margin_loss(z, labels[idx], cfg.margin, cfg.hard_negatives)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if frozen is not None:
                for p in head.parameters_to_train():
                    if p.grad is not None:
                        p.grad[frozen] = 0.0
            opt.step()
            if frozen is not None:
                with torch.no_grad():
                    head.weight[frozen] = saved[frozen]
                    head.bias[frozen] = saved_bias[frozen]
            total += float(loss.detach()) * len(idx)
        epoch_loss = total / max(n, 1)
        bar.set_postfix(loss=f"{epoch_loss:.3f}")
    with torch.no_grad():
        full_lp = head.log_probs(h, vocab_lse)
        pred = full_lp.argmax(1)
        metrics = {
            "loss": float(-full_lp.gather(1, labels.view(-1, 1)).mean()),
            "last_epoch_loss": epoch_loss,
            "train_acc": float((pred == labels).float().mean()),
            "agent_mass": float(full_lp.exp().sum(1).mean()),  # P(any agent token) under V ∪ A
            "examples": float(n),
            "seconds": time.perf_counter() - start,
        }
    log.info("trained %d agent rows on %d examples: %s", head.n_agents if trainable_rows is None else len(trainable_rows), n, metrics)
    return metrics
