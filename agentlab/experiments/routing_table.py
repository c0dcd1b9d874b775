"""The Table 4 / Table 5 analog: every router fitted and measured on the same data, in one process.

For each router kind: build it through ``ROUTERS`` (no progress bars; LoRA and prompt tuning
with ``use_cache=False`` so a real fit is measured, not a cached adapter), fit it on its
training set while timing it and sampling memory (:func:`~agentlab.experiments.fit_cost.measure_fit`),
route its evaluation tasks and judge the answers by domain (overall, per domain and per
benchmark). When the data hold the project's own set (gold agents known), the same fitted router
also routes it, judged by domain *and* by agent. Routers named in ``all_data_routers`` are fitted
a second time on every demonstration (rows ``<kind>@all``). The ICL router's row also records
its prompt (tokens, demonstrations per document), its strict answers and its ranking's accuracy.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.eval.benchmarks import BenchmarkTask
from agentlab.errors import ConfigError
from agentlab.eval.metrics import AgentRoutingReport, RoutingReport, agent_accuracy, routing_accuracy
from agentlab.experiments.fit_cost import FitCost, measure_fit
from agentlab.experiments.routing_data import RoutingData
from agentlab.llm.config import LLMConfig
from agentlab.metaagent.baselines.icl import ICLRouter
from agentlab.metaagent.data import TrainingSet
from agentlab.metaagent.router import ADAPTED_LM_ROUTERS, Router, router_class
from agentlab.tasks.decisions import RouteResult
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)


class RoutingTableConfig(BaseModel):
    """Which routers to measure and with which options."""

    model_config = ConfigDict(extra="forbid")

    routers: list[str] = Field(default_factory=lambda: ["agenttoken", "embedding", "icl", "lora", "prompt"])
    #: per-router options (router name -> constructor options); they win over the defaults below
    router_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: retrain LoRA / prompt tuning instead of reusing a cached adapter (a real fit is measured)
    retrain_adapters: bool = True
    #: routers also fitted on every demonstration (``RoutingData.full``), as rows ``<kind>@all``
    all_data_routers: list[str] = Field(default_factory=list)
    #: keep every fitted router in ``RoutingTable.fitted`` (off: each is dropped once measured, to free memory)
    keep_fitted: bool = True
    #: the backbone every router that reads a language model uses (None: the configured one, ``AGENTLAB_LLM_*``)
    llm: LLMConfig | None = None
    #: route each task among the agents of its device's platform only (:mod:`agentlab.metaagent.device`:
    #: what ``agentlab exec`` does with a task file); off: among every agent of the pool (the paper's table)
    device_aware: bool = False
    #: ``open``: every agent competes (the paper's table); ``store``: the store's decision as
    #: ``agentlab route`` applies it by default (:mod:`agentlab.metaagent.store`: specialists first,
    #: a generalist for a request naming two applications)
    policy: str = "open"

    def options_for(self, kind: str) -> dict[str, Any]:
        """Constructor options of ``kind``: run options first, then the configured ones."""
        base: dict[str, Any] = {"progress": False}
        if kind in ADAPTED_LM_ROUTERS and self.retrain_adapters:
            base["use_cache"] = False
        return {**base, **self.router_options.get(kind, {})}


@dataclass
class SetScore:
    """One fitted router on one task list: by domain, and by agent where every task names its gold agents."""

    domain: RoutingReport
    agent: AgentRoutingReport | None
    results: list[RouteResult]
    route_seconds_per_task: float


def _route(router: Router, tasks: list[Any], device_aware: bool, policy: str = "open") -> list[RouteResult]:
    from agentlab.metaagent.store import StoreRule, check_policy

    platforms = [getattr(t, "platform", None) if device_aware else None for t in tasks]
    rule = StoreRule(router.pool) if check_policy(policy, option="policy") == "store" else None
    return router.route([t.instruction for t in tasks], platforms=platforms, policy=rule)


def score_set(router: Router, tasks: list[BenchmarkTask], pool: AgentPool, *, device_aware: bool = False,
              policy: str = "open") -> SetScore:
    """Route ``tasks`` (timed; ``device_aware``: each among its platform's agents) and judge them
    by domain, and by agent when all have gold agents."""
    t0 = time.perf_counter()
    routed = _route(router, tasks, device_aware, policy)
    per_task = (time.perf_counter() - t0) / max(len(tasks), 1)
    pred = [r.agent for r in routed]
    gold = [t.domain or "" for t in tasks]
    agent = None
    if tasks and all(t.gold_agents for t in tasks):
        agent = agent_accuracy(pred, [t.gold_agents for t in tasks], gold, pool, [t.interface for t in tasks])
    return SetScore(routing_accuracy(pred, gold, pool), agent, routed, per_task)


@dataclass
class ICLPrompt:
    """What the ICL router's answers rest on, and how they read."""

    #: tokens of the prompt before the task (every document), and demonstrations per document in it
    prompt_tokens: int
    demos: int | None
    #: share of answers that are a strict ``###Name###`` naming a pool agent
    strict: float
    #: accuracy of the answer-likelihood ranking's top-1
    rank_accuracy: float


@dataclass
class RouterMeasurement:
    """One router's row of the table."""

    router: str
    train_examples: int
    eval_tasks: int
    report: RoutingReport
    cost: FitCost
    route_seconds_per_task: float
    #: what ``fit`` returned (``seconds``, ``cached`` for a reused adapter, ...)
    fit_metrics: dict[str, float] = field(default_factory=dict)
    #: the routed answers, in task order
    results: list[RouteResult] = field(default_factory=list)
    #: the same fitted router on the project's own set (None when the data hold none)
    project: SetScore | None = None
    #: accuracy on each benchmark's tasks (``BenchmarkTask.benchmark``: "osworld", "appagent", ...)
    by_benchmark: dict[str, float] = field(default_factory=dict)
    #: the ICL router's prompt and answers (None for other routers)
    icl: ICLPrompt | None = None

    @property
    def warnings(self) -> int:
        """Answers that name an agent but came with a problem (e.g. a lenient parse)."""
        return sum(r.agent is not None and r.error is not None for r in self.results)

    @property
    def fit_seconds(self) -> float:
        """Wall time of the fit: what ``fit`` reported (a reused adapter: its original training), else measured."""
        return float(self.fit_metrics.get("seconds", self.cost.seconds))

    @property
    def cached(self) -> bool:
        """The fit reused a cached adapter."""
        return bool(self.fit_metrics.get("cached"))

    def as_row(self) -> dict[str, Any]:
        """The row as notebook 04 shows it (Table 5 analog)."""
        rep, cost = self.report, self.cost
        return {
            "router": self.router,
            "train examples": self.train_examples,
            "eval tasks": self.eval_tasks,
            "accuracy": round(rep.accuracy, 3),
            "macro accuracy": round(rep.macro_accuracy, 3),
            "failures": rep.failures,
            "trainable params": cost.trainable_parameters,
            "fit s": round(cost.seconds, 1),
            "fit peak RSS growth MiB": None if cost.peak_rss_mib is None else round(cost.peak_rss_mib),
            "route s/task": round(self.route_seconds_per_task, 3),
        }


@dataclass
class RoutingTable:
    """Every measured router, in the order measured, and the fitted routers themselves."""

    rows: list[RouterMeasurement]
    fitted: dict[str, Router] = field(default_factory=dict)

    def accuracy(self) -> dict[str, dict[str, float]]:
        """Router -> {domain: accuracy, ..., "overall": accuracy} (domains sorted)."""
        return {
            m.router: {**{d: s.accuracy for d, s in sorted(m.report.per_domain.items())}, "overall": m.report.accuracy}
            for m in self.rows
        }

    def counts(self) -> dict[str, dict[str, int]]:
        """Router -> {domain: tasks, ..., "overall": tasks}: the n of each accuracy cell."""
        return {
            m.router: {**{d: s.total for d, s in m.report.per_domain.items()}, "overall": m.report.overall.total}
            for m in self.rows
        }

    def project_accuracy(self, level: str = "domain") -> dict[str, dict[str, float]]:
        """On the project set: router -> {domain: accuracy, ..., "overall"} at ``level`` "domain" or "agent"."""
        out: dict[str, dict[str, float]] = {}
        for m in self.rows:
            if m.project is None:
                continue
            if level == "agent":
                if m.project.agent is None:
                    continue
                rep = m.project.agent.agent
            else:
                rep = m.project.domain
            out[m.router] = {**{d: s.accuracy for d, s in sorted(rep.per_domain.items())}, "overall": rep.accuracy}
        return out

    def project_counts(self) -> dict[str, dict[str, int]]:
        """Router -> {domain: project tasks, ..., "overall"}: the n of each project-set cell."""
        return {
            m.router: {**{d: s.total for d, s in m.project.domain.per_domain.items()}, "overall": m.project.domain.overall.total}
            for m in self.rows if m.project is not None
        }

    def interface_rows(self) -> list[dict[str, Any]]:
        """Per router on the project set: agent- and domain-level accuracy and the CLI/GUI confusion."""
        rows = []
        for m in self.rows:
            if m.project is None or m.project.agent is None:
                continue
            rep = m.project.agent
            c = rep.interface.counts
            rows.append({
                "router": m.router, "tasks": rep.agent.overall.total,
                "domain accuracy": round(rep.domain.accuracy, 3), "agent accuracy": round(rep.accuracy, 3),
                "gold CLI -> GUI agent": c["CLI"]["GUI"], "gold GUI -> CLI agent": c["GUI"]["CLI"],
                "right domain, wrong interface": rep.interface.right_domain_wrong_interface,
            })
        return rows

    def table_rows(self) -> list[dict[str, Any]]:
        return [m.as_row() for m in self.rows]

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.table_rows()).set_index("router")


