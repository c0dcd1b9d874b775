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

import logging
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
    episode_folder,
    lost_row,
    results_path,
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
from agentlab.record.budget import BudgetMeter, BudgetOutcome
from agentlab.errors import HarnessError, OutOfBudget, Stopped
from agentlab.fileio import append_jsonl, read_jsonl, write_jsonl
from agentlab.metaagent.router import ROUTERS, build_router
from agentlab.record.manifest import (Manifest, open_run,
                               record_budget)
from agentlab.parallel import Gate, WorkerRecipe, map_unordered
from agentlab.record.rerun import changes, key, last_attempts, read_history, retire, wanted
from agentlab.record.row import EpisodeRow
from agentlab.runlock import RunLock

log = logging.getLogger(__name__)


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
        from agentlab.agents.base import RunnableAgents
        from agentlab.llm import load_backend
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
                                            acting=RunnableAgents(worker.pool))
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
    #: with ``resume``: tasks the folder has not seen may join it (the manifest grows); see
    #: :func:`~agentlab.record.manifest.open_run`. Benchmarks that share episodes between arms use it
    grow: bool = False

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


def _run_suite(spec: RunSpec, tasks: list[ExecTask], worker: Worker, *, manifest: Manifest, ask: Ask | None = None,
               progress: bool = True) -> SuiteSummary:
    """Run every (task, seed) of ``spec`` not yet in ``results.jsonl``, appending a row as each one ends.

    Internal to the run package: :func:`agentlab.run.worker.execute` checks the folder and builds
    ``worker`` (serial runs use it; Ray workers build their own from ``spec.recipe``) and the
    ``manifest``, recorded in the folder or, when resuming, matched against the recorded one
    (:func:`agentlab.record.manifest.open_run`; ``force_resume`` continues anyway).
    Each task runs ``options.seeds`` times; the items go seed by seed (every task with the first
    seed, then every task with the next), so a cut run holds whole passes first.
    ``spec.limit`` stops after that many newly run items (the rest stay for a resumed run).
    On several workers (or a cluster address) the rows arrive in the order items finish; an item
    whose worker died twice gets a harness-error row (:func:`lost_row`).
    ``spec.rerun`` (with ``resume``): ``{"failed"}`` runs again the episodes whose rows failed,
    ``{"errors"}`` (or ``retry_errors``) those that ended in a harness error (an app that did not
    start, an unreachable model); the replaced rows and their episode folders move to the run's
    history (:mod:`agentlab.record.rerun`, crash-safe), the new rows carry ``attempt``.
    Every new row gets ``usd``: its tokens at ``spec.prices`` (default :meth:`PriceTable.load`).
    ``spec.budget`` (:mod:`agentlab.record.budget`): no episode starts once one would pass a limit; the
    seconds limit cuts the episodes in flight (no row); how it went is in the summary and the
    manifest's ``budget`` block.
    SIGTERM or Ctrl-C (:class:`~agentlab.errors.Stopped`) ends the suite: no new episode starts, the
    ones in flight leave no row (a resumed run carries them out again), finished rows stay.
    The run folder is locked for the whole run (:class:`~agentlab.runlock.RunLock`).
    """
    out_dir = spec.out
    out_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(out_dir):
        return _run_locked(spec, tasks, worker, manifest, ask, progress)


def longest_first(todo: list[WorkItem]) -> list[WorkItem]:
    """``todo`` with the tasks expected to take longest first, otherwise in the given order (stable).

    On several workers the run ends when the last task ends: a long task dispatched last keeps one
    worker busy while the others idle (the classic longest-processing-time-first rule). The rows
    are the same whatever the order (``benchmarks/ray_speedup.py`` compares them); a serial run and
    a run under a budget keep the given order, since there the order decides which tasks run."""
    return sorted(todo, key=lambda item: -item[0].expected_length())


