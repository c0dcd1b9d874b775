"""The hybrid router: AgentToken's greedy decoding over ``V ∪ A`` with a sentence-encoder prior on the agent rows.

A product of experts. AgentToken gives ``p_AT(a) ∝ exp(z_a / T)`` (``z = W_A h``, ``T`` its
calibrated temperature) and the embedding router ``p_E(a)`` (MiniLM similarity to each
agent's demonstrations, softmax at its own calibrated temperature). The hybrid decodes with
agent logits ``z_a + λ·T·(log p_E(a) − max_b log p_E(b))`` at every position, i.e. with
``p(a) ∝ p_AT(a)·p_E(a)^λ``: still one greedy pass over ``V ∪ A`` that stops at the first agent
token, still one agent row per agent (enrolment adds one row to AgentToken and one centroid to
the encoder). The prior is zero for the encoder's favourite, so it only lowers the others and
never makes an agent token win over words where AgentToken's own best agent would not.

State: an AgentToken checkpoint (``tokens.*``) plus ``embedding/`` (the encoder's fitted
examples, optional) and ``hybrid.json`` (λ and the encoder temperature). Without ``embedding/``
(the shipped ``data/tokens`` holds only ``hybrid.json``, or a plain AgentToken checkpoint),
loading fits the encoder on the documents' seed demonstrations, the data the shipped tokens
were trained on (seconds). λ is chosen at fit time by out-of-fold accuracy on the training
examples (:func:`choose_weight`), never on evaluation tasks.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import CheckpointError
from agentlab.llm.config import LLMConfig
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.baselines.embedding import EmbeddingRouter
from agentlab.metaagent.data import TrainingSet
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.router import Router, parse_options
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)

SIDECAR = "hybrid.json"


class HybridOptions(BaseModel):
    """The hybrid's own options; ``agenttoken`` / ``embedding`` go to the two experts' constructors."""

    model_config = ConfigDict(extra="forbid")

    #: λ, the exponent of the encoder's expert (0 = AgentToken alone); None: chosen at fit time from
    #: :data:`WEIGHTS` by out-of-fold accuracy on the training examples (1.0 when that is impossible)
    weight: float | None = Field(None, ge=0)
    #: fit the encoder's temperature on out-of-fold similarities (else its configured temperature)
    calibrate: bool = True
    agenttoken: dict[str, Any] = Field(default_factory=lambda: {"calibrate": True})
    embedding: dict[str, Any] = Field(default_factory=dict)


#: Candidate λ for ``weight=None``.
WEIGHTS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def choose_weight(
    token_logits: torch.Tensor, token_temperature: float, embed_scores: np.ndarray, embed_temperature: float,
    labels: np.ndarray, grid: tuple[float, ...] = WEIGHTS,
) -> float:
    """The λ of ``grid`` whose product of experts ranks the gold agent first most often (out-of-fold
    scores of both experts; ties go to the lower negative log-likelihood)."""
    logp = torch.log_softmax(torch.from_numpy(embed_scores).float() / embed_temperature, dim=1)
    y = torch.from_numpy(labels).long()
    best, key = 1.0, (-1.0, 0.0)
    for lam in grid:
        z = token_logits.float() / token_temperature + lam * logp
        acc = float((z.argmax(1) == y).float().mean())
        nll = float(torch.nn.functional.cross_entropy(z, y))
        if (acc, -nll) > key:
            best, key = lam, (acc, -nll)
    log.info("hybrid weight λ=%.2f (out-of-fold accuracy %.3f)", best, key[0])
    return best


def embedding_oof_scores(emb: np.ndarray, labels: np.ndarray, n_agents: int, folds: int = 4) -> np.ndarray:
    """Nearest-centroid cosine scores of every example from centroids built without its fold (example i in fold i % folds)."""
    scores = np.zeros((len(labels), n_agents), dtype=np.float32)
    fold = np.arange(len(labels)) % folds
    for f in range(folds):
        test, train = fold == f, fold != f
        cents = np.zeros((n_agents, emb.shape[1]), dtype=np.float32)
        for k in range(n_agents):
            rows = emb[train & (labels == k)]
            if len(rows):
                c = rows.mean(0)
                cents[k] = c / max(float(np.linalg.norm(c)), 1e-12)
        scores[test] = emb[test] @ cents.T
    return scores


def embedding_temperature(scores: np.ndarray, labels: np.ndarray) -> float:
    """Temperature of ``softmax(cos / T)`` minimising the NLL of (out-of-fold) similarity ``scores``."""
    from agentlab.metaagent.calibrate import fit_temperature

    grid = tuple(float(0.005 * 2 ** (e / 4)) for e in range(0, 33))  # 0.005 .. 1.28
    return fit_temperature(torch.from_numpy(scores), torch.from_numpy(labels), grid)


def carry_sidecar(base: Path, out: Path) -> bool:
    """After ``agentlab train --add`` wrote ``base`` plus one row to ``out``: give ``out`` the hybrid
    settings of ``base`` (λ and the encoder temperature, ``hybrid.json``); True when there were some.

    Why: the hybrid is the store's default router, and enrolment adds one row (and one encoder
    centroid, fitted from the seeds on load) to the store it joins; without the sidecar the
    hybrid on ``out`` would route with the default λ = 1 (the shipped Gemma tokens use 0.5) and a
    re-fitted temperature, so enrolling an agent would silently change how every task is routed.
    ``embedding/`` is not carried: the encoder fitted on ``base``'s agents has no centroid for the
    new one."""
    src, dst = Path(base) / SIDECAR, Path(out) / SIDECAR
    if not src.is_file() or src.resolve() == dst.resolve():
        return src.is_file()
    from agentlab.fileio import atomic_write_text

    atomic_write_text(dst, src.read_text(encoding="utf-8"))
    return True


class HybridRouter(Router):
    """AgentToken decoding with the embedding router's log-probabilities as a prior (see module doc)."""

    name = "hybrid"

    def __init__(self, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> None:
        super().__init__(pool, llm, **options)
        self.cfg = parse_options(HybridOptions, self.options, self.name)
        run = self.run_options.model_dump()
        self.token = AgentTokenRouter(pool, llm, **run, **self.cfg.agenttoken)
        self.embed = EmbeddingRouter(pool, llm, **run, **self.cfg.embedding)
        self.embed_temperature = self.embed.cfg.temperature
        self.weight = 1.0 if self.cfg.weight is None else self.cfg.weight

    def trainable_parameters(self) -> int:
        return self.token.trainable_parameters()

    def fit(self, train: TrainingSet) -> dict[str, float]:
        t0 = time.perf_counter()
        m = dict(self.token.fit(train))
        self.embed.fit(train)
        assert self.embed.examples is not None and self.embed.labels is not None
        oof = embedding_oof_scores(self.embed.examples, self.embed.labels, len(self.embed.agents))
        if self.cfg.calibrate:
            self.embed_temperature = embedding_temperature(oof, self.embed.labels)
        self.weight = 1.0 if self.cfg.weight is None else self.cfg.weight
        if self.cfg.weight is None and self.token.oof_logits is not None:
            self.weight = choose_weight(self.token.oof_logits, self.token.temperature, oof, self.embed_temperature, self.embed.labels)
        m.update(embed_temperature=self.embed_temperature, weight=self.weight, seconds=time.perf_counter() - t0)
        return m

    def prior(self, tasks: list[str], states: list[str | None] | None = None) -> torch.Tensor:
        """``λ·T·(log p_E − max log p_E)`` per task, columns in AgentToken's agent order."""
        scores = self.embed.scores(tasks, states)  # [tasks, embed.agents], -inf for agents without examples
        col = {a: i for i, a in enumerate(self.embed.agents)}
        z = np.full((len(tasks), len(self.token.agents)), -np.inf)
        for j, a in enumerate(self.token.agents):
            if a in col:
                z[:, j] = scores[:, col[a]]
        z = z / self.embed_temperature
        finite = np.isfinite(z)
        floor = np.where(finite, z, np.inf).min(axis=1, keepdims=True)
        z = np.where(finite, z, floor)  # an agent the encoder cannot score gets its lowest score
        logp = z - np.logaddexp.reduce(z, axis=1, keepdims=True)
        logp -= logp.max(axis=1, keepdims=True)
        return torch.from_numpy(self.weight * self.token.temperature * logp).float()

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        if not tasks:
            return []
        logits = self.token.agent_logits(tasks, states) + self.prior(tasks, states)
        return [self.token._ranking(z) for z in logits]

    def _choose(self, tasks: list[str], states: list[str | None] | None = None) -> list[RouteResult]:
        return self.token.decode(tasks, states, prior=self.prior(tasks, states))

    # ------------------------------------------------------------------ persistence
    def save(self, path: Path, *, encoder: bool = True) -> None:
        """Tokens, ``hybrid.json`` and (``encoder=True``) the encoder's examples under ``embedding/``;
        without them, loading refits the encoder on the seed demonstrations and document requests."""
        from agentlab.fileio import atomic_write_json

        path = Path(path)
        self.token.save(path)
        if encoder:
            self.embed.save(path / "embedding")
        atomic_write_json(path / SIDECAR, {"kind": self.name, "weight": self.weight, "embed_temperature": self.embed_temperature})

    @classmethod
    def load(cls, path: Path, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> HybridRouter:
        path = Path(path)
        side = path / SIDECAR
        rec: dict[str, Any] = {}
        if side.is_file():
            try:
                rec = json.loads(side.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise CheckpointError(f"corrupt hybrid sidecar ({exc})", where=side) from None
        opts = {"weight": rec["weight"]} if "weight" in rec else {}
        router = cls(pool, llm, **{**opts, **options})
        router.token = AgentTokenRouter.load(path, pool, llm, progress=router.run_options.progress)
        if (path / "embedding").is_dir():
            router.embed = EmbeddingRouter.load(path / "embedding", pool, llm)
            router.embed_temperature = float(rec.get("embed_temperature", router.embed.cfg.temperature))
            return router
        if "embed_temperature" in rec:
            router.embed_temperature = float(rec["embed_temperature"])
        from agentlab.metaagent.data import load_training_set

        train = load_training_set(pool, source="seed").restrict(router.token.agents)
        router.embed.fit(train)
        if router.cfg.calibrate and "embed_temperature" not in rec:
            assert router.embed.examples is not None and router.embed.labels is not None
            oof = embedding_oof_scores(router.embed.examples, router.embed.labels, len(router.embed.agents))
            router.embed_temperature = embedding_temperature(oof, router.embed.labels)
        log.info("%s: no fitted encoder beside the tokens; fitted it on %d seed/document examples", path, len(train))
        return router
