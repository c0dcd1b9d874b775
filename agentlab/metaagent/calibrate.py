"""Temperature calibration of AgentToken's agent ranking, so its probabilities mean something.

Trained agent rows fit their training set almost perfectly (train accuracy ~1.0), so the
softmax over the agent rows is far too sure of itself: the manager's top-K and a product of
experts with another router both need probabilities whose size says how often they are right.
The temperature is fitted on *out-of-fold* logits (k heads, each trained without one fold of
the training examples), by minimising the negative log-likelihood over a fixed grid. A
temperature divides logits, so it never changes which agent ranks first, nor the greedy
decoding over ``V ∪ A`` (which compares raw logits).
"""

from __future__ import annotations

import logging

import torch

from agentlab.metaagent.train import TrainConfig, start_head, train_head

log = logging.getLogger(__name__)

#: Candidate temperatures (log-spaced, 0.25 .. 64).
GRID: tuple[float, ...] = tuple(float(2 ** (e / 4)) for e in range(-8, 25))


def fit_temperature(logits: torch.Tensor, labels: torch.Tensor, grid: tuple[float, ...] = GRID) -> float:
    """The grid temperature T minimising the NLL of ``softmax(logits / T)`` at ``labels``."""
    logits, labels = logits.float(), labels.long()
    best, best_nll = 1.0, float("inf")
    for t in grid:
        nll = float(torch.nn.functional.cross_entropy(logits / t, labels))
        if nll < best_nll:
            best, best_nll = t, nll
    return best


def out_of_fold_logits(
    h: torch.Tensor,
    vocab_lse: torch.Tensor,
    labels: torch.Tensor,
    groups: torch.Tensor,
    init: torch.Tensor,
    cfg: TrainConfig,
    folds: int = 4,
) -> torch.Tensor:
    """Agent logits of every example from a head trained without its fold.

    ``groups[i]`` names the original text of row i (augmented copies of one text share a
    group and a fold, so no text is scored by a head that saw it). Under ``init="lda"`` each
    fold's head starts from the discriminant of that fold's training rows only.
    """
    out = torch.empty(len(labels), init.shape[0])
    fold_of = groups % folds
    for f in range(folds):
        test = fold_of == f
        if not bool(test.any()) or bool(test.all()):
            continue
        head = start_head(cfg, init, h[~test], vocab_lse[~test], labels[~test])
        train_head(head, h[~test], vocab_lse[~test], labels[~test], cfg, progress=False)
        with torch.no_grad():
            out[test] = head.agent_logits(h[test])
    return out


def calibrate(
    h: torch.Tensor,
    vocab_lse: torch.Tensor,
    labels: torch.Tensor,
    groups: torch.Tensor,
    init: torch.Tensor,
    cfg: TrainConfig,
    folds: int = 4,
) -> tuple[float, float, torch.Tensor]:
    """(temperature, out-of-fold top-1 accuracy, the out-of-fold logits) for a head trained with ``cfg`` from ``init``."""
    logits = out_of_fold_logits(h, vocab_lse, labels, groups, init, cfg, folds)
    t = fit_temperature(logits, labels)
    acc = float((logits.argmax(1) == labels).float().mean())
    log.info("calibrated temperature %.2f (out-of-fold accuracy %.3f over %d folds)", t, acc, folds)
    return t, acc, logits
