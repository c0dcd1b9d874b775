"""The recipe every worker of an ``agentlab exec`` run builds its episodes from, serial or on Ray,
and which screen or phone each worker owns.

A Ray worker is a fresh process: a loaded model cannot (and should not) be shipped to it. An
:class:`EpisodeRecipe` is the picklable description instead (LLM configs, the pool folder, the
router kind, the manager's settings, the run's options); :meth:`EpisodeRecipe.build` loads a
worker's own backend, pool, router and manager, and calling the recipe with a worker's index
returns the function :func:`agentlab.parallel.map_unordered` applies to each task. The serial
loop builds worker 0 from the same recipe (:func:`agentlab.run_spec.execute`). Isolation: every task already gets its own episode folder and workspace, and
a desktop task its own private Xvfb unless ``--display`` names one; a named display or a real
phone serial cannot be shared by two workers, so they are given one per worker
(``--display :1,:2``, ``--device emulator-5554,emulator-5556``) and worker ``i`` takes entry ``i``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from agentlab.run.episode import (
    ExecOptions,
    SuiteSummary,
    WorkItem,
    check_out_dir,
    router_identity,
    router_route,
    run_item,
    run_suite,
    suite_manifest,
)
from agentlab.record.budget import Budget
from agentlab.llm.prices import PriceTable
from agentlab.tasks.spec import ExecTask
from agentlab.parallel import Scale
from agentlab.dialogue.person import Ask
from agentlab.errors import ConfigError
from agentlab.llm.base import LLMBackend
from agentlab.llm.config import LLMConfig
from agentlab.llm.screens import ImageSides
from agentlab.metaagent.router import DEFAULT_ROUTER, RouterShelf
from agentlab.pool.store import AgentPool
from agentlab.teams.base import PlanFn, RouteFn
from agentlab.teams.planning import ManagerOptions


def per_worker(value: str | None, workers: int, flag: str, *, shareable: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """``"a,b"`` -> ``("a", "b")``, checked to give every one of ``workers`` workers its own entry.

    ``None`` or a ``shareable`` value (the in-process fake device) needs nothing per worker: ``()``.
    """
    if value is None or value in shareable:
        return ()
    entries = tuple(v.strip() for v in value.split(","))
    if any(not v for v in entries):
        raise ConfigError(f"{flag} {value!r}: an empty entry; give one per worker separated by commas")
    if workers > 1 and len(entries) < workers:
        raise ConfigError(f"{flag} {value!r} is shared by {workers} workers; give one per worker "
                          f"(e.g. {flag} {','.join(f'<{i + 1}>' for i in range(workers))}) or leave it out")
    if len(set(entries)) < len(entries):
        raise ConfigError(f"{flag} {value!r}: the same entry twice; each worker needs its own")
    return entries


@dataclass
class Worker:
    """What a worker runs episodes with: its pool, the agents' model (and each role's own), the
    router, the manager."""

    pool: AgentPool
    llm: LLMBackend
    route: RouteFn | None
    planner: PlanFn | None
    roles: Mapping[str, LLMBackend] = field(default_factory=dict)


def preload() -> None:
    """What a worker's first episode would load, loaded as its Ray worker process starts (while Ray
    itself still starts: :mod:`agentlab.parallel`): the episode code and MiniLM, which every tool
    agent's first step needs for its tool retrieval (torch and sentence-transformers: most of the
    ~10 s a worker's first episode took, twice over on two busy cores)."""
    import agentlab.run.episode  # noqa: F401
    from agentlab.agents.tools import _encoder

    _encoder()


