"""AgentToken settings judged on held-out demonstrations, so no setting is chosen on a benchmark.

The routing table trains every router on a few demonstrations per agent (``benchmark_data``:
the documents' seeds, a seeded sample of the self-instruct rows in ``data/demos``, the document
requests). The self-instruct rows *not* drawn into that set were never trained on; this study
splits them in two by the SHA-256 of their text (a split that does not depend on the run) and
scores each AgentToken setting on the odd half (``held``), by agent and by domain. The even half
(``extra``) is kept apart for studies that add training data. The 313 benchmark tasks and the
project set are never read here: they are test sets, reported by ``benchmarks/routing.py`` only.

A setting is a :class:`~agentlab.metaagent.train.TrainConfig`; the row's router is AgentToken with
the default prompt and feature (hidden states through the disk cache, so a second setting costs
only its fit), judged by its ranking's first agent (the agent greedy decoding picks whenever an
agent token wins at the prompt end, which it did for every benchmark task measured). The
embedding router fitted on the same examples is the reference row.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from agentlab.llm.config import LLMConfig
from agentlab.metaagent.data import TrainingSet, load_training_set
from agentlab.metaagent.train import TrainConfig
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)


@dataclass
class HeldOutRow:
    """One setting's accuracy on the held-out demonstrations."""

    name: str
    agent_acc: float
    domain_acc: float
    examples: int
    train_acc: float | None = None


def _odd(text: str) -> bool:
    return int(hashlib.sha256(text.strip().lower().encode("utf-8")).hexdigest(), 16) % 2 == 1


def heldout_split(pool: AgentPool, train: TrainingSet) -> tuple[TrainingSet, TrainingSet]:
    """``(extra, held)``: the generated demonstrations of ``pool``'s agents that are not in ``train``
    (case-insensitive), split by the parity of their text's SHA-256 (odd: ``held``)."""
    seen = {t.strip().lower() for t in train.texts}
    full = load_training_set(pool, source="all")
    seeds = {d.text.strip().lower() for a in pool.agents for d in a.demonstrations}
    keep = [i for i, t in enumerate(full.texts) if t.strip().lower() not in seen and t.strip().lower() not in seeds]
    held = [i for i in keep if _odd(full.texts[i])]
    extra = [i for i in keep if not _odd(full.texts[i])]
    return full.subset(extra), full.subset(held)


def _score(pred: list[str], held: TrainingSet, pool: AgentPool) -> tuple[float, float]:
    domain = {a.name: a.domain for a in pool}
    gold = [held.agents[y] for y in held.labels]
    n = max(len(gold), 1)
    return (sum(p == g for p, g in zip(pred, gold)) / n,
            sum(domain.get(p) == domain[g] for p, g in zip(pred, gold)) / n)


def run(
    pool: AgentPool, train: TrainingSet, held: TrainingSet, settings: Mapping[str, TrainConfig], *,
    llm: LLMConfig | None = None, reference: bool = True,
) -> list[HeldOutRow]:
    """Fit AgentToken once per setting on ``train`` and score its first-ranked agent on ``held``
    (the embedding router on the same data first when ``reference``)."""
    from agentlab.metaagent.agenttoken import AgentTokenRouter

    rows: list[HeldOutRow] = []
    if reference:
        from agentlab.metaagent.baselines.embedding import EmbeddingRouter

        emb = EmbeddingRouter(pool, llm)
        emb.fit(train)
        a, d = _score([r[0][0] for r in emb.rank(held.texts)], held, pool)
        rows.append(HeldOutRow("embedding (MiniLM centroid)", a, d, len(held)))
    extractor = None
    for name, cfg in settings.items():
        router = AgentTokenRouter(pool, llm, train=cfg, progress=False, extractor=extractor)
        m = router.fit(train)
        extractor = router.extractor  # one backbone for every setting
        a, d = _score([r[0][0] for r in router.rank(held.texts)], held, pool)
        rows.append(HeldOutRow(name, a, d, len(held), float(m["train_acc"])))
        log.info("held-out %s: agent %.3f domain %.3f", name, a, d)
    return rows


def markdown(rows: list[HeldOutRow], *, train_examples: int, backbone: str) -> list[str]:
    """The rows as a Markdown table (accuracy in %)."""
    out = [f"Backbone {backbone}; {train_examples} training examples; {rows[0].examples if rows else 0} held-out "
           "self-instruct demonstrations (never trained on).", "",
           "| setting | held-out, agent | held-out, domain | train acc |", "|---|---|---|---|"]
    for r in rows:
        train = "" if r.train_acc is None else f"{r.train_acc:.2f}"
        out.append(f"| {r.name} | {100 * r.agent_acc:.1f}% | {100 * r.domain_acc:.1f}% | {train} |")
    return out
