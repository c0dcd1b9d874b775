"""The recipe every worker of an ``agentlab exec`` run builds its episodes from, serial or on Ray,
and which screen or phone each worker owns.

A Ray worker is a fresh process: a loaded model cannot (and should not) be shipped to it. An
:class:`EpisodeRecipe` is the picklable description instead (the models file, the pool folder, the
router kind, the manager's settings, the run's options); :meth:`EpisodeRecipe.build` loads a
worker's own models (once, :meth:`~agentlab.llm.roles.ModelsFile.load`), pool, router and manager,
and :meth:`EpisodeRecipe.episodes` turns a worker into the function
:func:`agentlab.parallel.map_unordered` applies to each task. The serial loop builds worker 0 from
the same recipe (:func:`execute`). Isolation: every task already gets its own episode folder and workspace, and
a desktop task its own private Xvfb unless ``--display`` names one; a named display or a real
phone serial cannot be shared by two workers, so they are given one per worker
(``--display :1,:2``, ``--device emulator-5554,emulator-5556``) and worker ``i`` takes entry ``i``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from agentlab.run import episode
from agentlab.run.episode import (
    ExecOptions,
    SuiteSummary,
    WorkItem,
    check_out_dir,
    router_identity,
    router_route,
    _run_suite,
    suite_manifest,
)
from agentlab.llm.roles import Backends, ModelsFile
from agentlab.record.budget import Budget
from agentlab.llm.prices import PriceTable
from agentlab.tasks.spec import ExecTask
from agentlab.parallel import Scale
from agentlab.dialogue.person import Ask
from agentlab.errors import ConfigError
from agentlab.llm.config import LLMConfig
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
    """What a worker runs episodes with: its pool, its models (the agents' and each role's own), the
    router, the manager. A study or a notebook may hand :func:`execute` one it built itself (its own
    router or planner, an already loaded backbone)."""

    pool: AgentPool
    models: Backends
    route: RouteFn | None = None
    planner: PlanFn | None = None


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
    #: the agents' model and each role's own (the ``router`` role is in ``router_llm``)
    models: ModelsFile = field(default_factory=ModelsFile)
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

    def options_for(self, index: int) -> ExecOptions:
        """The run's options with worker ``index``'s own display and device."""
        envs = self.options.envs
        if self.displays:
            envs = replace(envs, display=self.displays[index % len(self.displays)])
        if self.devices:
            envs = replace(envs, device=self.devices[index % len(self.devices)])
        return replace(self.options, envs=envs)

    def build(self, *, routed: bool = True) -> Worker:
        """The worker's pool, models, router and manager (``routed=False``: no router or manager, for
        a driver whose episodes run on Ray workers)."""
        from agentlab.agents.base import acting_agents
        from agentlab.llm import load_backend
        from agentlab.metaagent.router import ROUTERS, build_router
        from agentlab.teams.planning import router_planner

        worker = Worker(AgentPool.from_dir(self.agents_dir), self.models.load())
        if not routed or self.agent is not None:
            return worker
        if self.options.mode != "manager":
            worker.route = router_route(self.router, worker.pool, self.tokens, self.router_llm)
        elif ROUTERS[self.router].state != "none":  # a ranking to plan over (ground truth: the tasks' gold plans)
            manager_llm = worker.models.llm if self.router_llm is None else load_backend(self.router_llm)
            worker.planner = router_planner(build_router(self.router, worker.pool, self.tokens, llm=self.router_llm),
                                            manager_llm, self.manager or ManagerOptions(),
                                            acting=partial(acting_agents, worker.pool))
        return worker

    def episodes(self, worker: Worker, index: int, ask: Ask | None = None) -> Callable[[WorkItem], dict[str, Any]]:
        """What worker ``index`` applies to each (task, seed index) item: the kernel with ``worker``'s objects."""
        kernel = partial(episode.run_task, pool=worker.pool, llm=worker.models, out_dir=self.out_dir,
                         options=self.options_for(index), route=worker.route, agent=self.agent, planner=worker.planner,
                         ask=ask, routers=RouterShelf(worker.pool))
        return lambda item: kernel(item[0], seed_index=item[1])

    def __call__(self, index: int) -> Callable[[WorkItem], dict[str, Any]]:
        return self.episodes(self.build(), index)


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


def execute(spec: RunSpec, tasks: list[ExecTask], *, worker: Worker | None = None, ask: Ask | None = None,
            progress: bool = True) -> SuiteSummary:
    """Carry ``spec`` out on ``tasks``: the folder checked (once, before anything slow), the manifest
    (refusing a resume that differs), then every (task, seed) not yet in ``results.jsonl``.
    ``worker``: the models, pool, router and manager to run with, already built (a study's own
    planner, a notebook's loaded backbone; default: built from the recipe); ``ask``: how a team asks
    a person (serial runs only)."""
    recipe = spec.recipe
    check_out_dir(recipe.out_dir, spec.resume or spec.force_resume)  # nothing is touched on this error
    if spec.scale.distributed and ask is not None:
        raise ConfigError("--workers/--ray-address run without a person to ask: a team that asks runs serially "
                          "(leave --workers out, or use --interaction automatic)")
    # a distributed run's driver still needs the pool and the models for the manifest; its workers route
    worker = worker or recipe.build(routed=not spec.scale.distributed)
    manifest = suite_manifest(tasks, pool=worker.pool, models=worker.models, options=recipe.options, agent=recipe.agent,
                              router=None if recipe.agent is not None else router_identity(recipe.router, recipe.tokens))
    return _run_suite(spec, list(tasks), worker, manifest=manifest, ask=ask, progress=progress)


def run_task(spec: RunSpec, task: ExecTask, *, worker: Worker | None = None, ask: Ask | None = None,
             seed_index: int = 0) -> dict[str, Any]:
    """One task of ``spec`` carried out and judged, as :func:`execute` would: a one-task debug. The
    row is returned, not written (no ``results.jsonl``, no manifest); the episode folder is made."""
    return spec.recipe.episodes(worker or spec.recipe.build(), 0, ask)((task, seed_index))
