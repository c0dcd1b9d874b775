"""New agents join the store without retraining the rest: routing before and after enrolment.

AgentStore's point about AgentToken: enrolling an agent appends one token and trains only
that row, so the agents already in the store keep their tokens bit for bit. This study loads
a trained checkpoint over the pool *without* the new agents (before), adds each new agent's
token with :meth:`~agentlab.metaagent.agenttoken.AgentTokenRouter.add_agent` (after), and
routes the same tasks both times:

* the single-application benchmark tasks (judged by domain as in Table 4): does enrolment cost
  the existing agents accuracy, and how many of those tasks do the newcomers now take?
* the *target* tasks the new agents are for (by default the multi-application desktop tasks
  ``pc-*`` of the execution suite), judged at the agent level: routed to one of the new agents.
  Before enrolment no router can pick them, so that column is 0 by construction; it is shown
  so the gain is read against it.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.tasks.spec import load_tasks
from agentlab.eval.metrics import RoutingReport, routing_accuracy
from agentlab.experiments.routing_data import evaluation_tasks
from agentlab.metaagent.data import load_training_set
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.metaagent.agenttoken import AgentTokenRouter

log = logging.getLogger(__name__)


class _KnownMissingTokens(logging.Filter):
    """Drops :meth:`AgentTokenRouter.load`'s warning that pool agents have no token when those agents
    are exactly the ones about to be enrolled (any other missing agent is still reported)."""

    def __init__(self, new_agents: list[str]) -> None:
        super().__init__()
        self.new_agents = list(new_agents)

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        expected = f"{len(self.new_agents)} pool agent(s) have no token" in text and all(a in text for a in self.new_agents)
        return not expected


def checkpoint_pool(pool: AgentPool, tokens: Path, new_agents: list[str]) -> AgentPool:
    """The pool the study is about: the agents the checkpoint was trained on, plus the newcomers.
    Agents enrolled later than the study (FileAgent) are outside it, not "missing tokens"."""
    import json

    known = set(json.loads((Path(tokens) / "tokens.json").read_text(encoding="utf-8")).get("agents", []))
    return pool.subset([n for n in pool.names if n in known or n in new_agents])


class EnrolmentConfig(BaseModel):
    """One measurement."""

    model_config = ConfigDict(extra="forbid")

    new_agents: list[str] = Field(default_factory=lambda: ["AgentS2", "PCAgent"])
    #: the checkpoint trained without the new agents (default ``data/tokens/base30``: the shipped
    #: 30-token checkpoint from before AgentS2 and PCAgent joined)
    tokens: Path | None = None
    #: which demonstrations the new tokens train on, as ``agentlab train --source`` (the shipped
    #: checkpoint was trained on the documents' seed demonstrations); the existing agents' count
    #: too: a new row also learns where it does not belong
    source: Literal["all", "seed", "generated"] = "seed"
    per_agent: int | None = None
    #: single-app benchmark tasks routed before and after (None: all)
    max_eval_tasks: int | None = None
    #: the tasks the new agents are for: execution-suite ids with this prefix
    target_prefix: str = "pc-"
    seed: int = 0


@dataclass
class Enrolment:
    """Routing before and after the new agents joined."""

    new_agents: list[str]
    before: RoutingReport
    after: RoutingReport
    #: share of single-app tasks the new agents take after enrolment
    taken_by_new: float
    #: target tasks routed to one of the new agents, before / after
    target_before: float
    target_after: float
    target_tasks: int
    agents_before: int = 0  #: tokens in the checkpoint before enrolment
    #: per new agent: train_acc, loss, seconds of its token's training
    added: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the existing agents' token rows are bit-identical after enrolment
    existing_unchanged: bool = True
    #: where each target task went after enrolment (task id -> agent)
    target_routes: dict[str, str | None] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {"when": "before", "agents": self.agents_before, "single-app accuracy %": round(100 * self.before.accuracy, 1),
             "single-app taken by new agents %": 0.0, "target tasks to new agents %": round(100 * self.target_before, 1)},
            {"when": "after", "agents": self.agents_before + len(self.new_agents), "single-app accuracy %": round(100 * self.after.accuracy, 1),
             "single-app taken by new agents %": round(100 * self.taken_by_new, 1),
             "target tasks to new agents %": round(100 * self.target_after, 1)},
        ]
        return pd.DataFrame(rows).set_index("when")

    def to_dict(self) -> dict[str, Any]:
        return {"new_agents": self.new_agents, "before": self.before.accuracy, "after": self.after.accuracy,
                "taken_by_new": self.taken_by_new, "target_before": self.target_before,
                "target_after": self.target_after, "target_tasks": self.target_tasks,
                "agents_before": self.agents_before, "added": self.added,
                "existing_unchanged": self.existing_unchanged, "target_routes": self.target_routes}


def _picked(router: AgentTokenRouter, texts: list[str]) -> list[str | None]:
    return [r.agent for r in router.route(texts)] if texts else []


def run(pool: AgentPool, config: EnrolmentConfig, *, router_options: dict[str, Any] | None = None,
        target_texts: dict[str, str] | None = None) -> Enrolment:
    """Route before and after enrolling ``config.new_agents`` into ``pool`` (which holds them)."""
    import torch

    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.paths import data_dir

    for name in config.new_agents:
        pool.get(name)  # an unknown name fails before anything loads
    tokens = config.tokens or data_dir() / "tokens" / "base30"
    pool = checkpoint_pool(pool, tokens, config.new_agents)
    base_pool = pool.subset([n for n in pool.names if n not in config.new_agents])
    opts = {"progress": False, **(router_options or {})}
    before_router = AgentTokenRouter.load(tokens, base_pool, **opts)
    # (a checkpoint that already holds a new agent fails in load: it is not in base_pool)
    rng = random.Random(config.seed)
    single = evaluation_tasks(base_pool, "enrolment's single-app routing")
    if config.max_eval_tasks:
        single = rng.sample(single, min(len(single), config.max_eval_tasks))
    if target_texts is None:
        target_texts = {t.id: t.instruction for t in load_tasks() if t.id.startswith(config.target_prefix)}
    ids, texts = list(target_texts), list(target_texts.values())
    gold = [t.domain or "" for t in single]
    before = routing_accuracy(_picked(before_router, [t.instruction for t in single]), gold, base_pool)
    target_before = _picked(before_router, texts)

    # the checkpoint lacks the new agents on purpose (their rows are added next): its note saying so is not news here
    note = _KnownMissingTokens(config.new_agents)
    logging.getLogger("agentlab.metaagent.agenttoken").addFilter(note)
    try:
        after_router = AgentTokenRouter.load(tokens, pool, **opts)
    finally:
        logging.getLogger("agentlab.metaagent.agenttoken").removeFilter(note)
    data = load_training_set(pool, per_agent=config.per_agent, source=config.source, seed=config.seed)
    added: dict[str, dict[str, float]] = {}
    for name in config.new_agents:
        t0 = time.perf_counter()
        m = after_router.add_agent(name, data)
        added[name] = {"train_acc": float(m["train_acc"]), "loss": float(m["loss"]),
                       "seconds": round(time.perf_counter() - t0, 2), "demonstrations": data.counts()[name]}
        log.info("enrolled %s: %s", name, added[name])
    assert before_router.head is not None and after_router.head is not None
    n_old = len(before_router.agents)
    unchanged = after_router.agents[:n_old] == before_router.agents and bool(
        torch.equal(after_router.head.weight[:n_old].detach(), before_router.head.weight.detach()))
    picked_after = _picked(after_router, [t.instruction for t in single])
    after = routing_accuracy(picked_after, gold, pool)
    target_after = _picked(after_router, texts)
    new = set(config.new_agents)
    share = lambda picks: sum(p in new for p in picks) / len(picks) if picks else 0.0  # noqa: E731
    return Enrolment(
        new_agents=list(config.new_agents), before=before, after=after, taken_by_new=share(picked_after),
        target_before=share(target_before), target_after=share(target_after), target_tasks=len(texts),
        agents_before=n_old, added=added, existing_unchanged=unchanged, target_routes=dict(zip(ids, target_after)),
    )
