"""How a task is carried out: the :data:`TEAMS` registry and what every team is given.

One way to carry a task out, three teams: ``single`` (one agent acts on the whole task),
``plan`` (a plan's steps run in order, each by its agent, in one shared env: a gold plan or a
manager's) and ``cola`` (COLA's planner, scheduler, decision agents and reviewer). The episode
kernel (:mod:`agentlab.run.episode`) does everything around them once -- the episode
folder, opening the task's env, the models and their meters, the time limit, judging the end
state, the result row, harness errors -- and calls a team through three hooks:

1. :meth:`Team.prepare` decides who acts (routing, a plan) and which env to open, or ends the
   episode early (no agent chosen, no plan, an agent that cannot act on the task's env);
2. :meth:`Team.run` acts on the opened env;
3. :meth:`Team.close` writes what the team keeps besides the row (``plan.json``, the
   trajectory's end record), also after a harness error.

A second planner/worker/reviewer design is a new module with a class implementing these three
hooks and one line in :data:`TEAMS`, which names its settings model too (a :class:`TeamSettings`,
checked wherever ``ExecOptions.team_settings`` is filled); nothing in the kernel changes. A team
whose settings ask a person gets the run's callback (:mod:`agentlab.dialogue.person`) as ``Job.ask``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from agentlab.agents.context import Models, RunContext
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions
from agentlab.errors import AgentlabError, ConfigError
from agentlab.judge.evaluators import EvalResult
from agentlab.metaagent.router import DEFAULT_ROUTER
from agentlab.tasks.spec import ExecTask
from agentlab.pool.store import AgentPool
from agentlab.record.row import EpisodeRow
from agentlab.envs.trajectory import TrajectoryRecorder

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.dialogue.person import Ask
    from agentlab.metaagent.router import RouterShelf
    from agentlab.tasks.decisions import RouteResult


class TeamSettings(BaseModel):
    """What a team's own settings model derives from: unknown keys are refused, and it says whether
    the team will ask a person (so the run knows to hand it one; Ray runs have nobody to ask)."""

    model_config = ConfigDict(extra="forbid")

    @property
    def asks_person(self) -> bool:
        return False


@dataclass(frozen=True)
class TeamEntry:
    """One team of :data:`TEAMS`: its class and its settings model, as "module:Class" (imported lazily)."""

    team: str  #: the class; it takes no arguments (a run's settings come with the :class:`Job`)
    settings: str | None = None  #: its :class:`TeamSettings` model (None: the team has no settings)
    about: str = ""  #: one line for ``--team``'s help


#: team name -> its entry: the only list of teams (the CLI's choices and help are built from it)
TEAMS: dict[str, TeamEntry] = {
    "single": TeamEntry("agentlab.teams.single:SingleAgent", about="one agent on the whole task"),
    "plan": TeamEntry("agentlab.teams.executed:PlanTeam", about="a plan's steps in order, each by its agent"),
    "cola": TeamEntry("agentlab.teams.cola.run:ColaRunner", "agentlab.teams.cola.options:ColaOptions",
                      about="planner, scheduler, decision agents, reviewer (docs/agents/cola.md)"),
}
#: how the agents of a task are chosen when no team is named: one (routed, or the gold plan's), or a manager's plan
Mode = Literal["single", "manager"]
MODES: tuple[str, ...] = get_args(Mode)

S = TypeVar("S", bound=TeamSettings)

class NoAgentChosen(AgentlabError):
    """The router gave no agent for the task (e.g. the ICL router's generation named none): the
    routing failed, so the task fails -- not a harness error."""


#: picks the agent (a pool name) for a task; raises an AgentlabError when none can be chosen
RouteFn = Callable[[ExecTask], str]
#: writes a multi-agent plan for a task (manager mode): an empty ``plan`` with ``error`` when none
PlanFn = Callable[[ExecTask], "RouteResult"]


@dataclass
class ExecOptions:
    """How each task of a suite is run (recorded in every row)."""

    router: str = DEFAULT_ROUTER
    max_steps: int = 10
    time_limit_s: float = 600.0
    seed: int = 0
    #: runs per task, with seeds ``seed, seed+1, ..., seed+seeds-1``
    seeds: int = 1
    #: cut every model reply at this many new tokens (None: each runner's own setting)
    max_new_tokens: int | None = None
    #: laid over every document's ``runner_options`` (an ablation: ``{"use_docs": False}``)
    runner_options: dict[str, Any] = field(default_factory=dict)
    envs: TaskEnvOptions = field(default_factory=TaskEnvOptions)
    #: "single": one agent per task (a task's gold plan still runs under ``--router gt``);
    #: "manager": a manager writes a plan over the router's top-K agents and the plan is executed
    mode: Mode = "single"
    #: a team of :data:`TEAMS` carrying every task out; None: chosen per task (:func:`team_name`)
    team: str | None = None
    #: that team's settings: its own model, or a mapping it checks (None: its defaults; no team: none,
    #: so ``replace(options, team=None)`` leaves no other team's settings behind)
    team_settings: TeamSettings | dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.team_settings = None if self.team is None else team_settings(self.team, self.team_settings)

    def settings(self, model: type[S]) -> S:
        """The team's settings as its own model (how a team reads them)."""
        if not isinstance(self.team_settings, model):
            raise ConfigError(f"team {self.team!r} has no {model.__name__} settings")
        return self.team_settings


@dataclass
class Job:
    """One episode as a team sees it: the task, the pool, the metered models, the run's options
    (its seed already this episode's), where to write, the deadline, and how the agents were chosen."""

    task: ExecTask
    pool: AgentPool
    models: Models
    options: ExecOptions
    folder: Path  #: the episode folder (``<run>/episodes/<id>[/seed-<s>]``)
    run_dir: Path  #: what trajectory paths in the row are relative to
    deadline: float  #: ``time.monotonic()`` after which no action runs
    agent: str | None = None  #: forced for every task (``--agent``)
    route: RouteFn | None = None  #: the router (None: ground truth)
    planner: PlanFn | None = None  #: manager mode
    ask: Ask | None = None  #: how a team that asks a person asks (COLA's passive/active modes)
    routers: RouterShelf | None = None  #: the routers the run has built (a team's own router comes from here)

    def context(self, recorder: TrajectoryRecorder, **changes: Any) -> RunContext:
        """The :class:`RunContext` of one agent acting for this episode (its own recorder)."""
        base = RunContext(models=self.models, recorder=recorder, max_steps=self.options.max_steps,
                          deadline=self.deadline, seed=self.options.seed)
        return base if not changes else base.with_recorder(recorder, **changes)


@dataclass(frozen=True)
class Opening:
    """Which env the kernel opens for the team: a kind of :data:`agentlab.envs.task_env.ENV_KINDS`."""

    kind: str
    options: TaskEnvOptions


class Team(Protocol):
    """A way to carry a task out (see the module docstring for the three hooks)."""

    def prepare(self, job: Job, row: EpisodeRow) -> Opening | None: ...

    def run(self, job: Job, opened: TaskEnv, row: EpisodeRow) -> None: ...

    def judged(self, job: Job, verdict: EvalResult) -> None: ...

    def close(self, job: Job, row: EpisodeRow) -> None: ...


def team_entry(name: str, *, where: str | Path | None = None) -> TeamEntry:
    """The entry of the team registered as ``name``; an unknown name is a :class:`ConfigError` listing the known ones."""
    try:
        return TEAMS[name]
    except KeyError:
        raise ConfigError(f"unknown team {name!r}; known teams: {', '.join(TEAMS)}", where=where) from None


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def team_class(name: str, *, where: str | None = None) -> type[Team]:
    """The team registered as ``name``."""
    cls: type[Team] = _load(team_entry(name, where=where).team)
    return cls


def team_settings(name: str, given: TeamSettings | dict[str, Any] | None = None, *,
                  where: str | Path | None = None) -> TeamSettings | None:
    """Team ``name``'s settings checked by its own model (its defaults for what ``given`` leaves out);
    None for a team without settings. Settings a team does not take are a :class:`ConfigError`."""
    entry = team_entry(name, where=where)
    if entry.settings is None:
        if given:
            raise ConfigError(f"team {name!r} takes no settings", where=where)
        return None
    model: type[TeamSettings] = _load(entry.settings)
    if isinstance(given, model):
        return given
    try:
        return model.model_validate(given.model_dump() if isinstance(given, BaseModel) else given or {})
    except ValidationError as exc:
        raise ConfigError(f"team {name!r} settings: {' '.join(str(exc).split())[:300]}", where=where) from None


def team_name(task: ExecTask, options: ExecOptions, *, agent: str | None, route: RouteFn | None,
              planner: PlanFn | None) -> str:
    """Which team carries ``task`` out: a forced agent acts alone; a named team (``options.team``)
    is that team; a manager's plan, or a task's gold plan under a router that follows them (ground
    truth, which is also what no route means), is a plan; otherwise one routed agent."""
    if agent is not None:
        return "single"
    if options.team is not None:
        return options.team
    follows_gold = route is None or bool(getattr(route, "follows_gold_plans", False))
    if options.mode == "manager" or planner is not None or (follows_gold and task.plan):
        return "plan"
    return "single"
