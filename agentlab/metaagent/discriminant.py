"""Agent rows from a shrinkage linear discriminant: a closed-form start for AgentToken's ``W_A``.

With a few dozen demonstrations per agent, gradient descent from a name embedding fits the
training set perfectly (train accuracy ~1.0) but ranks held-out demonstrations poorly: the
hidden states of a small LM are strongly anisotropic (a few directions carry most of the
variance), and the rows learn those directions. Linear discriminant analysis is the Bayes rule
for classes that are Gaussian with a shared covariance, and it is *linear in h*:

    z_a = w_a·h + b_a,   w_a = Σ_γ⁻¹ μ_a,   b_a = −½ μ_a·Σ_γ⁻¹ μ_a,
    Σ_γ = (1 − γ)·Σ + γ·(tr Σ / d)·I,

with ``μ_a`` agent a's mean state and ``Σ`` the pooled within-agent covariance, shrunk towards a
scaled identity by ``γ`` (Ledoit–Wolf style: needed when the examples are about as many as the
dimensions). So the discriminant *is* an agent-token row plus a per-agent bias on the frozen
next-token state: the head keeps ``[W_V h; W_A h + b]`` and greedy decoding over ``V ∪ A`` is
unchanged. The rows' common scale and offset against the word logits are then fitted under the
paper's loss (cross-entropy of the gold agent token over ``V ∪ A``), so the agent tokens win where
they should; :func:`agentlab.metaagent.train.train_head` may fine-tune from there.
"""

from __future__ import annotations

import logging

import torch

from agentlab.errors import DataError

log = logging.getLogger(__name__)


def shrunk_covariance(h: torch.Tensor, labels: torch.Tensor, means: torch.Tensor, shrinkage: float) -> torch.Tensor:
    """Pooled within-class covariance of ``h`` shrunk towards ``(tr Σ / d)·I`` by ``shrinkage`` in [0, 1]."""
    resid = h - means[labels]
    dof = max(len(labels) - int(labels.unique().numel()), 1)
    cov = resid.T @ resid / dof
    scale = float(cov.diagonal().mean())
    eye = torch.eye(cov.shape[0], dtype=cov.dtype)
    # a tiny ridge keeps the solve defined at shrinkage 0
    return (1.0 - shrinkage) * cov + (shrinkage + 1e-6) * scale * eye


def discriminant_rows(
    h: torch.Tensor, labels: torch.Tensor, n_agents: int, shrinkage: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W [n_agents, d], b [n_agents])`` of the shrinkage LDA on ``h`` (float64 inside, fp32 out).

    Every agent needs at least one example (:class:`~agentlab.errors.DataError` otherwise).
    """
    if not 0.0 <= shrinkage <= 1.0:
        raise DataError(f"LDA shrinkage must lie in [0, 1], not {shrinkage}")
    x, y = h.double(), labels.long()
    counts = torch.bincount(y, minlength=n_agents)
    if bool((counts == 0).any()):
        missing = [int(i) for i in torch.nonzero(counts == 0).flatten()]
        raise DataError(f"LDA rows need examples of every agent; none for row(s) {missing}")
    means = torch.zeros(n_agents, x.shape[1], dtype=torch.float64).index_add_(0, y, x) / counts[:, None]
    cov = shrunk_covariance(x, y, means, shrinkage)
    w = torch.linalg.solve(cov, means.T).T
    b = -0.5 * (w * means).sum(1)
    return w.float(), b.float()


def fit_scale(
    w: torch.Tensor, b: torch.Tensor, h: torch.Tensor, vocab_lse: torch.Tensor, labels: torch.Tensor, steps: int = 100
) -> tuple[float, float]:
    """``(s, c)`` minimising the cross-entropy over ``V ∪ A`` of the gold agent with logits ``s·(W h + b) + c``."""
    z0 = (h.float() @ w.T + b).detach()
    lse, y = vocab_lse.float(), labels.long()
    log_s = torch.zeros((), requires_grad=True)
    c = torch.zeros((), requires_grad=True)
    opt = torch.optim.LBFGS([log_s, c], lr=1.0, max_iter=steps, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        z = log_s.exp() * z0 + c
        nll = torch.logsumexp(torch.cat([lse[:, None], z], 1), 1) - z.gather(1, y[:, None])[:, 0]
        loss = nll.mean()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    return float(log_s.detach().exp()), float(c.detach())


def lda_init(
    h: torch.Tensor, vocab_lse: torch.Tensor, labels: torch.Tensor, n_agents: int, shrinkage: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """Starting ``(W_A, b)``: the shrinkage discriminant, scaled and offset under the ``V ∪ A`` loss."""
    w, b = discriminant_rows(h, labels, n_agents, shrinkage)
    s, c = fit_scale(w, b, h, vocab_lse, labels)
    log.info("LDA agent rows: shrinkage %.2f, scale %.3g, offset %.3g", shrinkage, s, c)
    return s * w, s * b + c
