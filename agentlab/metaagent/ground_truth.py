"""Ground truth as a router (``gt``): each task file's gold agent, or the pool's agent of its
domain for the interface its env needs.

Why a router: ``agentlab exec --router gt`` is the oracle arm of every execution study, and a run
treats it like any other router (one registry, :data:`~agentlab.metaagent.router.ROUTERS`) instead
of special-casing its name. It reads a task file's fields (gold ``agent``, ``domain``, ``env``), so
it routes task files (:meth:`route`), not bare instructions; a task with a gold plan runs
that plan under it (:attr:`follows_gold_plans`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from agentlab.errors import ConfigError, HarnessError
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.router import Router
from agentlab.pool import AgentPool
from agentlab.tasks.env_kinds import ENV_KINDS
from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)
BARE = ("ground truth (router gt) routes task files -- it reads their gold agent, domain and env -- "
        "not bare instructions; use it with agentlab exec, or choose a learned router")

def gt_agent(task: Any, pool: AgentPool) -> str:
    """Ground-truth routing: the task's ``agent``, else the pool's agent of the task's domain with
    the interface and platform its env kind needs (:data:`~agentlab.tasks.env_kinds.ENV_KINDS`:
    a CLI agent for a workspace task, a desktop GUI agent for a desktop task, a mobile GUI agent
    for a phone task), else the kind's fallback domain's (``general``: a workspace task of a
    domain without a CLI agent goes to DataAgent; ``mobile``: AppAgent). Among several, a
    specialist with a toolkit (``runner: tools``) comes before agents that write programs
    (FileAgent before Friday, DataAgent before CoderAgent): the oracle arm measures the store's
    specialists, and a program-writing agent is a generalist with a domain label; then the first name."""
    if task.agent is not None:
        return str(task.agent)
    kind = ENV_KINDS[task.env]
    interface, fallback = kind.interface, kind.fallback_domain
    for domain in (task.domain, fallback):
        names = [a.name for a in sorted((a for a in pool.agents if a.domain == domain and a.interface == interface
                                          and a.platform == kind.platform), key=lambda a: (a.runner != "tools", a.name))]
        if names:
            if domain != task.domain:
                log.info("task %s: no %s agent of domain '%s'; ground truth falls back to %s (%s)",
                         task.id, interface, task.domain, names[0], domain)
            return names[0]
    raise HarnessError(f"no {interface} agent of domain '{task.domain}' (or '{fallback}') in the pool for "
                       "ground-truth routing; give the task an 'agent' field", where=task.source or task.id)


class GroundTruthRouter(Router):
    """The oracle: nothing to learn, every task file to its gold agent (:func:`gt_agent`)."""

    name = "gt"
    follows_gold_plans: ClassVar[bool] = True

    def __init__(self, pool: AgentPool, llm: Any = None, **kwargs: Any) -> None:
        run = {k: kwargs.pop(k) for k in ("progress", "use_cache", "seed") if k in kwargs}
        if kwargs:
            raise ConfigError(f"invalid options for the gt router: {', '.join(sorted(kwargs))}: ground truth takes none")
        super().__init__(pool, llm, **run)

    def fit(self, train: Any) -> dict[str, float]:
        """Nothing to learn."""
        return {"seconds": 0.0}

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        raise ConfigError(BARE)

    def route(self, tasks: Sequence[str | ExecTask], states: Any = None, **_: Any) -> list[RouteResult]:
        """Each task file's gold agent: it acts on its task's env by construction, under any policy."""
        if any(isinstance(t, str) for t in tasks):
            raise ConfigError(BARE)
        names = [gt_agent(t, self.pool) for t in tasks if not isinstance(t, str)]
        return [RouteResult(agent=n, ranking=[(n, 1.0)]) for n in names]
