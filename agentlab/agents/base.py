"""The ``Agent`` protocol every runner implements, and the registry naming the runners.

A pool document says which implementation carries its tasks out (front matter ``runner:``,
plus optional ``runner_options:``); :data:`AGENTS` maps that name to ``"module:Class"`` the
way :data:`~agentlab.metaagent.router.ROUTERS` does for routers, so enrolling a document
with a new runner needs one line here and no change elsewhere. A runner is built from its
document and options (:func:`build_agent`, the one place that merges them) and runs an
episode with :meth:`Agent.run` given a :class:`~agentlab.agents.context.RunContext` (its
models, recorder, step budget and deadline); it only decides and acts -- the episode counts
what it spent and enforces its time (:func:`run_agent`). It declares which env it needs
(:attr:`Agent.env_kind`) so the episode can open it, or report plainly that it cannot here.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from agentlab.agents.context import Models, RunContext
from agentlab.config import validate
from agentlab.envs.timed import TimedEnv, TimeLimitExceeded
from agentlab.errors import ActionRejected, ConfigError, ContextOverflowError, HarnessError
from agentlab.llm.deadline import task_deadline

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.base import Env
    from agentlab.pool.document import AgentDocument

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

#: how an agent's episode ended: its own verdict (done, failed, max_steps) or stopped from outside
Status = Literal["done", "failed", "max_steps", "time_limit", "context_overflow"]

#: runner name (a document's ``runner:``) -> "module:Class"
AGENTS: dict[str, str] = {
    "code": "agentlab.agents.code:CodeAgent",
    "tools": "agentlab.agents.tools:ToolAgent",
    "appagent": "agentlab.agents.appagent.runner:AppAgentRunner",
    "gui": "agentlab.agents.appagent.runner:GuiRunner",
    "s2": "agentlab.agents.s2.runner:AgentS2",
    "pcagent": "agentlab.agents.pcagent.runner:PCAgent",
}


@dataclass
class AgentResult:
    """How an episode ended (what it cost is the episode's to count: :class:`RunContext`)."""

    status: Status
    steps: int = 0
    error: str | None = None  #: the last problem the agent met (a rejected reply, a failed program)
    #: hierarchical runners: subtasks (subgoals) planned in all, and those completed; None for flat runners
    subtasks: int | None = None
    subtasks_done: int | None = None
    #: a desktop specialist's path (``gui``: the window; ``file``: the application's files); None: the runner has one
    route: str | None = None


@runtime_checkable
class Agent(Protocol):
    """Something that carries a task out in an env, recording every step into ``ctx.recorder``."""

    #: the env this runner acts in: "workspace" | "desktop" | "phone"
    env_kind: ClassVar[str]

    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        """Act until the agent ends the episode or ``ctx.max_steps`` actions were taken."""
        ...

    # Optional (looked up with getattr by the single-agent team, so it is not part of the protocol's
    # required surface): ``env_options(base: TaskEnvOptions) -> TaskEnvOptions`` widens the env the
    # run would give, e.g. the code agent's network access for a search endpoint or a writable
    # Drive folder (agentlab.agents.code).


class AgentFactory(Protocol):
    """What :data:`AGENTS` names: a class built from a document and its options."""

    env_kind: ClassVar[str]

    def __call__(self, document: AgentDocument, options: Mapping[str, Any]) -> Agent: ...


def agent_class(name: str, *, where: str | None = None) -> AgentFactory:
    """The runner class registered as ``name``; an unknown name is a :class:`ConfigError`."""
    try:
        target = AGENTS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown runner {name!r}; known runners: {', '.join(AGENTS)}", where=where) from None
    module, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"runner {name!r} is not available ({module}:{attr}: {exc})", where=where) from None
    return cls


def build_agent(document: AgentDocument, overrides: Mapping[str, Any] | None = None, *, seed: int = 0) -> Agent:
    """The runner of ``document``, built with the run's ``seed``, then the document's own
    ``runner_options`` (its own seed wins), then the run's ``overrides`` (an ablation's
    ``-O use_docs=false``). A document without a runner is a :class:`HarnessError` naming it."""
    where = str(document.path or document.name)
    if document.runner is None:
        raise HarnessError(f"agent {document.name} has no runner (add 'runner:' to its document)", where=where)
    cls = agent_class(document.runner, where=where)
    return cls(document, {"seed": seed, **document.runner_options, **dict(overrides or {})})


def runner_config(model: type[M], document: AgentDocument, options: Mapping[str, Any] | None) -> M:
    """A runner's settings ``model`` from its options (what :func:`build_agent` merged). Every
    runner checks them here, so a misspelt or bad option is the same one :class:`ConfigError`
    line whichever runner it is: ``<document>: runner_options.<key>: ...``, an unknown key with
    the known ones, before anything runs."""
    return validate(model, dict(options or {}), where=document.path or document.name, prefix=("runner_options",))


