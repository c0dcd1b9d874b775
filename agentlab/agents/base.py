"""The ``Agent`` protocol every runner implements, and the registry naming the runners.

A pool document says which implementation carries its tasks out (front matter ``runner:``,
plus optional ``runner_options:``); :data:`AGENTS` maps that name to ``"module:Class"`` the
way :data:`~agentlab.metaagent.router.ROUTERS` does for routers, so enrolling a document
with a new runner needs one line here and no change elsewhere. A runner class is built as
``cls(llm, document, options)`` and runs an episode with :meth:`Agent.run`; it declares which
env it needs (:attr:`Agent.env_kind`) so the episode runner can build it, or report plainly
that it cannot here.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from agentlab.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.base import Env
    from agentlab.llm.base import LLMBackend, Metered
    from agentlab.pool.document import AgentDocument
    from agentlab.trajectory import TrajectoryRecorder

Status = Literal["done", "failed", "max_steps"]

#: runner name (a document's ``runner:``) -> "module:Class"
AGENTS: dict[str, str] = {
    "code": "agentlab.agents.code:CodeAgent",
    "appagent": "agentlab.agents.appagent_runner:AppAgentRunner",
    "gui": "agentlab.agents.appagent_runner:GuiRunner",
    "s2": "agentlab.agents.s2.runner:AgentS2",
    "pcagent": "agentlab.agents.pcagent.runner:PCAgent",
}


#: the task envs (a task file's ``env``) an agent acting in a kind of env can carry out. A code
#: agent edits a desktop task's files directly (as the paper's CLI agents do); a GUI agent needs
#: the task's application on a screen and a phone agent a device, so a workspace task sent to a
#: GUI agent is the router's mistake: a failed row (status ``wrong_env``), not a harness error.
CAN_ACT: dict[str, frozenset[str]] = {
    "workspace": frozenset({"workspace", "desktop"}),
    "desktop": frozenset({"desktop"}),
    "phone": frozenset({"phone"}),
}


@dataclass
class AgentResult:
    """How an episode ended and what it cost."""

    status: Status
    steps: int = 0
    llm_calls: int = 0
    tokens_in: int = 0  #: as reported by the backend; 0 when it does not report usage
    tokens_out: int = 0
    error: str | None = None  #: the last problem the agent met (a rejected reply, a failed program)
    #: hierarchical runners: subtasks (subgoals) planned in all, and those completed; None for flat runners
    subtasks: int | None = None
    subtasks_done: int | None = None


def interrupted_result(error: str, metered: Metered, recorder: TrajectoryRecorder) -> AgentResult:
    """The result of a runner stopped from outside (the task's time limit): the steps it
    recorded with an action and the calls and tokens ``metered`` saw, so the row keeps its cost."""
    calls, tokens_in, tokens_out = metered.spent()
    steps = sum(1 for s in recorder.steps if s.action is not None)
    return AgentResult(status="failed", steps=steps, llm_calls=calls, tokens_in=tokens_in, tokens_out=tokens_out, error=error)


@runtime_checkable
class Agent(Protocol):
    """Something that carries a task out in an env, recording every step."""

    #: the env this runner acts in: "workspace" | "desktop" | "phone"
    env_kind: ClassVar[str]

    def run(self, env: Env, task_instruction: str, recorder: TrajectoryRecorder, max_steps: int) -> AgentResult:
        """Act until the agent ends the episode or ``max_steps`` actions were taken."""
        ...

    # Optional (looked up with getattr by the episode runner, so it is not part of the protocol's
    # required surface): ``env_options(base: TaskEnvOptions) -> TaskEnvOptions`` widens the env the
    # run would give, e.g. the code agent's network access for a search endpoint or a writable
    # Drive folder (agentlab.agents.code).


class AgentFactory(Protocol):
    """What :data:`AGENTS` names: a class built from a backend, a document and its options."""

    env_kind: ClassVar[str]

    def __call__(self, llm: LLMBackend, document: AgentDocument, options: Mapping[str, Any]) -> Agent: ...


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


def runner_problems(documents: Iterable[AgentDocument]) -> list[str]:
    """``path:line: ...`` for every document whose ``runner:`` is not registered in :data:`AGENTS`."""
    out: list[str] = []
    for doc in documents:
        if doc.runner is not None and doc.runner not in AGENTS:
            out.append(f"{doc.path or doc.name}:{doc.runner_line}: unknown runner '{doc.runner}'; known: {', '.join(AGENTS)}")
    return out
