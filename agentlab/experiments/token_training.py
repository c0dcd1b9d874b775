"""Helpers of the token-training study (notebook 03): a stratified hold-out split and neighbours in token space.

Kept in the package (not in notebook cells) so they are tested.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from agentlab.errors import ConfigError

if TYPE_CHECKING:
    from agentlab.metaagent.data import TrainingSet


def holdout_split(train: TrainingSet, holdout: float, seed: int = 0) -> tuple[TrainingSet, TrainingSet]:
    """Hold out ``holdout`` of each agent's examples (rounded up, but never an agent's last one).

    Returns (train, held_out); both keep the full agent list so labels stay comparable.
    """
    if not 0.0 <= holdout < 1.0:
        raise ConfigError(f"holdout must be in [0, 1), got {holdout}")
    rng = random.Random(seed)
    by_agent: dict[int, list[int]] = {}
    for i, y in enumerate(train.labels):
        by_agent.setdefault(y, []).append(i)
    keep: list[int] = []
    out: list[int] = []
    for idx in by_agent.values():
        idx = idx[:]
        rng.shuffle(idx)
        n_out = min(math.ceil(holdout * len(idx)), len(idx) - 1) if holdout > 0 else 0
        out.extend(idx[:n_out])
        keep.extend(idx[n_out:])
    return train.subset(sorted(keep)), train.subset(sorted(out))


def nearest_neighbours(vectors: np.ndarray, names: Sequence[str], k: int = 3) -> dict[str, list[tuple[str, float]]]:
    """For each row, the ``k`` most cosine-similar other rows: ``{name: [(other, cos), ...]}``."""
    x = np.asarray(vectors, dtype=np.float64)
    if len(names) != len(x):
        raise ValueError(f"{len(names)} names for {len(x)} vectors")
    norm = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    sim = norm @ norm.T
    np.fill_diagonal(sim, -np.inf)
    out: dict[str, list[tuple[str, float]]] = {}
    for i, n in enumerate(names):
        order = np.argsort(-sim[i])[: min(k, len(names) - 1)]
        out[n] = [(names[j], float(sim[i, j])) for j in order]
    return out