def measure_router(router: Router, train: Any, tasks: list[Any], pool: AgentPool, *,
                   device_aware: bool = False, policy: str = "open") -> RouterMeasurement:
    """Fit ``router`` on ``train`` (measured), route ``tasks`` (timed) and judge them by domain."""
    metrics, cost = measure_fit(router, train)
    t0 = time.perf_counter()
    routed = _route(router, tasks, device_aware, policy)
    per_task = (time.perf_counter() - t0) / max(len(tasks), 1)
    pred, gold = [r.agent for r in routed], [t.domain for t in tasks]
    report = routing_accuracy(pred, gold, pool)
    benches = {b: [i for i, t in enumerate(tasks) if t.benchmark == b] for b in dict.fromkeys(t.benchmark for t in tasks)}
    by_bench = {b: routing_accuracy([pred[i] for i in idx], [gold[i] for i in idx], pool).accuracy for b, idx in benches.items()}
    return RouterMeasurement(router.name, len(train), len(tasks), report, cost, per_task, dict(metrics), routed,
                             by_benchmark=by_bench)


def icl_prompt(router: ICLRouter, m: RouterMeasurement, tasks: list[BenchmarkTask], pool: AgentPool) -> ICLPrompt:
    """The ICL router's prompt after routing ``tasks``, and how its answers ``m.results`` read."""
    res = m.results
    top = [r.ranking[0][0] if r.ranking else None for r in res]
    return ICLPrompt(
        prompt_tokens=len(router.prefix_ids), demos=router.demos_used,
        strict=sum(r.agent is not None and r.error is None for r in res) / max(len(res), 1),
        rank_accuracy=routing_accuracy(top, [t.domain or "" for t in tasks], pool).accuracy,
    )


