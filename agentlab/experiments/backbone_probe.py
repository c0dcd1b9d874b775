"""Do a backbone's hidden states separate domains? Nearest-centroid and linear-probe accuracy on the same split.

AgentToken can only be as good as the state ``h`` its head reads. To tell "the bigger model
represents the application better" apart from "AgentToken's training is the bottleneck", two
simple classifiers are fitted on ``h`` of the training demonstrations (labelled with their
agent's domain) and judged by domain on the evaluation tasks:

- **nearest centroid**: standardise features by the training mean and spread, then cosine
  similarity to each domain's mean (the same rule as the MiniLM embedding router);
- **linear probe**: multinomial logistic regression on the standardised features (full batch,
  L2-regularised, a fixed number of L-BFGS steps: deterministic, seconds on a CPU).

``h`` is exactly AgentToken's feature (the router prompt's last position after the final norm,
:class:`~agentlab.metaagent.features.TextFeatureExtractor`), so the probe and the router see the
same numbers. The same two classifiers on MiniLM sentence embeddings give the reference line.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from agentlab.toolkits.prior import fit_logistic

log = logging.getLogger(__name__)


@dataclass
class ProbeScore:
    """Accuracy of the two classifiers on one evaluation set."""

    centroid: float
    linear: float
    tasks: int


def _standardise(train: torch.Tensor, *others: torch.Tensor) -> list[torch.Tensor]:
    mean, std = train.mean(0, keepdim=True), train.std(0, keepdim=True).clamp_min(1e-6)
    return [(x - mean) / std for x in (train, *others)]


def nearest_centroid(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor, classes: int) -> torch.Tensor:
    """Predicted class per test row: cosine to the class means of the standardised training rows."""
    tr, te = _standardise(train_x.float(), test_x.float())
    cents = torch.stack([tr[train_y == k].mean(0) if (train_y == k).any() else torch.zeros(tr.shape[1])
                         for k in range(classes)])
    cents = torch.nn.functional.normalize(cents, dim=1)
    sims = torch.nn.functional.normalize(te, dim=1) @ cents.T
    sims[:, ~torch.stack([(train_y == k).any() for k in range(classes)])] = -float("inf")
    return sims.argmax(1)


def linear_probe(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor, classes: int, *,
                 l2: float = 1e-2, steps: int = 100) -> torch.Tensor:
    """Predicted class per test row from an L2-regularised logistic regression fitted with L-BFGS."""
    tr, te = _standardise(train_x.float(), test_x.float())
    w, b = fit_logistic(tr.numpy(), train_y.numpy(), classes, l2=l2, max_iter=steps)
    return torch.from_numpy(te.double().numpy() @ w + b).argmax(1)


def score(train_x: torch.Tensor, train_domains: Sequence[str], test_x: torch.Tensor, test_domains: Sequence[str]) -> ProbeScore:
    """Both classifiers fitted on (``train_x``, domains) and judged on ``test_x`` by domain."""
    names = sorted(set(train_domains))
    index = {d: i for i, d in enumerate(names)}
    y = torch.tensor([index[d] for d in train_domains])
    gold = list(test_domains)

    def acc(pred: torch.Tensor) -> float:
        return sum(names[int(p)] == g for p, g in zip(pred, gold)) / max(len(gold), 1)

    return ProbeScore(acc(nearest_centroid(train_x, y, test_x, len(names))),
                      acc(linear_probe(train_x, y, test_x, len(names))), len(gold))