@dataclass(frozen=True)
class EpisodeRecipe:
    """The one recipe of a run's episodes (picklable): the serial loop builds worker 0 from it, each
    Ray worker its own -- its own agents' model, pool, router and manager, never shipped loaded."""

    #: run by each worker process of a Ray started here as it starts (:func:`preload`)
    preload: ClassVar[str] = "agentlab.run.worker:preload"

    out_dir: Path
    options: ExecOptions
    #: the agents' model
    llm: LLMConfig
    #: the router's / manager's model (None: ``AGENTLAB_LLM_*``, as ``agentlab route``)
    router_llm: LLMConfig | None = None
    router: str = DEFAULT_ROUTER
    tokens: Path | None = None
    agent: str | None = None
    agents_dir: Path | None = None
    #: one X display per worker (``()``: a private Xvfb per task, or the options' display)
    displays: tuple[str, ...] = ()
    #: one phone serial per worker (``()``: the options' device)
    devices: tuple[str, ...] = ()
    #: manager mode: how the manager writes plans (None: the options' mode decides nothing more)
    manager: ManagerOptions | None = None
    #: role -> its own model (an LLM config file's ``roles:``; the ``router`` role is in ``router_llm``)
    roles: Mapping[str, LLMConfig] = field(default_factory=dict)

    @property
    def sides(self) -> ImageSides:
        """The longest screenshot side of every role (``max_image_side`` of its entry, else of ``llm``)."""
        return ImageSides(self.llm.max_image_side, {r: c.max_image_side for r, c in self.roles.items()})

    def load_roles(self) -> dict[str, LLMBackend]:
        """Each role's own model, loaded (a role naming the agents' config shares nothing: it is loaded again)."""
        from agentlab.llm import load_backend

        return {role: load_backend(cfg) for role, cfg in self.roles.items()}

    def options_for(self, index: int) -> ExecOptions:
        """The run's options with worker ``index``'s own display and device."""
        envs = self.options.envs
        if self.displays:
            envs = replace(envs, display=self.displays[index % len(self.displays)])
        if self.devices:
            envs = replace(envs, device=self.devices[index % len(self.devices)])
        return replace(self.options, envs=envs)

    def build(self, *, llm: LLMBackend | None = None, pool: AgentPool | None = None) -> Worker:
        """The worker's pool, model, router and manager (``llm``/``pool``: already loaded ones to reuse)."""
        from agentlab.agents.base import acting_agents
        from agentlab.llm import load_backend
        from agentlab.metaagent.router import ROUTERS, build_router
        from agentlab.teams.planning import router_planner

        pool = pool or AgentPool.from_dir(self.agents_dir)
        llm = llm or load_backend(self.llm)
        route: RouteFn | None = None
        planner: PlanFn | None = None
        if self.agent is None and self.options.mode == "manager":
            if ROUTERS[self.router].state != "none":  # a ranking to plan over (ground truth: the tasks' gold plans)
                manager_llm = llm if self.router_llm is None else load_backend(self.router_llm)
                planner = router_planner(build_router(self.router, pool, self.tokens, llm=self.router_llm),
                                         manager_llm, self.manager or ManagerOptions(),
                                         acting=partial(acting_agents, pool))
        elif self.agent is None:
            route = router_route(self.router, pool, self.tokens, self.router_llm)
        return Worker(pool, llm, route, planner, self.load_roles())

    def __call__(self, index: int) -> Callable[[WorkItem], dict[str, Any]]:
        w = self.build()
        return partial(run_item, pool=w.pool, llm=w.llm, out_dir=self.out_dir, options=self.options_for(index),
                       route=w.route, agent=self.agent, planner=w.planner, roles=w.roles, sides=self.sides,
                       routers=RouterShelf(w.pool))


@dataclass(frozen=True)
class RunSpec:
    """One run of ``agentlab exec``: what its flags fill, nothing loaded yet.

    The recipe says how every episode is built; the rest says how the suite goes (workers, resume).
    :func:`execute` is the library's one way to carry a run out: it loads worker 0 from the recipe
    for a serial run (Ray workers build their own), writes or checks ``manifest.json`` and runs the
    suite, so every caller -- the CLI, studies, benchmarks -- gets the same run folder.
    """

    recipe: EpisodeRecipe
    scale: Scale = field(default_factory=Scale)
    resume: bool = False
    force_resume: bool = False
    retry_errors: bool = False
    #: run at most this many new episodes (the rest stay for a resumed run)
    limit: int | None = None
    #: the limits of this run, or of the resumed part (:mod:`agentlab.record.budget`)
    budget: Budget | None = None
    #: the price table for rows' ``usd`` (None: :meth:`PriceTable.load`, the shipped one and ``AGENTLAB_PRICES``)
    prices: PriceTable | None = None
    #: with ``resume``: run again the episodes whose rows ``failed`` and/or ended in harness ``errors``
    rerun: frozenset[str] = frozenset()

    @property
    def out(self) -> Path:
        return self.recipe.out_dir


def execute(spec: RunSpec, tasks: list[ExecTask], *, ask: Ask | None = None, progress: bool = True,
            llm: LLMBackend | None = None, pool: AgentPool | None = None) -> SuiteSummary:
    """Carry ``spec`` out on ``tasks``: the manifest (refusing a resume that differs), then every
    (task, seed) not yet in ``results.jsonl``. ``ask``: how a team asks a person (serial runs only);
    ``llm``/``pool``: already loaded ones to reuse (a notebook's backbone)."""
    recipe = spec.recipe
    resume = spec.resume or spec.force_resume
    check_out_dir(recipe.out_dir, resume)  # before anything slow: nothing is touched on this error
    if spec.scale.distributed and ask is not None:
        raise ConfigError("--workers/--ray-address run without a person to ask: a team that asks runs serially "
                          "(leave --workers out, or use --interaction automatic)")
    worker = recipe.build(llm=llm, pool=pool) if not spec.scale.distributed else None
    if worker is None:  # the driver still needs the pool and the agents' model for the manifest
        from agentlab.llm import load_backend

        worker = Worker(pool or AgentPool.from_dir(recipe.agents_dir), llm or load_backend(recipe.llm), None, None,
                        recipe.load_roles())
    manifest = suite_manifest(tasks, pool=worker.pool, llm=worker.llm, options=recipe.options, agent=recipe.agent,
                              router=None if recipe.agent is not None else router_identity(recipe.router, recipe.tokens),
                              roles=worker.roles, sides=recipe.sides)
    return run_suite(tasks, pool=worker.pool, llm=worker.llm, out_dir=recipe.out_dir, options=recipe.options_for(0),
                     route=worker.route, agent=recipe.agent, planner=worker.planner, ask=ask, resume=resume,
                     limit=spec.limit, retry_errors=spec.retry_errors, manifest=manifest, force_resume=spec.force_resume,
                     progress=progress, scale=spec.scale, recipe=recipe if spec.scale.distributed else None,
                     roles=worker.roles, sides=recipe.sides, budget=spec.budget, prices=spec.prices, rerun=spec.rerun)
