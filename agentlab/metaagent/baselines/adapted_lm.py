"""Adapted-LM routers: train a small adapter on the frozen LM, rank agents by answer likelihood.

What the two parameter-efficient baselines (LoRA, prompt tuning) share.

Both put a small trainable piece on the frozen backbone and are trained to *generate* the
answer ``###Name###`` with the ordinary language-model loss on the answer tokens. Ranking
scores every pool agent's answer string in one packed forward pass (:mod:`agentlab.llm.scoring`) and
normalises the log-likelihoods over the pool. The opening ``###`` every answer shares is
teacher-forced as part of the prompt (it does not change the ranking; see
:func:`agentlab.llm.scoring.split_common_prefix`).

Prompt: ``data/prompts/metaagent/router_ft.txt`` by default, a one-line instruction plus the task.
AgentToken's longer instruction header (``metaagent/router_agenttoken``) does not help a model that
learns the routing from data, and triples the per-example tokens, i.e. the CPU training
time; pass ``template="metaagent/router_agenttoken"`` to give the baselines exactly AgentToken's
input (the training-cost benchmark does).

CPU budget: examples are bucketed by length so a batch carries little padding, only the
answer positions are projected onto the vocabulary, and a trained adapter is cached under
``cache_dir()/routers/<kind>/<key>`` where the key hashes the backbone, template, options
and the training data, so ``agentlab route --router lora`` trains once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import time
from abc import abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any
from functools import cached_property

import torch
from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import CheckpointError, DataError
from agentlab.llm.config import LLMConfig
from agentlab.metaagent.baselines.common import rankings, read_sidecar, softmax_rows, write_sidecar
from agentlab.llm.scoring import (
    Packed,
    candidate_logprobs,
    forward_packed,
    pack,
    split_common_prefix,
)
from agentlab.metaagent.data import TrainingSet
from agentlab.metaagent.manager import render_state
from agentlab.dialogue.templates import PromptTemplate, check_recorded, load_template
from agentlab.metaagent.router import Router, parse_options
from agentlab.paths import cache_dir
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.llm.local import LocalHFBackend

log = logging.getLogger(__name__)

#: Bump when training or scoring changes meaning, so cached adapters are not reused.
FORMAT_VERSION = 1


#: Names that fix which answer prefix is teacher-forced (any pool shares at least ``###``).
ANSWER_PROBE = ("A", "Zz9")


def answer_text(name: str) -> str:
    """The answer every LM baseline produces and is scored on."""
    return f"###{name}###"


class AdapterConfig(BaseModel):
    """Options shared by the LoRA and prompt-tuning routers."""

    model_config = ConfigDict(extra="forbid")

    template: str = Field("metaagent/router_ft", description="router prompt template in data/prompts/")
    epochs: int = Field(2, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    batch_size: int = Field(16, ge=1)
    eval_batch_size: int = Field(8, ge=1)

    def key_fields(self, seed: int) -> dict[str, Any]:
        """The options that change what is trained (not how results are stored/shown), with the seed."""
        return {**self.model_dump(exclude={"eval_batch_size"}), "seed": seed}


class AdaptedLMRouter(Router):
    """A trainable adapter on the frozen LM, agents ranked by answer likelihood; subclasses define the adapter.

    Run options: ``use_cache`` reuses/stores the trained adapter under ``cache_dir()``;
    ``seed`` (default 0) seeds the adapter's initialisation and the batch order.
    """

    #: seed when the run options give none
    DEFAULT_SEED = 0

    config_cls: type[AdapterConfig] = AdapterConfig
    weights_file = "adapter_model.safetensors"

    def __init__(self, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> None:
        super().__init__(pool, llm, **options)
        self.cfg = parse_options(self.config_cls, self.options, self.name)
        self.seed = self.DEFAULT_SEED if self.run_options.seed is None else self.run_options.seed
        self.template: PromptTemplate = load_template(self.cfg.template)
        self.trained_on: list[str] = []
        self.fit_info: dict[str, Any] = {}
        self._ready = False

    # ------------------------------------------------------------------ subclass hooks
    @abstractmethod
    def _build(self, fresh: bool) -> None:
        """Create the adapter (random/initialised when ``fresh``) on top of the backbone."""

    @abstractmethod
    def _model(self) -> torch.nn.Module:
        """The module to run (backbone with the adapter applied)."""

    @abstractmethod
    def _virtual(self) -> torch.Tensor | None:
        """Virtual-token embeddings ``[n, d]`` to prepend, or None."""

    @abstractmethod
    def _trainable(self) -> list[torch.nn.Parameter]:
        """The parameters the optimiser updates (the adapter is built)."""

    def trainable_parameters(self) -> int:
        """Size of the adapter (0 before it is built by :meth:`prepare`, :meth:`fit` or :meth:`load`)."""
        return sum(p.numel() for p in self._trainable()) if self._ready else 0

    @abstractmethod
    def _save_weights(self, folder: Path) -> None: ...

    @abstractmethod
    def _load_weights(self, folder: Path) -> None: ...

    @property
    def n_virtual(self) -> int:
        return 0

    # ------------------------------------------------------------------ backbone and prompts
    @cached_property
    def backend(self) -> LocalHFBackend:
        from agentlab.llm import load_local

        return load_local(self.llm)

    def prepare(self) -> None:
        """Load the backbone and build a fresh adapter (idempotent)."""
        if not self._ready:
            torch.manual_seed(self.seed)
            self._build(fresh=True)
            self._ready = True

    def prompt(self, task: str, state: str | None = None) -> str:
        # {state} is optional in a router template (as for AgentToken); {task} is required
        return self.template.render_offered({"task": task.strip(), "state": render_state(state)})

    def _encode(self, text: str) -> list[int]:
        return list(self.backend.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _prompt_ids(self, tasks: list[str], states: list[str | None]) -> list[list[int]]:
        ids = [self._encode(self.prompt(t, s)) for t, s in zip(tasks, states)]
        limit = self.backend.context_length
        for t, x in zip(tasks, ids):
            if len(x) + self.n_virtual + 32 > limit:
                raise DataError(f"task is {len(x)} tokens with the prompt; the model's context is {limit}: {t[:60]!r}")
        return ids

    def _answers(self, names: list[str]) -> tuple[list[int], list[list[int]]]:
        """(token prefix shared by all answers, each answer's remaining tokens).

        The shared prefix is computed over :data:`ANSWER_PROBE` plus ``names`` so training
        (a few agents) and ranking (the pool) split answers identically.
        """
        ids = [self._encode(answer_text(n)) for n in names]
        probe = [self._encode(answer_text(n)) for n in ANSWER_PROBE]
        forced, _ = split_common_prefix(ids + probe)
        return forced, [x[len(forced) :] for x in ids]

    def _logprobs(self, packed: Packed) -> torch.Tensor:
        logits = forward_packed(self._model(), packed, virtual=self._virtual())
        return candidate_logprobs(logits, packed)

    # ------------------------------------------------------------------ training
    def cache_key(self, train: TrainingSet) -> str:
        h = hashlib.sha256()
        record = {
            "kind": self.name,
            "format": FORMAT_VERSION,
            "backbone": [self.backend.model_id, self.backend.fingerprint],
            "template": self.template.sha256,
            "config": self.cfg.key_fields(self.seed),
            "agents": train.agents,
        }
        h.update(json.dumps(record, sort_keys=True).encode())
        for t, y, s in zip(train.texts, train.labels, train.states):
            h.update(json.dumps([t, y, s]).encode())
        return h.hexdigest()[:20]

    def cache_path(self, train: TrainingSet) -> Path:
        return cache_dir() / "routers" / self.name / self.cache_key(train)

    def fit(self, train: TrainingSet) -> dict[str, float]:
        if len(train) == 0:
            raise DataError(f"empty training set: the {self.name} router needs demonstrations")
        if self.run_options.use_cache:
            cached = self.cache_path(train)
            if (cached / "router.json").is_file():
                try:
                    self._restore(cached)
                    log.info("%s router: reusing trained adapter %s", self.name, cached)
                    info = {k: float(v) for k, v in self.fit_info.items() if isinstance(v, (int, float))}
                    return {**info, "cached": 1.0}
                except CheckpointError as exc:
                    log.warning("ignoring unusable cached adapter (%s); retraining", exc)
        metrics = self._train(train)
        if self.run_options.use_cache:
            self.save(self.cache_path(train))
        return metrics

    def _batches(self, lengths: list[int], rng: random.Random) -> list[list[int]]:
        """Length-bucketed batches in a shuffled order (little padding, still stochastic)."""
        order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
        bs = self.cfg.batch_size
        batches = [order[i : i + bs] for i in range(0, len(order), bs)]
        rng.shuffle(batches)
        return batches

    def _train(self, train: TrainingSet) -> dict[str, float]:
        from tqdm.auto import tqdm

        t0 = time.perf_counter()
        self.prepare()
        forced, answers = self._answers(train.agents)
        prompts = [p + forced for p in self._prompt_ids(train.texts, train.states)]
        targets = [answers[y] for y in train.labels]
        params = self._trainable()
        for p in params:
            p.requires_grad_(True)
        opt = torch.optim.AdamW(params, lr=self.cfg.lr, weight_decay=self.cfg.weight_decay)
        rng = random.Random(self.seed)
        torch.manual_seed(self.seed)
        lengths = [len(p) + len(a) for p, a in zip(prompts, targets)]
        total = self.cfg.epochs * -(-len(prompts) // self.cfg.batch_size)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / max(total, 1)))
        pad = self.backend.tokenizer.pad_token_id
        losses: list[float] = []
        tokens = 0
        bar = tqdm(total=total, desc=f"train {self.name}", disable=not self.run_options.progress, leave=False)
        try:
            for epoch in range(self.cfg.epochs):
                epoch_loss, seen = 0.0, 0
                for idx in self._batches(lengths, rng):
                    packed = pack(
                        [prompts[i] for i in idx], [[targets[i]] for i in idx], pad_id=pad, n_virtual=self.n_virtual
                    )
                    loss = -self._logprobs(packed)[:, 0].mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    sched.step()
                    epoch_loss += loss.item() * len(idx)
                    seen += len(idx)
                    tokens += int(packed.input_ids.numel())
                    bar.update(1)
                    bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
                losses.append(epoch_loss / max(seen, 1))
        finally:
            bar.close()
            for p in params:
                p.requires_grad_(False)
        self.trained_on = list(train.agents)
        seconds = time.perf_counter() - t0
        self.fit_info = {
            "seconds": seconds,
            "loss": losses[-1],
            "first_epoch_loss": losses[0],
            "examples": len(train),
            "epochs": self.cfg.epochs,
            "tokens": tokens,
            "trainable_params": sum(p.numel() for p in params),
        }
        log.info("%s router trained in %.1fs: loss %.3f -> %.3f", self.name, seconds, losses[0], losses[-1])
        return {k: float(v) for k, v in self.fit_info.items()}

    # ------------------------------------------------------------------ ranking
    @torch.no_grad()
    def scores(self, tasks: list[str], states: list[str | None] | None = None, names: list[str] | None = None) -> torch.Tensor:
        """Log-likelihood of each name's answer after each task's prompt: ``[tasks, names]``."""
        if not self._ready:
            raise CheckpointError(f"the {self.name} router is not trained; call fit() or load()")
        names = names or self.pool.names
        states = states or [None] * len(tasks)
        forced, cands = self._answers(names)
        prompts = [p + forced for p in self._prompt_ids(tasks, states)]
        pad = self.backend.tokenizer.pad_token_id
        out = torch.empty(len(tasks), len(names))
        bs = self.cfg.eval_batch_size
        order = sorted(range(len(tasks)), key=lambda i: len(prompts[i]))
        for s in range(0, len(order), bs):
            idx = order[s : s + bs]
            packed = pack([prompts[i] for i in idx], [cands] * len(idx), pad_id=pad, n_virtual=self.n_virtual)
            out[idx] = self._logprobs(packed).cpu()
        return out

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        if not tasks:
            return []
        return rankings(self.pool.names, softmax_rows(self.scores(tasks, states).numpy()))

    # ------------------------------------------------------------------ persistence
    def save(self, path: Path) -> None:
        if not self._ready:
            raise CheckpointError(f"nothing to save: the {self.name} router is not trained", where=path)
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self._save_weights(tmp)
        write_sidecar(
            tmp,
            {
                "kind": self.name,
                "format": FORMAT_VERSION,
                "agents": self.trained_on,
                "backbone": {"model_id": self.backend.model_id, "fingerprint": self.backend.fingerprint},
                "template": {"name": self.template.name, "sha256": self.template.sha256},
                "config": {**self.cfg.model_dump(), "seed": self.seed},
                "fit": self.fit_info,
            },
        )
        old = path.with_name(f".{path.name}.old-{os.getpid()}")
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)

    def _restore(self, path: Path) -> None:
        rec = read_sidecar(path, self.name)
        if rec.get("format") != FORMAT_VERSION:
            raise CheckpointError(f"saved with format {rec.get('format')}, this code reads {FORMAT_VERSION}", where=path)
        bb = rec.get("backbone", {})
        if bb.get("fingerprint") != self.backend.fingerprint:
            raise CheckpointError(
                f"adapter was trained on backbone {bb.get('model_id')} ({bb.get('fingerprint')}), "
                f"but the configured backbone is {self.backend.model_id} ({self.backend.fingerprint})",
                where=path,
            )
        tpl = rec.get("template", {})
        check_recorded(tpl.get("name", self.template.name), str(tpl.get("sha256")), self.template, where=path,
                       since="the adapter was trained", redo="retrain the adapter")
        self._build(fresh=False)
        try:
            self._load_weights(path)
        except Exception as exc:  # safetensors, peft and torch each raise their own types
            raise CheckpointError(f"cannot read adapter weights ({type(exc).__name__}: {exc})", where=path) from None
        self.trained_on = list(rec.get("agents", []))
        self.fit_info = dict(rec.get("fit", {}))
        self._ready = True
        unknown = [n for n in self.pool.names if n not in self.trained_on]
        if unknown:
            log.warning("%s router was not trained on %d pool agent(s): %s", self.name, len(unknown), ", ".join(unknown))

    @classmethod
    def load(
        cls, path: Path, pool: AgentPool, llm: LLMConfig | None = None, *, progress: bool = True, use_cache: bool = True
    ) -> AdaptedLMRouter:
        rec = read_sidecar(Path(path), cls.name)
        cfg = dict(rec.get("config", {}))
        for how in ("cache", "progress"):  # how a router ran, kept by sidecars written before RunOptions
            cfg.pop(how, None)
        router = cls(pool, llm, progress=progress, use_cache=use_cache, **cfg)
        router._restore(Path(path))
        return router
