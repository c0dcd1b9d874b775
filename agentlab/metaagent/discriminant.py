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


def discriminant_rows(
    h: torch.Tensor, labels: torch.Tensor, n_agents: int, shrinkage: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W [n_agents, d], b [n_agents])`` of the shrinkage LDA on ``h`` (float64 inside, fp32 out).

    The agent means and ``Σ_γ`` are scikit-learn's (``LinearDiscriminantAnalysis(solver="lsqr")``:
    the class covariances weighted by their share of the examples, each shrunk towards its
    ``tr/d·I``, which sums to the pooled one shrunk towards ``tr Σ / d·I``); the rows are solved here,
    without its log-prior intercept, for any number of agents (it keeps one row for two classes).
    Every agent needs at least one example (:class:`~agentlab.errors.DataError` otherwise).
    """
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    if not 0.0 <= shrinkage <= 1.0:
        raise DataError(f"LDA shrinkage must lie in [0, 1], not {shrinkage}")
    y = labels.long()
    counts = torch.bincount(y, minlength=n_agents)
    if bool((counts == 0).any()):
        missing = [int(i) for i in torch.nonzero(counts == 0).flatten()]
        raise DataError(f"LDA rows need examples of every agent; none for row(s) {missing}")
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(h.detach().double().cpu().numpy(), y.cpu().numpy())
    n = len(y)  # sklearn's covariance divides by n; the pooled estimate divides by n - agents
    means, cov = torch.from_numpy(lda.means_), torch.from_numpy(lda.covariance_) * n / max(n - n_agents, 1)
    w = torch.linalg.lstsq(cov, means.T).solution.T
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
