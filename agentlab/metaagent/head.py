"""The AgentToken head: agent rows ``W_A`` appended to a frozen LM head ``W_V``.

Next-token logits are ``[W_V h ; W_A h + b_A + b]`` where h is the backbone's final hidden state
(the LM head's input), b a fixed scalar logit bias and ``b_A`` an optional per-agent bias (zero
unless the rows start from a linear discriminant, :mod:`agentlab.metaagent.discriminant`).
``W_A`` (fp32, and ``b_A`` when the head has one) is the only trainable parameter. The word part is never touched, so masking the agent rows gives back the
original language model exactly; training only needs ``logsumexp(W_V h)`` per example,
which the frozen backbone provides once (see :mod:`agentlab.metaagent.cache`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class AgentHead(nn.Module):
    """``|A|`` agent token embeddings scored against h; word logits come from the frozen head."""

    def __init__(
        self, n_agents: int, dim: int, *, logit_bias: float = 0.0, init: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        weight = torch.zeros(n_agents, dim) if init is None else init.detach().float().clone()
        if weight.shape != (n_agents, dim):
            raise ValueError(f"init has shape {tuple(weight.shape)}, expected {(n_agents, dim)}")
        self.weight = nn.Parameter(weight)  # W_A, fp32
        self.logit_bias = float(logit_bias)
        #: whether ``bias`` is a trained per-agent bias (else a zero buffer, the paper's head)
        self.has_bias = bias is not None
        if bias is not None:
            if tuple(bias.shape) != (n_agents,):
                raise ValueError(f"bias has shape {tuple(bias.shape)}, expected {(n_agents,)}")
            self.bias = nn.Parameter(bias.detach().float().clone())
        else:
            self.register_buffer("bias", torch.zeros(n_agents), persistent=False)

    @property
    def n_agents(self) -> int:
        return int(self.weight.shape[0])

    def parameters_to_train(self) -> list[torch.Tensor]:
        """``W_A``, and ``b_A`` when the head has a per-agent bias."""
        return [self.weight, self.bias] if self.has_bias else [self.weight]

    def agent_logits(self, h: torch.Tensor) -> torch.Tensor:
        """``W_A h + b_A + b``: ``[n, |A|]`` (``b_A`` is zero without a per-agent bias)."""
        z = h.float() @ self.weight.T
        if self.has_bias:
            z = z + self.bias
        return z + self.logit_bias

    def full_logits(self, h: torch.Tensor, word_logits: torch.Tensor, *, mask_agents: bool = False) -> torch.Tensor:
        """Logits over ``V ∪ A`` (``[n, |V| + |A|]``); agent rows at ``-inf`` when masked."""
        agent = self.agent_logits(h)
        if mask_agents:
            agent = torch.full_like(agent, float("-inf"))
        return torch.cat([word_logits.float(), agent], dim=-1)

    def log_probs(self, h: torch.Tensor, vocab_lse: torch.Tensor) -> torch.Tensor:
        """``log P(agent_k | prefix)`` under the full ``V ∪ A`` softmax, ``[n, |A|]``."""
        z = self.agent_logits(h)
        return z - torch.logsumexp(torch.cat([vocab_lse.float().unsqueeze(1), z], dim=1), dim=1, keepdim=True)

    def loss(
        self, h: torch.Tensor, vocab_lse: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean cross-entropy of the gold agent token over the full vocabulary.

        ``-(W_A h)_y + logsumexp([logsumexp(W_V h), W_A h])`` equals the cross-entropy of
        target ``|V| + y`` over ``[W_V h; W_A h]`` because logsumexp nests. Optional per-example
        ``weights`` give a weighted mean (class balancing).
        """
        nll = -self.log_probs(h, vocab_lse).gather(1, labels.view(-1, 1)).squeeze(1)
        if weights is None:
            return nll.mean()
        return (nll * weights).sum() / weights.sum()


def name_mean_init(names: list[str], tokenizer: Any, embeddings: torch.Tensor) -> torch.Tensor:
    """Each agent's row = mean input embedding of the tokens of its name (split at capitals).

    ``SheetAgent`` is embedded as the tokens of ``" Sheet Agent"``, so the row starts near
    what the model already associates with the name.
    """
    import re

    rows = []
    for name in names:
        words = " " + " ".join(re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name) or [name])
        ids = tokenizer(words, add_special_tokens=False)["input_ids"]
        rows.append(embeddings[torch.tensor(ids)].float().mean(0))
    return torch.stack(rows)