def run_agent(agent: Agent, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
    """Run ``agent``'s episode with the context's deadline enforced on every action and every model
    call (:func:`agentlab.llm.deadline.task_deadline`). A run stopped
    from outside (the time limit; a prompt over the model's context) is a result too, with the
    steps it recorded: its cost is in ``ctx`` whatever happened. An action a reviewer rejected
    (:class:`~agentlab.errors.ActionRejected`, raised by the env it acts on) ends it as ``failed``."""
    try:
        with task_deadline(ctx.deadline):  # a model call is cut there too, not only the next action
            return agent.run(TimedEnv(env, ctx.deadline), task_instruction, ctx)
    except TimeLimitExceeded as exc:
        return AgentResult(status="time_limit", steps=ctx.actions_recorded(), error=exc.message)
    except ContextOverflowError as exc:
        return AgentResult(status="context_overflow", steps=ctx.actions_recorded(), error=exc.message)
    except ActionRejected as exc:  # a reviewer watching each action stopped it: the agent's failure
        return AgentResult(status="failed", steps=ctx.actions_recorded(), error=exc.message)


def acting_agents(documents: Iterable[AgentDocument], env: str) -> frozenset[str]:
    """The names of the documents whose runner can act on a task of ``env`` (its env kind's
    :data:`~agentlab.tasks.env_kinds.CAN_ACT`): a workspace task never goes to a GUI-only agent.
    Documents without a runner are left out."""
    from agentlab.tasks.env_kinds import CAN_ACT

    return frozenset(d.name for d in documents
                     if d.runner is not None and env in CAN_ACT.get(agent_class(d.runner).env_kind, frozenset()))


def unavailable(documents: Iterable[AgentDocument]) -> dict[str, str]:
    """name -> why, for every document whose agent cannot be built on this machine as configured
    (a resource it needs is missing: a Drive folder, a search endpoint). A router should not hand
    such an agent a task: the episode could only end as a harness error before its first step."""
    from agentlab.errors import EnvironmentUnavailableError

    out: dict[str, str] = {}
    for doc in documents:
        if doc.runner is None:
            continue
        try:
            build_agent(doc)
        except EnvironmentUnavailableError as exc:
            out[doc.name] = exc.message
    return out


def runnable_agents(documents: Sequence[AgentDocument], env: str) -> frozenset[str]:
    """:func:`acting_agents` of ``env`` less the :func:`unavailable` ones: the agents a router or a
    planner may hand a task (or a step) of ``env`` here. Whatever is left out is logged once, with why."""
    can = acting_agents(documents, env)
    missing = unavailable(d for d in documents if d.name in can)
    for name, why in sorted(missing.items()):
        log.info("routing: %s is left out of the store here: %s", name, why)
    return can - set(missing)


class RunnableAgents:
    """:func:`runnable_agents` per env, computed once (building every agent to find the unavailable
    ones is not free): the ``acting`` callable of a router's route function and of a planner."""

    def __init__(self, documents: Iterable[AgentDocument]) -> None:
        self.documents = list(documents)
        self._by_env: dict[str, frozenset[str]] = {}

    def __call__(self, env: str) -> frozenset[str]:
        if env not in self._by_env:
            self._by_env[env] = runnable_agents(self.documents, env)
        return self._by_env[env]


def runner_problems(documents: Iterable[AgentDocument]) -> list[str]:
    """``path:line: ...`` for every document whose ``runner:`` is not registered in :data:`AGENTS`."""
    out: list[str] = []
    for doc in documents:
        if doc.runner is not None and doc.runner not in AGENTS:
            out.append(f"{doc.path or doc.name}:{doc.runner_line}: unknown runner '{doc.runner}'; known: {', '.join(AGENTS)}")
    return out


@dataclass
class SoloResult(AgentResult):
    """An agent's result with what it spent (:class:`Solo`)."""

    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Solo:
    """An agent paired with its model, run outside a suite (the agent CLI, notebooks, tests): each
    run gets a fresh context whose meters count what that run spent."""

    def __init__(self, agent: Agent, llm: Any) -> None:
        self.agent, self.llm = agent, llm
        self.env_kind = agent.env_kind

    def run(self, env: Env, task_instruction: str, recorder: Any, max_steps: int,
            *, deadline: float = float("inf")) -> SoloResult:
        ctx = RunContext(Models(self.llm), recorder, max_steps, deadline)
        res = run_agent(self.agent, env, task_instruction, ctx)
        used = ctx.usage()
        return SoloResult(status=res.status, steps=res.steps, error=res.error, subtasks=res.subtasks,
                          subtasks_done=res.subtasks_done, llm_calls=used.calls, tokens_in=used.tokens_in,
                          tokens_out=used.tokens_out)
