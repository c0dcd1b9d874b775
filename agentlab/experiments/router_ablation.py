"""AgentToken ablation: each training change measured side by side on both routing task sets.

Every variant is an AgentToken (or hybrid / embedding) router built through ``ROUTERS`` with
some options, fitted on the seed demonstrations with or without the document requests
(:mod:`agentlab.metaagent.augment`), and scored on the 313 OSWorld + AppAgent tasks (domain
level: their gold agent is unknown) and on the project set (domain and agent level). One
backbone and one hidden-state cache serve every AgentToken variant, so a variant costs only
its training (seconds) once the features are cached.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from agentlab.eval.benchmarks import BenchmarkTask
from agentlab.experiments.routing_table import SetScore, score_set
from agentlab.metaagent.augment import add_document_requests
from agentlab.metaagent.data import TrainingSet
from agentlab.metaagent.router import Router, router_class
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Variant:
    """One row of the ablation: a router kind, its options and whether document requests are added."""

    label: str
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    documents: bool = False


AUGMENT_TEMPLATES = ["metaagent/router_agenttoken_plain", "metaagent/router_agenttoken_short"]

#: The ablation's rows: each AgentToken change alone on top of the document requests, then the
#: encoder and the hybrid (λ fixed at 1, or chosen out of fold) with and without them.
DEFAULT_VARIANTS: tuple[Variant, ...] = (
    Variant("agenttoken", "agenttoken"),
    Variant("agenttoken + document requests", "agenttoken", documents=True),
    Variant("agenttoken + margin loss", "agenttoken", {"train": {"margin": 2.0}}),
    Variant("agenttoken + docs + margin loss", "agenttoken", {"train": {"margin": 2.0}}, True),
    Variant("agenttoken + docs + template augmentation", "agenttoken", {"augment_templates": AUGMENT_TEMPLATES}, True),
    Variant("agenttoken + docs + calibrated temperature", "agenttoken", {"calibrate": True}, True),
    Variant("embedding", "embedding"),
    Variant("embedding + document requests", "embedding", documents=True),
    Variant("hybrid λ=1", "hybrid", {"weight": 1.0}),
    Variant("hybrid λ out-of-fold", "hybrid"),
    Variant("hybrid λ out-of-fold + document requests", "hybrid", {}, True),
)


@dataclass
class VariantResult:
    variant: Variant
    train_examples: int
    fit_seconds: float
    metrics: dict[str, Any]
    scores: dict[str, SetScore]


def training_set(base: TrainingSet, pool: AgentPool, documents: bool) -> TrainingSet:
    return add_document_requests(base, pool) if documents else base


def build(kind: str, pool: AgentPool, options: dict[str, Any], shared: dict[str, Any]) -> Router:
    """A router of ``kind`` without progress bars; AgentToken-based ones share one feature extractor."""
    opts = dict(options)
    if kind == "agenttoken" and "extractor" in shared:
        opts.setdefault("extractor", shared["extractor"])
    if kind == "hybrid" and "extractor" in shared:
        opts["agenttoken"] = {"calibrate": True, **opts.get("agenttoken", {}), "extractor": shared["extractor"]}
    if "train" in opts and isinstance(opts["train"], dict):
        from agentlab.metaagent.train import TrainConfig

        opts["train"] = TrainConfig(**opts["train"])
    if kind == "hybrid" and isinstance(opts.get("agenttoken", {}).get("train"), dict):
        from agentlab.metaagent.train import TrainConfig

        opts["agenttoken"]["train"] = TrainConfig(**opts["agenttoken"]["train"])
    return router_class(kind)(pool, progress=False, **opts)


def run(
    pool: AgentPool,
    base: TrainingSet,
    task_sets: dict[str, list[BenchmarkTask]],
    variants: tuple[Variant, ...] | list[Variant] = DEFAULT_VARIANTS,
) -> list[VariantResult]:
    """Fit every variant on ``base`` (plus document requests where asked) and score it on every task set."""
    shared: dict[str, Any] = {}
    out: list[VariantResult] = []
    for v in variants:
        router = build(v.kind, pool, v.options, shared)
        if v.kind == "agenttoken" and "extractor" not in shared:
            shared["extractor"] = router.extractor  # type: ignore[attr-defined]
        train = training_set(base, pool, v.documents)
        t0 = time.perf_counter()
        metrics = router.fit(train)
        fit_s = time.perf_counter() - t0
        scores = {name: score_set(router, tasks, pool) for name, tasks in task_sets.items()}
        out.append(VariantResult(v, len(train), fit_s, dict(metrics), scores))
        log.info("%s: %s", v.label, ", ".join(f"{n} {100 * s.domain.accuracy:.1f}%" for n, s in scores.items()))
    return out


def rows(results: list[VariantResult], set_names: list[str]) -> list[dict[str, Any]]:
    """One dict per variant: domain (and agent, where known) accuracy per task set, temperature, fit seconds."""
    out = []
    for r in results:
        cells: dict[str, Any] = {"variant": r.variant.label, "train examples": r.train_examples}
        for n in set_names:
            s = r.scores[n]
            cells[f"{n} domain %"] = round(100 * s.domain.accuracy, 1)
            if any(x.scores[n].agent is not None for x in results):
                cells[f"{n} agent %"] = None if s.agent is None else round(100 * s.agent.accuracy, 1)
        t = r.metrics.get("temperature")
        cells["temperature"] = None if t is None else round(float(t), 2)
        cells["fit s"] = round(r.fit_seconds, 1)
        out.append(cells)
    return out


def to_frame(results: list[VariantResult], set_names: list[str]) -> Any:
    """:func:`rows` as a pandas DataFrame indexed by variant (notebook 04)."""
    import pandas as pd

    return pd.DataFrame(rows(results, set_names)).set_index("variant")


def table(results: list[VariantResult], set_names: list[str]) -> list[str]:
    """:func:`rows` as a markdown table."""
    body = rows(results, set_names)
    if not body:
        return []
    head = list(body[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in body:
        lines.append("| " + " | ".join("-" if row[k] is None else str(row[k]) for k in head) + " |")
    return lines


def section(results: list[VariantResult], set_names: list[str], base_examples: int, source: str) -> list[str]:
    """The ablation as a results-file section: heading, what the sets are, :func:`table`. ``source``:
    "table" (the routing table's sample without document requests) or "seed" (seed demonstrations)."""
    what = "the table's sample, without document requests" if source == "table" else "seed demonstrations only"
    return [
        f"### Ablation: each change side by side ({base_examples} base examples: {what})",
        "",
        "Each AgentToken change alone, then the encoder and the hybrid; `313`: the benchmark tasks (domain level), "
        "`project`: the project set. temperature: the calibrated AgentToken temperature (1.00 = not calibrated).",
        "",
        *table(results, set_names),
    ]
