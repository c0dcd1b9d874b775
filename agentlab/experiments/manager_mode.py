"""HashManager mode on multi-app tasks: top-K recall of each router's ranking and AgentMatch of the manager's plans.

Top-K recall: the share of a task's gold domains covered by the domains of the router's top K
agents (every multi-app task, no generation). AgentMatch: the manager (the backbone, prompted
with the top-K agents' documents; the ICL router puts all documents) writes a plan per task; it
matches when the set of the plan's agent domains equals the gold set. Planning generates per
task, so only the first ``tasks`` tasks are planned.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import ConfigError
from agentlab.eval.benchmarks import BenchmarkTask, load_osworld
from agentlab.eval.metrics import agent_match, topk_recall
from agentlab.experiments.markdown import pct, table
from agentlab.metaagent.data import TrainingSet
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.manager import HashManager
from agentlab.metaagent.router import Router, build_router, router_class
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.llm.base import LLMBackend

log = logging.getLogger(__name__)


class ManagerModeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    routers: list[str] = Field(default_factory=lambda: ["agenttoken", "embedding"])
    #: multi-app tasks given to the manager (it generates a plan per task)
    tasks: int = Field(4, ge=0)
    #: top-K agents whose documents the manager sees
    k: int = Field(3, ge=1)
    max_new_tokens: int = Field(96, ge=1)
    #: decode plans inside the plan grammar (False: the prompt-only ablation)
    constrained: bool = True
    #: the K of the top-K recall columns
    recall_ks: list[int] = Field(default_factory=lambda: [1, 3, 5])


@dataclass
class ManagerRow:
    """One router in manager mode."""

    router: str
    tasks: int
    recall: dict[int, float]
    planned: list[BenchmarkTask]
    plans: list[RouteResult]
    agent_match: float
    #: plans without any agent (unusable after the corrective retry)
    plans_failed: int
    seconds_per_plan: float
    extra: dict[str, Any] = field(default_factory=dict)
    #: the documents in the manager prompt ("top-K" or "all N"), demonstrations per document, and
    #: the prompt's mean length in tokens over the planned tasks (None: the backend counts no tokens)
    documents: str = ""
    demos_per_doc: int = 0
    prompt_tokens: float | None = None

    @property
    def example(self) -> str | None:
        """The first planned task's raw manager answer that has any text."""
        return next((p.raw for p in self.plans if p.raw), None)

    def as_row(self) -> dict[str, Any]:
        recall = {f"top-{k} recall": round(r, 3) for k, r in self.recall.items()}
        return {"router": self.router, "tasks": self.tasks} | recall | {"manager tasks": len(self.planned), "AgentMatch": round(self.agent_match, 3),
                      "plans failed": self.plans_failed, "manager s/task": round(self.seconds_per_plan, 1)}


@dataclass
class ManagerMode:
    rows: list[ManagerRow]
    max_new_tokens: int = 0
    k: int = 0
    constrained: bool = True

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([r.as_row() for r in self.rows]).set_index("router")

    def summary(self) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {}
        for r in self.rows:
            out |= {f"{r.router}_agentmatch": r.agent_match, f"{r.router}_top{self.k}_recall": r.recall[self.k],
                    f"{r.router}_failures": r.plans_failed}
        return out

    def markdown(self, of: int) -> list[str]:
        """The benchmark's table; ``of``: how many multi-app tasks the planned ones were spread over."""
        ks = sorted({k for r in self.rows for k in r.recall})
        tasks = max((len(r.planned) for r in self.rows), default=0)
        body = [
            f"{tasks} OSWorld multi-app tasks (of {of}, spread over the list), gold = related "
            f"apps mapped to domains. Same manager prompt, backbone (SmolLM2-135M) and answer budget "
            f"({self.max_new_tokens} new tokens, one corrective retry) for both methods; plans decoded "
            + ("inside the plan grammar (top-K names only, never one agent twice in a row)." if self.constrained
               else "from the prompt alone (--unconstrained ablation)."),
            "",
            *table(["method", "documents in prompt", "demos/doc", "prompt tokens (mean)", "AgentMatch %",
                    *(f"top-{k} recall %" for k in ks), "manager failures", "s/task"],
                   [[r.router, r.documents, r.demos_per_doc, "-" if r.prompt_tokens is None else f"{r.prompt_tokens:.0f}",
                     pct(r.agent_match), *(pct(r.recall[k]) for k in ks), r.plans_failed, f"{r.seconds_per_plan:.1f}"]
                    for r in self.rows]),
            "",
            "A manager failure is an answer that stayed unusable after the corrective retry (no `###Agent: subtask###` "
            "line, unknown agent, or the same agent twice in a row); it counts as a miss for AgentMatch.",
        ]
        for r in self.rows:
            if r.example:
                body += ["", f"Example {r.router} manager answer (first task with output):", "", "```",
                         r.example.strip()[:600], "```"]
        return body


