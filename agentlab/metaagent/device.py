"""Device-aware routing: a task goes to an agent that can act on the device it runs on.

Why: a router ranks every agent of the pool by what the request *says*, and a desktop request
about an online shop reads like a task for the phone's shopping app ("Browse spider-man toys for
kids and sort by lowest price" -> TemuAgent). Yet the store always knows the device: a task file
opens a desktop, a workspace or a phone (``env``), and a person asks from one of them. An agent
of another platform cannot act there at all, so choosing it is an error the store can rule out
by construction. On the 313 OSWorld + AppAgent tasks, 32 of the hybrid router's 80 errors
(SmolLM2, lda rows) named an agent of the other device; routed device-aware, the hybrid is right
on 81.8 % instead of 74.4 % (``benchmarks/results/routing_device_lda_*.md``).

How (:func:`on_platform`): the router's decision stands when its agent runs on the platform;
otherwise the most probable agent of that platform takes the task. The ranking keeps only that
platform's agents, renormalised, so a policy or a manager reading it sees the same choice. A
platform none of the ranked agents runs on leaves the decision as it was, with a warning in its
``error`` (nothing to choose from is not a reason to choose nothing). :func:`restrict` is the same
rule for any set of eligible agents: a task file's env admits only the agents whose runner can act
on it (a workspace task never goes to a GUI-only agent: ``RouterRoute`` in :mod:`agentlab.run.episode`). Caller: :meth:`agentlab.metaagent.router.Router.route`
(``agentlab route --platform``; a task file's env names the platform).
"""

from __future__ import annotations

from collections.abc import Collection

from agentlab.pool import AgentPool
from agentlab.tasks.decisions import RouteResult
from agentlab.tasks.env_kinds import ENV_KINDS


def platform_of_env(env: str) -> str | None:
    """The pool platform of a task env (``workspace`` and ``desktop``: desktop; ``phone``: mobile)."""
    kind = ENV_KINDS.get(env)
    return kind.platform if kind is not None else None


def on_platform(result: RouteResult, pool: AgentPool, platform: str | None) -> RouteResult:
    """``result`` with only ``platform``'s agents eligible (see the module docstring); None: as it is."""
    if platform is None:
        return result
    names = set(pool.names)
    return restrict(result, {n for n in names if pool.get(n).platform == platform}, f"platform '{platform}'")


def restrict(result: RouteResult, eligible: Collection[str], what: str) -> RouteResult:
    """``result`` with only the ``eligible`` agents: the router's choice stands when it is one of
    them, else the most probable eligible one takes the task; the ranking keeps only them,
    renormalised. None of them ranked: the decision is kept, with a warning in ``error``."""
    keep = [(n, p) for n, p in result.ranking if n in eligible]
    if not keep:  # said, not hidden: the caller asked for agents the ranking does not hold
        why = f"no agent of {what} was ranked; kept {result.agent}"
        return RouteResult(agent=result.agent, ranking=result.ranking, plan=result.plan,
                           error=f"{result.error}; {why}" if result.error else why, raw=result.raw)
    if len(keep) == len(result.ranking) and result.agent in {n for n, _ in keep}:
        return result  # every ranked agent is eligible: nothing to change
    total = sum(p for _, p in keep)
    ranking = [(n, p / total) for n, p in keep] if total > 0 else keep
    agent = result.agent if result.agent in eligible else ranking[0][0]
    return RouteResult(agent=agent, ranking=ranking, plan=result.plan, error=result.error, raw=result.raw)