def run(pool: AgentPool, data: RoutingData, config: RoutingTableConfig) -> RoutingTable:
    """Measure every configured router on ``data`` (each on its own training set and tasks), then the
    ``all_data_routers`` again on every demonstration (``data.full``)."""
    table = RoutingTable(rows=[])
    runs: list[tuple[str, str, TrainingSet]] = [(kind, kind, data.train_for(kind)) for kind in config.routers]
    if config.all_data_routers:
        if data.full is None:
            raise ConfigError("all_data_routers need the data's full training set (drawn with all_data=True)")
        runs += [(f"{kind}@all", kind, data.full) for kind in config.all_data_routers]
    for label, kind, train in runs:
        router = router_class(kind)(pool, config.llm, **config.options_for(kind))
        tasks = data.tasks_for(kind)
        log.info("%s: fitting on %d demonstrations ...", label, len(train))
        m = measure_router(router, train, tasks, pool, device_aware=config.device_aware, policy=config.policy)
        m.router = label
        if data.project_for(kind):
            m.project = score_set(router, data.project_for(kind), pool, device_aware=config.device_aware,
                                  policy=config.policy)
        if isinstance(router, ICLRouter):
            m.icl = icl_prompt(router, m, tasks, pool)
        table.rows.append(m)
        log.info("  accuracy %.1f%% on %d tasks; fit %.0f s%s; %.2f s/task", 100 * m.report.accuracy, len(tasks),
                 m.fit_seconds, " (cached)" if m.cached else "", m.route_seconds_per_task)
        if config.keep_fitted:
            table.fitted[label] = router
        else:
            del router
            gc.collect()
    return table
