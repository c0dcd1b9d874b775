"""The Figure 5 analog: routing accuracy as demonstrations per agent grow, and filtered vs unfiltered data.

Training data per agent: seeds first, then self-instructed demonstrations from ``data/demos``
(``load_training_set(per_agent=N)``); an agent with fewer than N contributes what it has, so
each point records the mean actually used. Every router is retrained from scratch per point.

``equal_size_sets`` builds the two arms of the filter comparison: all seeds plus k generated
demonstrations per agent, k the same in both arms: the first k accepted by Algorithm 1, or
the first k parsed, non-leaking candidates in generation order regardless of the filter.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.eval.metrics import RoutingReport, routing_accuracy
from agentlab.metaagent.data import Source, TrainingSet, load_training_set
from agentlab.metaagent.router import router_class
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.eval.benchmarks import BenchmarkTask

log = logging.getLogger(__name__)


class DataSizeConfig(BaseModel):
    """Routers, demonstration budgets and how a router's answer is read."""

    model_config = ConfigDict(extra="forbid")

    routers: list[str] = Field(default_factory=lambda: ["agenttoken", "embedding"])
    #: demonstrations per agent (asked; an agent may have fewer)
    sizes: list[int] = Field(default_factory=lambda: [2, 4, 8, 12, 25])
    #: per-router constructor options (progress bars are always off)
    router_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: ``route``: the router's answer (AgentToken decodes); ``rank``: the top-1 of its ranking
    decide: Literal["route", "rank"] = "route"
    #: the demonstrations dataset (default ``data/demos``) and which of its rows to use
    demos: Path | None = None
    source: Source = "all"
    seed: int = 0


@dataclass
class DataSizePoint:
    """One router trained on one demonstration budget."""

    size: int
    router: str
    examples: int
    mean_used: float
    report: RoutingReport
    #: wall time of building, fitting and evaluating the router
    seconds: float

    @property
    def accuracy(self) -> float:
        return self.report.accuracy

    def as_row(self) -> dict[str, Any]:
        return {"per agent (asked)": self.size, "mean used": round(self.mean_used, 1), "router": self.router,
                "accuracy": round(self.accuracy, 3)}


@dataclass
class DataSize:
    points: list[DataSizePoint]

    def curves(self) -> dict[str, list[float]]:
        """Router -> accuracy per size, in size order."""
        out: dict[str, list[float]] = {}
        for p in self.points:
            out.setdefault(p.router, []).append(p.accuracy)
        return out

    def to_frame(self) -> pd.DataFrame:
        """Accuracy with one row per size and one column per router."""
        import pandas as pd

        return pd.DataFrame([p.as_row() for p in self.points]).pivot(
            index=["per agent (asked)", "mean used"], columns="router", values="accuracy"
        )


def evaluate(
    kind: str,
    pool: AgentPool,
    train: TrainingSet,
    tasks: Sequence[BenchmarkTask],
    *,
    decide: Literal["route", "rank"] = "route",
    options: dict[str, Any] | None = None,
) -> tuple[RoutingReport, float]:
    """Build ``kind`` for ``pool``, fit it on ``train``, judge its answers on ``tasks`` (report, seconds)."""
    t0 = time.perf_counter()
    router = router_class(kind)(pool, **{**(options or {}), "progress": False})
    router.fit(train)
    texts = [t.instruction for t in tasks]
    if decide == "route":
        pred = [r.agent for r in router.route(texts)]
    else:
        pred = [r[0][0] if r else None for r in router.rank(texts)]
    report = routing_accuracy(pred, [t.domain or "" for t in tasks], pool)
    return report, time.perf_counter() - t0


def run(pool: AgentPool, tasks: Sequence[BenchmarkTask], config: DataSizeConfig) -> DataSize:
    """Every router at every size (sizes outer, routers inner)."""
    points: list[DataSizePoint] = []
    for n in config.sizes:
        train = load_training_set(pool, config.demos, per_agent=int(n), source=config.source, seed=config.seed)
        for kind in config.routers:
            report, secs = evaluate(kind, pool, train, tasks, decide=config.decide, options=config.router_options.get(kind))
            points.append(DataSizePoint(int(n), kind, len(train), len(train) / len(pool), report, secs))
            log.info("size %d (%.1f used/agent) %s: %.3f macro %.3f (%.0f s)",
                     n, len(train) / len(pool), kind, report.accuracy, report.macro_accuracy, secs)
    return DataSize(points)


def equal_size_sets(pool: AgentPool, demos: Path) -> tuple[dict[str, TrainingSet], dict[str, int]]:
    """Two training sets of equal size per agent: seeds + k accepted ("filtered") vs seeds + k
    unfiltered candidates ("unfiltered"); also k per agent."""
    from agentlab.selfinstruct.store import load_candidates, load_demos

    ds, cands = load_demos(demos), load_candidates(demos)
    accepted: dict[str, list[str]] = {n: [] for n in pool.names}
    for a, t, s in zip(ds["agent"], ds["text"], ds["source"]):
        if s == "generated" and a in accepted:
            accepted[a].append(t)
    raw: dict[str, list[str]] = {n: [] for n in pool.names}
    for a, t, s in zip(cands["agent"], cands["text"], cands["status"]):
        if s != "leak" and a in raw and t not in raw[a]:
            raw[a].append(t)  # generation order, whatever Algorithm 1 decided
    sets = {}
    ks = {n: min(len(accepted[n]), len(raw[n])) for n in pool.names}
    for arm, source in (("filtered", accepted), ("unfiltered", raw)):
        texts, labels, domains = [], [], []
        for i, doc in enumerate(pool.agents):
            items = [d.text for d in doc.demonstrations] + source[doc.name][: ks[doc.name]]
            texts += items
            labels += [i] * len(items)
            domains += [doc.domain] * len(items)
        sets[arm] = TrainingSet(agents=pool.names, texts=texts, labels=labels, domains=domains)
    return sets, ks
