"""How a task is carried out: the :data:`TEAMS` registry and what every team is given.

One way to carry a task out, three teams: ``single`` (one agent acts on the whole task),
``plan`` (a plan's steps run in order, each by its agent, in one shared env: a gold plan or a
manager's) and ``cola`` (COLA's planner, scheduler, decision agents and reviewer). The episode
kernel (:func:`agentlab.run.episode.run_task`) does everything around them once -- the episode
folder, opening the task's env, the models and their meters, the time limit, judging the end
state, the result row, harness errors -- and calls a team through three hooks:

1. :meth:`Team.prepare` decides who acts (routing, a plan) and which env to open, or ends the
   episode early (no agent chosen, no plan, an agent that cannot act on the task's env);
2. :meth:`Team.run` acts on the opened env;
3. :meth:`Team.close` writes what the team keeps besides the row (``plan.json``, the
   trajectory's end record), also after a harness error.

A second planner/worker/reviewer design is a new module with a class implementing these three
hooks and one line in :data:`TEAMS`; nothing in the kernel changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from agentlab.agents.context import Models, RunContext
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions
from agentlab.errors import ConfigError
from agentlab.judge.evaluators import EvalResult
from agentlab.metaagent.router import DEFAULT_ROUTER
from agentlab.tasks.spec import ExecTask
from agentlab.pool.store import AgentPool
from agentlab.record.row import EpisodeRow
from agentlab.teams.cola.options import ColaOptions
from agentlab.envs.trajectory import TrajectoryRecorder

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.tasks.decisions import RouteResult
    from agentlab.teams.cola.interaction import Ask

#: team name -> "module:Class" (the class takes no arguments; a run's settings come with the :class:`Job`)
TEAMS: dict[str, str] = {
    "single": "agentlab.teams.single:SingleAgent",
    "plan": "agentlab.teams.executed:PlanTeam",
    "cola": "agentlab.teams.cola.run:ColaRunner",
}

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
    mode: Literal["single", "manager"] = "single"
    #: a team carrying every task out (``"cola"``); None: plans run step by step (agentlab.teams.executed)
    team: str | None = None
    #: the COLA team's settings (``team="cola"``): interaction mode, review, recovery budgets, memory
    cola: ColaOptions = field(default_factory=ColaOptions)


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

    #: the field of the run's options holding this team's own settings (recorded in the manifest), if any
    settings_field: ClassVar[str | None]

    def prepare(self, job: Job, row: EpisodeRow) -> Opening | None: ...

    def run(self, job: Job, opened: TaskEnv, row: EpisodeRow) -> None: ...

    def judged(self, job: Job, verdict: EvalResult) -> None: ...

    def close(self, job: Job, row: EpisodeRow) -> None: ...


def team_class(name: str, *, where: str | None = None) -> type[Team]:
    """The team registered as ``name``; an unknown name is a :class:`ConfigError` listing the known ones."""
    try:
        target = TEAMS[name]
    except KeyError:
        raise ConfigError(f"unknown team {name!r}; known teams: {', '.join(TEAMS)}", where=where) from None
    module, _, attr = target.partition(":")
    cls: type[Team] = getattr(importlib.import_module(module), attr)
    return cls


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
