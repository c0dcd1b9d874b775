"""The tuning study: which hidden state, prompt, initialisation and bias make AgentToken route well.

Evaluation uses OSWorld single-app and AppAgent tasks (evaluation only: never training data,
never in a prompt). Training uses the pool's demonstrations (+ self-instruct data when
``data/demos`` exists). Features for every (prompt variant, hidden-state choice) are
computed in one forward pass per text and kept in ``cache_dir()/tune/``; the grid of training
settings then runs in seconds. A MiniLM nearest-centroid router on the same training data is
measured in the same run as the reference to beat.

:func:`run` takes a :class:`TuningConfig` and returns a :class:`Tuning` (one row per
setting); its driver is ``python benchmarks/agenttoken_tuning.py``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

from agentlab.eval.benchmarks import load_appagent, load_osworld
from agentlab.eval.metrics import routing_accuracy
from agentlab.metaagent.data import Source, TrainingSet, load_training_set
from agentlab.metaagent.features import FeatureSpec, Query, TextFeatureExtractor
from agentlab.metaagent.head import AgentHead
from agentlab.metaagent.train import TrainConfig, initial_weights, train_head
from agentlab.paths import cache_dir
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)

LAYER_SPECS = [FeatureSpec(layer=l, pool=p) for l in (None, 8, 12, 16, 20, 24) for p in ("last", "mean")]


@dataclass
class Split:
    name: str
    texts: list[str]
    domains: list[str]


def eval_splits(max_tasks: int | None = None) -> list[Split]:
    """OSWorld single-app and AppAgent tasks (the first ``max_tasks`` of each; all by default)."""
    osw, app = load_osworld()[:max_tasks], load_appagent()[:max_tasks]
    return [
        Split("osworld", [t.instruction for t in osw], [t.domain or "" for t in osw]),
        Split("appagent", [t.instruction for t in app], [t.domain or "" for t in app]),
    ]


def multi_features(
    extractor: TextFeatureExtractor, texts: list[str], specs: list[FeatureSpec], batch_size: int = 16, progress: bool = True
) -> dict[str, torch.Tensor]:
    """``{spec.key(): h [n, d]}`` for all specs, one forward per batch, cached on disk."""
    tag = hashlib.sha256((extractor.cache_namespace() + "|".join(s.key() for s in specs)).encode()).hexdigest()[:16]
    path = cache_dir() / "tune" / f"{tag}.pt"
    store: dict[str, torch.Tensor] = torch.load(path) if path.exists() else {}
    keys = [hashlib.sha256(t.strip().encode()).hexdigest()[:24] for t in texts]
    todo = sorted({k: t for k, t in zip(keys, texts) if k not in store}.items(), key=lambda kv: len(kv[1]))
    for s in tqdm(range(0, len(todo), batch_size), desc=f"features {extractor.template.name} chat={extractor.spec.chat}", disable=not progress):
        part = todo[s : s + batch_size]
        rests = extractor.check_length([Query(t) for _, t in part])
        outs = extractor.hidden_multi(rests, specs)
        for i, (k, _) in enumerate(part):
            store[k] = torch.stack([o[i] for o in outs])
        if s // batch_size % 8 == 7 or s + batch_size >= len(todo):
            path.parent.mkdir(parents=True, exist_ok=True)
            torch.save(store, path)
    stacked = torch.stack([store[k] for k in keys])  # [n, n_specs, d]
    return {spec.key(): stacked[:, j] for j, spec in enumerate(specs)}


def centroid_reference(train: TrainingSet, splits: list[Split], pool: AgentPool) -> dict[str, float]:
    from agentlab.llm.similarity import default_encoder

    enc = default_encoder()
    x = torch.tensor(enc.encode(train.texts))
    y = torch.tensor(train.labels)
    cent = torch.stack([x[y == k].mean(0) for k in range(len(train.agents))])
    cent = torch.nn.functional.normalize(cent, dim=-1)
    out = {}
    for sp in splits:
        q = torch.tensor(enc.encode(sp.texts))
        pred = (q @ cent.T).argmax(1)
        out[sp.name] = routing_accuracy([train.agents[i] for i in pred], sp.domains, pool).accuracy
    return out


def run_one(
    extractor: TextFeatureExtractor,
    feats_train: torch.Tensor,
    feats_eval: dict[str, torch.Tensor],
    train: TrainingSet,
    splits: list[Split],
    cfg: TrainConfig,
    pool: AgentPool,
) -> dict[str, float]:
    w, b = extractor.word_head()
    lse_tr = torch.logsumexp(extractor.vocab_logits(feats_train), -1)
    init = initial_weights(cfg, train.agents, extractor.tokenizer, w, feats_train.shape[1])
    head = AgentHead(len(train.agents), feats_train.shape[1], logit_bias=cfg.logit_bias, init=init)
    m = train_head(head, feats_train, lse_tr, torch.tensor(train.labels), cfg, progress=False)
    res = {"train_loss": m["loss"], "train_acc": m["train_acc"], "seconds": m["seconds"]}
    with torch.no_grad():
        for sp in splits:
            h = feats_eval[sp.name]
            lse = torch.logsumexp(extractor.vocab_logits(h), -1)
            pred = head.agent_logits(h).argmax(1)
            res[sp.name] = routing_accuracy([train.agents[i] for i in pred], sp.domains, pool).accuracy
            # How often the agent token beats every word token at the first position.
            word_max = extractor.vocab_logits(h).max(1).values
            res[f"{sp.name}_agent_wins"] = float((head.agent_logits(h).max(1).values > word_max).float().mean())
            del lse
    return res


Grid = Literal["quick", "train", "full"]


def train_grid(grid: Grid) -> list[TrainConfig]:
    """Training settings tried per hidden state: the default only (``quick``), or the training grid."""
    if grid == "quick":
        return [TrainConfig()]
    return [
        TrainConfig(),
        TrainConfig.preset("paper"),
        TrainConfig(init="random"),
        TrainConfig(init="zeros"),
        TrainConfig(logit_bias=5.0),
        TrainConfig(logit_bias=10.0),
        TrainConfig(lr=3e-3, epochs=100),
        TrainConfig(lr=3e-2, epochs=20),
        TrainConfig(weight_decay=0.1),
        TrainConfig(balance=True),
        TrainConfig(balance=True, lr=3e-3, epochs=100),
    ]


class TuningConfig(BaseModel):
    """One tuning study: prompt variants x chat wrapping x hidden states x training settings."""

    model_config = ConfigDict(extra="forbid")

    templates: list[str] = Field(default_factory=lambda: ["metaagent/router_agenttoken"])
    #: wrap the prompt in the chat template (True), raw (False), or both
    chat: list[bool] = Field(default_factory=lambda: [True])
    #: training data rows (see ``load_training_set``)
    source: Source = "seed"
    per_agent: int | None = None
    #: ``quick``: every hidden-state choice x the default training; ``train``: the final state x the
    #: training grid; ``full``: every hidden-state choice, the training grid on the next-token state
    grid: Grid = "quick"
    #: evaluate on the first N tasks of each benchmark (None: all; smaller for smoke tests)
    max_eval_tasks: int | None = None
    progress: bool = True


@dataclass
class Tuning:
    """The rows of one study, as JSON-ready dicts (the reference row first)."""

    train_examples: int
    rows: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"train_examples": self.train_examples, "rows": self.rows}

    def to_markdown(self) -> str:
        return markdown_table(self.rows)

    def best(self, split: str = "osworld") -> dict[str, Any] | None:
        """The AgentToken row with the highest accuracy on ``split``."""
        tuned = [r for r in self.rows if "template" in r]
        return max(tuned, key=lambda r: float(r[split])) if tuned else None


def run(config: TuningConfig, *, backend: Any = None, pool: AgentPool | None = None) -> Tuning:
    """Run the study on the local backbone (``backend``; default the configured local model)."""
    if backend is None:
        from agentlab.llm import load_local

        backend = load_local()
    pool = pool or AgentPool.from_dir()
    train = load_training_set(pool, per_agent=config.per_agent, source=config.source)
    splits = eval_splits(config.max_eval_tasks)
    t0 = time.time()
    ref = centroid_reference(train, splits, pool)
    out = Tuning(train_examples=len(train))
    out.rows.append({"method": "minilm-centroid (reference)", **ref, "seconds": time.time() - t0})
    log.info("reference minilm centroid: %s  train examples=%d", ref, len(train))
    for template in config.templates:
        for chat in config.chat:
            fx = TextFeatureExtractor(backend, template, FeatureSpec(chat=chat))
            n_layers = int(backend.model.config.num_hidden_layers)
            layer_specs = [s for s in LAYER_SPECS if s.layer is None or s.layer <= n_layers]
            specs = layer_specs if config.grid != "train" else [FeatureSpec(chat=chat)]
            specs = [s.model_copy(update={"chat": chat}) for s in specs]
            tr = multi_features(fx, train.texts, specs, progress=config.progress)
            ev = {sp.name: multi_features(fx, sp.texts, specs, progress=config.progress) for sp in splits}
            for spec in specs:
                grid: Grid = config.grid if config.grid in ("train", "full") and spec.is_next_token else "quick"
                for cfg in train_grid(grid):
                    res = run_one(fx, tr[spec.key()], {k: v[spec.key()] for k, v in ev.items()}, train, splits, cfg, pool)
                    row = {
                        "template": template,
                        "chat": chat,
                        "layer": "final" if spec.layer is None else spec.layer,
                        "pool": spec.pool,
                        "train": cfg.model_dump(exclude_defaults=True),
                        **res,
                    }
                    out.rows.append(row)
                    log.info("%s", json.dumps(row))
    return out


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """One line per run: prompt, chat, hidden state, training changes, accuracies, agent-token wins."""
    head = "| template | chat | layer | pool | training (changes from default) | OSWorld acc | AppAgent acc | agent token wins (OSW/App) |\n"
    head += "|---|---|---|---|---|---|---|---|\n"
    lines = []
    for r in rows:
        if "template" not in r:
            lines.append(f"| {r['method']} | | | | | {100 * float(r['osworld']):.1f}% | {100 * float(r['appagent']):.1f}% | |")
            continue
        wins = f"{100 * float(r['osworld_agent_wins']):.0f}% / {100 * float(r['appagent_agent_wins']):.0f}%"
        train = json.dumps(r["train"]) if r["train"] else "default"
        lines.append(
            f"| {r['template']} | {'yes' if r['chat'] else 'no'} | {r['layer']} | {r['pool']} | {train} | "
            f"{100 * float(r['osworld']):.1f}% | {100 * float(r['appagent']):.1f}% | {wins} |"
        )
    return head + "\n".join(lines) + "\n"

