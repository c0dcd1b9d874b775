"""Embedding router: MiniLM sentence embeddings of the demonstrations, like semantic-router.

Cheap and strong: a quick probe found a MiniLM centroid router beat AgentToken on the
frozen 135M backbone with the same 10 examples per domain, so every AgentToken figure is
reported next to this one.

Two modes, both giving a score for every agent of the pool:

- ``centroid``: cosine similarity of the task to the (re-normalised) mean embedding of
  each agent's demonstrations.
- ``knn``: for each agent, the mean cosine similarity of its ``k`` most similar
  demonstrations (a class-wise k-nearest-neighbour score, so agents outside a global top-k
  still get a score and the ranking stays complete).

Ranking = ``softmax(score / temperature)``. Cosine similarities of MiniLM live in a narrow
band (roughly 0.1-0.7), so the default temperature 0.05 keeps the distribution informative.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from functools import cached_property

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import CheckpointError, DataError
from agentlab.llm.config import LLMConfig
from agentlab.metaagent.baselines.common import (
    rankings,
    read_sidecar,
    softmax_rows,
    with_state,
    write_sidecar,
)
from agentlab.metaagent.data import TrainingSet
from agentlab.metaagent.router import Router, parse_options
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.llm.similarity import SentenceEncoder

log = logging.getLogger(__name__)

WEIGHTS = "embeddings.npz"


class EmbeddingRouterConfig(BaseModel):
    """Options of the embedding router (``Router(pool, llm, **options)``); the run options
    (progress, use_cache, seed) are accepted and mean nothing here: encoding is deterministic."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["centroid", "knn"] = "centroid"
    k: int = Field(3, ge=1, description="neighbours per agent in knn mode")
    temperature: float = Field(0.05, gt=0, description="softmax temperature on cosine similarity")
    batch_size: int = Field(64, ge=1)


class EmbeddingRouter(Router):
    """Nearest-centroid / kNN routing on normalised MiniLM embeddings."""

    name = "embedding"

    def __init__(self, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> None:
        super().__init__(pool, llm, **options)
        self.cfg = parse_options(EmbeddingRouterConfig, self.options, self.name)
        self.agents: list[str] = []
        self.examples: np.ndarray | None = None  # [n, dim]
        self.labels: np.ndarray | None = None  # [n] index into self.agents
        self.centroids: np.ndarray | None = None  # [len(agents), dim]

    @cached_property
    def encoder(self) -> SentenceEncoder:
        from agentlab.llm.similarity import default_encoder

        return default_encoder()

    def fit(self, train: TrainingSet) -> dict[str, float]:
        t0 = time.perf_counter()
        if len(train) == 0:
            raise DataError("empty training set: the embedding router needs demonstrations")
        texts = [with_state(t, s) for t, s in zip(train.texts, train.states)]
        emb = self.encoder.encode(texts, batch_size=self.cfg.batch_size)
        self.agents = list(train.agents)
        self.examples = emb
        self.labels = np.asarray(train.labels, dtype=np.int64)
        self._centroids()
        return {"seconds": time.perf_counter() - t0, "examples": float(len(train))}

    def _centroids(self) -> None:
        assert self.examples is not None and self.labels is not None
        cents = np.zeros((len(self.agents), self.examples.shape[1]), dtype=np.float32)
        for k in range(len(self.agents)):
            rows = self.examples[self.labels == k]
            if len(rows):
                c = rows.mean(axis=0)
                cents[k] = c / max(float(np.linalg.norm(c)), 1e-12)
        self.centroids = cents

    def scores(self, tasks: list[str], states: list[str | None] | None = None) -> np.ndarray:
        """Cosine-based score per (task, fitted agent); ``-inf`` for agents without examples."""
        if self.examples is None or self.centroids is None or self.labels is None:
            raise CheckpointError("the embedding router is not fitted; call fit() or load()")
        states = states or [None] * len(tasks)
        q = self.encoder.encode([with_state(t, s) for t, s in zip(tasks, states)], self.cfg.batch_size)
        out = np.full((len(tasks), len(self.agents)), -np.inf, dtype=np.float64)
        if self.cfg.mode == "centroid":
            has = np.bincount(self.labels, minlength=len(self.agents)) > 0
            out[:, has] = (q @ self.centroids.T)[:, has]
            return out
        sims = q @ self.examples.T  # [t, n]
        for k in range(len(self.agents)):
            cols = sims[:, self.labels == k]
            if cols.shape[1]:
                top = np.sort(cols, axis=1)[:, -min(self.cfg.k, cols.shape[1]) :]
                out[:, k] = top.mean(axis=1)
        return out

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        if not tasks:
            return []
        fitted = self.scores(tasks, states)
        names = self.pool.names
        idx = {a: i for i, a in enumerate(self.agents)}
        missing = [n for n in names if n not in idx]
        if missing:
            log.warning("embedding router has no examples for %d pool agent(s): %s", len(missing), ", ".join(missing))
        full = np.full((len(tasks), len(names)), -np.inf)
        for j, n in enumerate(names):
            if n in idx:
                full[:, j] = fitted[:, idx[n]]
        return rankings(names, softmax_rows(full / self.cfg.temperature))

    # ------------------------------------------------------------------ persistence
    def save(self, path: Path) -> None:
        if self.examples is None or self.labels is None:
            raise CheckpointError("nothing to save: the embedding router is not fitted", where=path)
        path = Path(path)
        from agentlab.fileio import atomic_path

        path.mkdir(parents=True, exist_ok=True)
        with atomic_path(path / WEIGHTS, suffix=".npz") as tmp:
            np.savez(tmp, examples=self.examples, labels=self.labels)
        write_sidecar(
            path,
            {
                "kind": self.name,
                "agents": self.agents,
                "encoder": self.encoder.model_id,
                "config": self.cfg.model_dump(),
            },
        )

    @classmethod
    def load(cls, path: Path, pool: AgentPool, llm: LLMConfig | None = None) -> EmbeddingRouter:
        path = Path(path)
        rec = read_sidecar(path, cls.name)
        router = cls(pool, llm, **rec.get("config", {}))
        try:
            with np.load(path / WEIGHTS) as z:
                router.examples = z["examples"].astype(np.float32)
                router.labels = z["labels"].astype(np.int64)
        except (OSError, KeyError, ValueError) as exc:
            raise CheckpointError(f"cannot read saved embeddings ({exc})", where=path / WEIGHTS) from None
        router.agents = list(rec["agents"])
        if router.labels.max(initial=-1) >= len(router.agents) or len(router.labels) != len(router.examples):
            raise CheckpointError("saved embeddings do not match the agent list", where=path / WEIGHTS)
        if rec.get("encoder") != router.encoder.model_id:
            raise CheckpointError(
                f"saved with encoder {rec.get('encoder')}, but this encoder is {router.encoder.model_id}",
                where=path,
            )
        router._centroids()
        return router