def multi_app_tasks(pool: AgentPool) -> list[BenchmarkTask]:
    """OSWorld multi-app tasks all of whose domains some agent of ``pool`` serves."""
    domains = {a.domain for a in pool}
    return [t for t in load_osworld(multi=True) if set(t.domains) <= domains]


def measure_manager(
    router: Router, manager: HashManager, tasks: Sequence[BenchmarkTask], pool: AgentPool, *, planned: int, k: int,
    recall_ks: Sequence[int] = (1, 3, 5),
) -> ManagerRow:
    """Top-K recall of ``router`` on all ``tasks``; plans (and AgentMatch) for the first ``planned``.

    A plan carries the router's ranking of its task, so only the tasks beyond ``planned`` are ranked apart."""
    sub = list(tasks[:planned])
    t0 = time.perf_counter()
    plans = router.plan([t.instruction for t in sub], manager, k=k)
    seconds = (time.perf_counter() - t0) / max(len(sub), 1)
    rest = router.rank([t.instruction for t in tasks[planned:]]) if len(tasks) > planned else []
    rankings = [[n for n, _ in r] for r in [p.ranking for p in plans] + rest]
    golds = [list(t.domains) for t in tasks]
    recall = {kk: topk_recall(rankings, golds, pool, kk) for kk in recall_ks}
    match = agent_match([[s.agent for s in p.plan] for p in plans], [list(t.domains) for t in sub], pool)
    failed = sum(1 for p in plans if p.agent is None and not p.plan)
    row = ManagerRow(router.name, len(tasks), recall, sub, plans, match.accuracy, failed, seconds)
    used = router.manager_for(manager)
    row.demos_per_doc = used.max_demos
    if router.manager_uses_all_documents:
        row.documents = f"all {len(pool)}"
        prompts = [used.prompt(t.instruction, list(pool.agents)) for t in sub]
    else:
        row.documents = f"top-{k}"
        prompts = [used.prompt(t.instruction, used.candidates([pool.get(n) for n in rk], k)) for t, rk in zip(sub, rankings)]
    if prompts and manager.backend.capabilities.token_counting:
        row.prompt_tokens = statistics.mean(manager.backend.count_tokens(p) for p in prompts)
    return row


def run(
    pool: AgentPool,
    tasks: Sequence[BenchmarkTask],
    backend: LLMBackend,
    config: ManagerModeConfig,
    *,
    fitted: Mapping[str, Router] | None = None,
    train: TrainingSet | None = None,
) -> ManagerMode:
    """Each configured router in manager mode; a router not in ``fitted`` is built with default
    options and fitted on ``train``."""
    manager = HashManager(backend, max_new_tokens=config.max_new_tokens, constrained=config.constrained)
    rows = []
    for kind in config.routers:
        router = (fitted or {}).get(kind)
        if router is None:
            if train is None:
                raise ConfigError(f"router '{kind}' is not fitted and no training set was given")
            router = router_class(kind)(pool, progress=False)
            router.fit(train)
        row = measure_manager(router, manager, tasks, pool, planned=config.tasks, k=config.k, recall_ks=config.recall_ks)
        row.router = kind
        rows.append(row)
        log.info("%s", row.as_row())
    return ManagerMode(rows, max_new_tokens=config.max_new_tokens, k=config.k, constrained=config.constrained)


def shipped_routers(kinds: Sequence[str], pool: AgentPool, tokens: Path | None = None) -> dict[str, Router]:
    """Routers as the CLI builds them (:func:`~agentlab.metaagent.router.build_router`): AgentToken and the
    hybrid from ``tokens`` (default: the shipped ``data/tokens``), the others fitted on the seed demonstrations."""
    return {kind: build_router(kind, pool, tokens, progress=False) for kind in kinds}
