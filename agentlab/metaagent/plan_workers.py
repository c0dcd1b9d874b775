"""HashManager-mode routing over many tasks on several workers (``agentlab route --mode manager --workers N``).

HashManager mode generates a plan per task with an LLM: seconds per task, and tasks independent of
each other, so they shard well. A worker cannot be sent a loaded router or model; a
:class:`PlanRecipe` is what it needs to build its own (the router kind, its checkpoint or training
data, the pool folder), exactly as ``agentlab route`` builds them in-process (:func:`agentlab.metaagent.router.build_router`).
Plans do not depend on which worker made them or in what order, so the predictions equal a serial
run's (the file's line order aside: ``agentlab eval routing`` reads predictions by id).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.llm.config import LLMConfig
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.router import CHECKPOINT_ROUTERS, Router, build_router
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.metaagent.multiapp import ClauseDetector

#: one task to plan: its ``{id, instruction[, state]}`` line
PlanItem = dict[str, Any]


def plan_record(router: Router, manager: Any, item: PlanItem, k: int) -> dict[str, Any]:
    """One task's prediction line in manager mode."""
    state = item.get("state")
    res = router.plan([item["instruction"]], manager, k=k, states=[state] if state else None)[0]
    return res.as_record(item["id"])


def lost_plan(item: PlanItem, why: str) -> dict[str, Any]:
    """The line of a task whose worker died every time it planned it (no agent; the error says why)."""
    return RouteResult(None, [], error=f"harness: {why}").as_record(item["id"])


def clause_detector(kind: str | None, router: Router, pool: AgentPool, tokens: Path | None, demos: Path | None,
                    default_tokens: Path, threshold: float) -> ClauseDetector | None:
    """The manager's clause detector (``--clauses``): parts routed by ``router`` itself when
    ``kind`` is its kind, else by a router of ``kind`` built as ``agentlab route`` builds one
    (None: no detector)."""
    if kind is None:
        return None
    from agentlab.metaagent.multiapp import ClauseDetector

    ranker = router if kind == router.name else build_router(kind, pool, tokens if kind in CHECKPOINT_ROUTERS else None,
                                                           demos=demos, llm=router.llm, progress=False,
                                                           default_tokens=default_tokens)
    return ClauseDetector(ranker, threshold)


@dataclass(frozen=True)
class PlanRecipe:
    """Builds a manager-mode worker: its own pool, router and manager model (picklable)."""

    router: str
    k: int
    default_tokens: Path
    tokens: Path | None = None
    demos: Path | None = None
    agents_dir: Path | None = None
    #: the router's and manager's model, resolved by the driver (so every node uses the same one)
    llm: LLMConfig | None = None
    #: decode inside the plan grammar (``--unconstrained``: False, the prompt-only ablation)
    constrained: bool = True
    #: general agents may be plan steps (``--generalists``; default: specialists only)
    generalists: bool = False
    #: at most one candidate per domain (``--distinct-domains``)
    distinct_domains: bool = False
    #: the plan grammar's bound on steps (``--max-plan-steps``)
    max_plan_steps: int = 3
    #: the router that routes each part of a request (``--clauses``/``--clause-router``; None: no clause detection)
    clause_router: str | None = None
    clause_threshold: float = 0.0
    #: the request's parts are the plan's steps (``--clause-steps``)
    clause_steps: bool = False

    def __call__(self, index: int) -> Callable[[PlanItem], dict[str, Any]]:
        from agentlab.llm import load_backend
        from agentlab.metaagent.manager import HashManager

        r = build_router(self.router, AgentPool.from_dir(self.agents_dir), self.tokens, demos=self.demos,
                         llm=self.llm, progress=False, default_tokens=self.default_tokens)
        pool = r.pool
        detector = clause_detector(self.clause_router, r, pool, self.tokens, self.demos, self.default_tokens,
                                   self.clause_threshold)
        manager = HashManager(load_backend(r.llm), constrained=self.constrained, generalists=self.generalists,
                              distinct_domains=self.distinct_domains, max_plan_steps=self.max_plan_steps,
                              clauses=detector, clause_steps=self.clause_steps)
        return lambda item: plan_record(r, manager, item, self.k)