def _run_locked(spec: RunSpec, tasks: list[ExecTask], worker: Worker, manifest: Manifest, ask: Ask | None,
                progress: bool) -> SuiteSummary:
    from agentlab.progress import Progress, Tally, row_outcome

    recipe, out_dir, options, budget = spec.recipe, spec.out, spec.recipe.options, spec.budget
    # a resume that differs is refused (before anything in the folder is touched), unless forced
    open_run(out_dir, manifest, resume=spec.resume or spec.force_resume, force=spec.force_resume, grow=spec.grow)
    path = results_path(out_dir)
    rows = read_jsonl(path) if path.exists() else []
    kinds = spec.rerun | ({"errors"} if spec.retry_errors else set())
    again = [r for r in rows if not _cut_off(r) and wanted(r, kinds)]
    dropped = again + [r for r in rows if _cut_off(r)]
    if dropped:
        log.info("exec: %d row(s) to run again (%s), %d cut-off episode(s)", len(again), ", ".join(sorted(kinds)) or "-",
                 len(dropped) - len(again))
        retire(out_dir, [(r, _row_folder(out_dir, r, options)) for r in again])  # before the rows leave results.jsonl
        gone = {id(r) for r in dropped}
        rows = [r for r in rows if id(r) not in gone]
        write_jsonl(path, rows)
    history = read_history(out_dir)
    attempts = last_attempts(history)
    prices = spec.prices if spec.prices is not None else PriceTable.load()
    done = {(r.get("id"), r.get("seed")) for r in rows}
    todo = [(t, i) for i in range(options.seeds) for t in tasks if (t.id, options.seed + i) not in done]
    skipped = len(done)
    if spec.limit is not None:
        todo = todo[:spec.limit]
    if spec.scale.distributed and spec.budget is None:
        todo = longest_first(todo)  # no budget decides which tasks get to run: order only for the tail
    log.info("exec: %d episode(s) to run, %d already in %s", len(todo), skipped, path)
    # one recipe: each Ray worker builds its own worker from it, a serial run uses the one given
    make: WorkerRecipe[WorkItem, dict[str, Any]] = (
        recipe if spec.scale.distributed else (lambda index: recipe.episodes(worker, index, ask)))
    lost = partial(lost_row, out_dir=out_dir, options=options, agent=recipe.agent,
                   model_id=getattr(worker.models.llm, "model_id", ""))
    ran = 0
    meter = BudgetMeter(budget, earlier=rows) if budget is not None else None
    gate = Gate(admit=meter.admit, deadline=meter.deadline,
                expired=lambda: OutOfBudget("the seconds budget ran out")) if meter is not None else None
    finished = map_unordered(make, todo, spec.scale, lost=lost, gate=gate)
    fresh: list[dict[str, Any]] = []
    unpriced: set[str] = set()
    # a bar on a terminal, one line per episode elsewhere (the running ExecutionAcc counts earlier rows too)
    shown = Progress(len(todo), "exec", "episode", enabled=progress,
                     tally=Tally(sum(bool(r.get("success")) for r in rows), len(rows)))
    try:
        for (task, _), ended in finished:
            row = _priced(ended, prices, unpriced, warn=budget is not None and budget.usd is not None,
                          attempt=attempts.get(key(ended)))
            append_jsonl(path, row)
            rows.append(row)
            fresh.append(row)
            ran += 1
            if meter is not None:
                meter.add(row)
            log.info("task %s (seed %s): %s score=%.2f", task.id, row["seed"], row["status"], row["score"])
            said, success = row_outcome(row)
            shown.done(task.id if options.seeds == 1 else f"{task.id} (seed {row['seed']})", said, row.get("seconds"),
                       success=success)
    except OutOfBudget:  # the seconds limit cut the episodes in flight (cleaned up on the way here, no row)
        assert meter is not None
        meter.stopped_by = "seconds"
    except Stopped as stop:  # the episodes in flight were cleaned up on the way here; none left a row
        if meter is not None:
            record_budget(out_dir, _outcome(meter, len(todo) - ran).record() | {"stopped_by": stop.what})
        raise type(stop)(f"{stop.what}: stopped after cleaning up; {ran} new row(s) kept in {path}, "
                         f"{len(todo) - ran} episode(s) not finished: --resume carries them out") from None
    finally:
        shown.close()
    outcome = _outcome(meter, len(todo) - ran) if meter is not None else None
    record_budget(out_dir, outcome.record() if outcome is not None else None)
    if outcome is not None and outcome.stopped_by:
        log.info("exec: %s", outcome.line())
    have = {key(r) for r in rows}
    return SuiteSummary(rows=rows, ran=ran, skipped=skipped, budget=outcome, reruns=changes(fresh, history),
                        rerun_pending=sum(1 for k in attempts if k not in have))


def _outcome(meter: BudgetMeter, left: int) -> BudgetOutcome:
    return BudgetOutcome(meter.budget, meter.spent(), meter.episodes, meter.stopped_by, left)


def _priced(ended: dict[str, Any], prices: PriceTable, unpriced: set[str], *, warn: bool,
            attempt: int | None) -> dict[str, Any]:
    """The row with its ``usd`` beside its tokens and, when it reran an episode, its ``attempt`` (the
    one before it plus one); under a dollar budget, warn once per model without a price."""
    row = EpisodeRow.load(ended)
    row.usd = prices.row_usd(ended)
    if attempt:
        row.attempt = attempt + 1
    if warn:
        for model in sorted(prices.unpriced(ended) - unpriced):
            log.warning("exec: model %r has no price (data/prices.yaml, --prices, AGENTLAB_PRICES): its tokens count "
                        "as 0 USD against the budget", model)
            unpriced.add(model)
    return row.to_json()


def _row_folder(out_dir: Path, row: dict[str, Any], options: ExecOptions) -> Path | None:
    """The episode folder a row of this run was written to (None: its id names none)."""
    seed = row.get("seed")
    index = seed - options.seed if isinstance(seed, int) and not isinstance(seed, bool) else 0
    try:
        return episode_folder(out_dir, str(row.get("id")), options, index)
    except HarnessError:
        return None


def _cut_off(row: dict[str, Any]) -> bool:
    """A row that an older agentlab wrote for an episode SIGTERM cut off (as a harness error): not a
    result, so a resumed run carries the episode out again."""
    return str(row.get("error") or "").startswith("terminated (SIGTERM)")
