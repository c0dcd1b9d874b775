"""Carry tasks out: route a task to an agent, run the agent's episode, judge the end state.

One task (:func:`run_task`): pick the agent (the given one, or the router's choice) → build it
from its pool document's runner (:data:`~agentlab.agents.base.AGENTS`) → write the task's
start state into a fresh workspace inside the episode folder → ``agent.run`` with a
trajectory recorder → ``task.evaluate`` on the final state → one result row. A suite
(:func:`run_suite`) appends one row per task to ``results.jsonl`` as each finishes, so a
killed run keeps every finished row and ``resume=True`` skips them. With ``seeds=K`` each task
runs K times (seeds ``seed .. seed+K-1``); a row is done per (task id, seed). A run given a
:class:`~agentlab.manifest.Manifest` records it in ``manifest.json`` and resumes only when it
matches (:func:`agentlab.manifest.open_run`).
With a :class:`~agentlab.parallel.Scale`
of several workers the tasks run on Ray workers, each building its own model, pool and router from
a recipe (:class:`agentlab.episode_worker.EpisodeRecipe`); only this process writes ``results.jsonl``.

Problems of the harness (an env that cannot be built, a model that cannot be reached, an
agent without a runner here) are kept apart from task failures: the row's ``error`` is set
and the suite counts it in ``harness_errors``. Layout of a run folder::

    <out>/manifest.json                  what the rows were made with (docs/reproducibility.md)
    <out>/results.jsonl                  one row per task and seed (see docs/execution.md)
    <out>/episodes/<task id>/traj.jsonl  every step, each model message included
    <out>/episodes/<task id>/seed-<s>/   the same per seed when the run has more than one
    <out>/episodes/<task id>/workspace/  the task's files as the agent left them
    <out>/episodes/<task id>/device/     phone tasks: the device's files (start state pushed, outputs pulled)

A multi-agent task (a plan: the gold one under ``--router gt``, or a manager's in manager mode)
runs its steps in one opened env (:mod:`agentlab.teams`); its episode folder holds the shared
``workspace/`` (or ``files/``), one ``step-<k>-<agent>/`` trajectory per step and ``plan.json``.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

from agentlab.agents.base import CAN_ACT, AgentResult, agent_class, interrupted_result
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions, open_task_env
from agentlab.envs.timed import TimedEnv, TimeLimitExceeded
from agentlab.envs.workspace import isolation_in_force
from agentlab.errors import AgentlabError, ContextOverflowError, DataError
from agentlab.eval.exec_tasks import ExecTask, id_problem
from agentlab.fileio import append_jsonl, atomic_write_json, read_jsonl, remove_inside, write_jsonl
from agentlab.llm.base import LLMBackend, Metered, ReplyCap
from agentlab.manifest import Manifest, backend_identity, build_manifest, checkpoint_identity, encoder_identity, open_run
from agentlab.metaagent.decision import PlanStep, RouteResult
from agentlab.llm.config import LLMConfig
from agentlab.parallel import Scale, WorkerRecipe, map_unordered
from agentlab.pool.document import AgentDocument
from agentlab.pool.store import AgentPool
from agentlab.teams.cola.interaction import Ask
from agentlab.teams.cola.options import ColaOptions
from agentlab.teams.cola.run import cola_row, run_cola
from agentlab.teams.executed import execute_plan, plan_row, plan_status
from agentlab.teams.hub import PLAN_FILE, Hub
from agentlab.trajectory import TrajectoryRecorder

log = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
#: where ground-truth routing looks when a task's domain has no agent of the needed interface
GENERAL_DOMAIN = "general"
#: the same for phone tasks: the general phone agent's domain (AppAgent)
PHONE_DOMAIN = "mobile"
EPISODES_DIR = "episodes"

#: picks the agent (a pool name) for a task; raise an AgentlabError when none can be chosen
RouteFn = Callable[[ExecTask], str]
#: one episode of a suite: a task and the index of its seed (``options.seed + index``)
WorkItem = tuple[ExecTask, int]
#: writes a multi-agent plan for a task (manager mode): a RouteResult whose ``plan`` is empty on
#: failure, with ``error`` saying why (agentlab.teams.planning builds these)
PlanFn = Callable[[ExecTask], RouteResult]
#: the fields of a row that measure time: the only ones a serial and a parallel run of the same
#: deterministic configuration may differ in (see :func:`comparable_row`)
TIMING_FIELDS = frozenset({"seconds", "setup_s", "evaluate_s"})




class HarnessError(AgentlabError):
    """The harness could not carry a task out (not the agent's failure)."""


class NoAgentChosen(AgentlabError):
    """The router gave no agent for the task (e.g. the ICL router's generation named none): the
    routing failed, so the task fails -- not a harness error."""


@dataclass
class ExecOptions:
    """How each task of a suite is run (recorded in every row)."""

    router: str = "gt"
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


def gt_agent(task: ExecTask, pool: AgentPool) -> str:
    """Ground-truth routing: the task's ``agent``, else the pool's CLI (workspace) or GUI
    (desktop) agent of the task's domain, else of the ``general`` domain (a workspace task of a
    domain without a CLI agent, such as chrome, goes to CoderAgent); a phone task goes to the
    mobile GUI agent of its domain, else to the general phone agent (domain ``mobile``:
    AppAgent); ties go to the first name."""
    if task.agent is not None:
        return task.agent
    interface = "CLI" if task.env == "workspace" else "GUI"
    fallback = PHONE_DOMAIN if task.env == "phone" else GENERAL_DOMAIN
    for domain in (task.domain, fallback):
        names = sorted(a.name for a in pool.agents if a.domain == domain and a.interface == interface
                       and (task.env != "phone" or a.platform == "mobile"))
        if names:
            if domain != task.domain:
                log.info("task %s: no %s agent of domain '%s'; ground truth falls back to %s (%s)",
                         task.id, interface, task.domain, names[0], domain)
            return names[0]
    raise HarnessError(f"no {interface} agent of domain '{task.domain}' (or '{fallback}') in the pool for "
                       "ground-truth routing; give the task an 'agent' field", where=task.source or task.id)


def router_route(kind: str, pool: AgentPool, tokens: Path | None = None, llm: LLMConfig | None = None) -> RouteFn:
    """A route function for a trained or fitted router, built as ``agentlab route`` builds it:
    AgentToken and the hybrid (or any router given ``tokens``) loaded from its checkpoint (default
    ``data/tokens``), the other baselines fitted on the pool's seed demonstrations. ``llm``: the
    router's own model (an endpoint apart from the agents'; None: ``AGENTLAB_LLM_*``)."""
    from agentlab.metaagent.router import build_router

    router = build_router(kind, pool, tokens, llm=llm)

    def route(task: ExecTask) -> str:
        decided = router.route([task.instruction])[0]
        if decided.agent is None:
            why = f": {' '.join(decided.error.split())}" if decided.error else ""
            raise NoAgentChosen(f"router '{kind}' chose no agent{why}", where=task.source or task.id)
        return decided.agent

    return route


def router_identity(kind: str, tokens: Path | None = None) -> dict[str, Any]:
    """What a router's decisions depend on besides the prompts, for the manifest: the checkpoint
    :func:`router_route` loads (AgentToken, or any router given ``tokens``) with its hash, the
    training data a fitted baseline reads (``data/demos``), nothing more for ground truth."""
    from agentlab.metaagent.data import default_demos_path, holds_dataset
    from agentlab.metaagent.router import CHECKPOINT_ROUTERS
    from agentlab.paths import data_dir

    if kind == "gt":
        return checkpoint_identity(kind, None)
    if kind in CHECKPOINT_ROUTERS or tokens is not None:
        return checkpoint_identity(kind, tokens or data_dir() / "tokens")
    demos = default_demos_path()
    return checkpoint_identity(kind, demos if holds_dataset(demos) else None)


def suite_manifest(
    tasks: Iterable[ExecTask],
    *,
    pool: AgentPool,
    llm: LLMBackend,
    options: ExecOptions,
    router: dict[str, Any] | None = None,
    agent: str | None = None,
) -> Manifest:
    """The manifest of an ``agentlab exec`` run: the agents' model, the router (``router``: from
    :func:`router_identity`; default ground truth) and the sentence encoder, every agent document
    and task file hashed, the seeds, and the options that change results (not the display: where
    a desktop is shown does not change what happens on it)."""
    opts = asdict(options)
    envs = opts.pop("envs")
    opts.pop("seed"), opts.pop("seeds"), opts.pop("cola")
    if options.team == "cola":  # the team's settings change results only when a team runs
        opts["cola"] = options.cola.model_dump(mode="json")
    opts.update(router="forced" if agent else options.router, agent=agent, device=envs["device"],
                sandbox=options.envs.workspace.sandbox, isolation=isolation_in_force(options.envs.workspace.sandbox))
    return build_manifest(
        "exec",
        models={"agents": backend_identity(llm), "router": router or checkpoint_identity("forced" if agent else options.router, None),
                "sentence_encoder": encoder_identity()},
        seeds=[options.seed + i for i in range(options.seeds)],
        options=opts,
        tasks={t.id: t.source for t in tasks},
        documents={d.name: d.path for d in pool.agents},
    )


def episode_folder(out_dir: Path, task_id: str, options: ExecOptions, seed_index: int = 0) -> Path:
    """``episodes/<id>``, or ``episodes/<id>/seed-<s>`` when the run has several seeds; an id that
    cannot name a folder there (``..``, a path) is refused, whoever built the task."""
    if why := id_problem(task_id):
        raise HarnessError(why, where=task_id)
    folder = out_dir / EPISODES_DIR / task_id
    return folder if options.seeds == 1 else folder / f"seed-{options.seed + seed_index}"


def run_task(
    task: ExecTask,
    *,
    pool: AgentPool,
    llm: LLMBackend,
    out_dir: Path,
    options: ExecOptions,
    route: RouteFn | None = None,
    agent: str | None = None,
    seed_index: int = 0,
    planner: PlanFn | None = None,
    ask: Ask | None = None,
) -> dict[str, Any]:
    """Carry one task out and judge it; the row of ``results.jsonl`` (never raises AgentlabError).

    ``seed_index`` picks the run's seed ``options.seed + seed_index`` (recorded in the row).
    ``ask`` is how a COLA team in passive or active mode asks a person
    (:mod:`agentlab.teams.cola.interaction`).

    A plan runs instead of one agent (:func:`run_plan_task`) in manager mode, with a team, or
    when the task has a gold plan and routing is ground truth; ``agent`` forces the single path.
    """
    t0 = time.monotonic()
    seed = options.seed + seed_index
    folder = episode_folder(out_dir, task.id, options, seed_index)
    # left by a run killed before its row was written: start again (only ever inside episodes/)
    remove_inside(folder, out_dir / EPISODES_DIR)
    row = _new_row(task, out_dir, options, agent, getattr(llm, "model_id", ""), seed_index)
    recorder: TrajectoryRecorder | None = None
    opened: TaskEnv | None = None
    if options.max_new_tokens is not None:
        llm = ReplyCap(llm, options.max_new_tokens)
    if agent is None and (options.mode == "manager" or options.team is not None
                          or (route is None and options.router == "gt" and task.plan)):
        # the plan's steps run with this episode's seed, in this episode's folder
        return run_plan_task(task, row, pool=pool, llm=llm, out_dir=out_dir, options=replace(options, seed=seed),
                             planner=planner, t0=t0, folder=folder, ask=ask)
    try:
        try:
            name = agent or (route(task) if route is not None else gt_agent(task, pool))
        except NoAgentChosen as exc:
            row.update(status="no_agent", agent_error=" ".join(exc.message.split()))
            row["seconds"] = round(time.monotonic() - t0, 3)
            return row
        doc: AgentDocument = pool.get(name)
        if doc.runner is None:
            raise HarnessError(f"agent {name} has no runner (add 'runner:' to its document)", where=doc.path or name)
        cls = agent_class(doc.runner, where=str(doc.path or name))
        metered = Metered(llm)  # what an interrupted episode spent (the time limit returns no AgentResult)
        # a document's own seed wins over the run's; the run's overrides win over the document
        runner = cls(metered, doc, {"seed": seed, **doc.runner_options, **options.runner_options})
        row["agents"] = [name]
        recorder = TrajectoryRecorder(folder, task=task.instruction, env=cls.env_kind, agent=name,
                                      model_id=row["model_id"], extra={"task_id": task.id, "runner": doc.runner})
        if task.env not in CAN_ACT.get(cls.env_kind, frozenset()):
            row.update(status="wrong_env", agent_error=f"{name} acts on a {cls.env_kind}; this task needs a {task.env}")
            recorder.finish("wrong_env", error=row["agent_error"], score=0.0, success=False)
            row["seconds"] = round(time.monotonic() - t0, 3)
            return row
        t_setup = time.monotonic()
        # a runner may need more of its env than the run gives (a search endpoint, a Drive folder)
        env_options = getattr(runner, "env_options", None)
        opened = open_task_env(cls.env_kind, task, folder, env_options(options.envs) if env_options else options.envs)
        row["setup_s"] = round(time.monotonic() - t_setup, 6)
        row["isolation"] = opened.isolation
        timed = TimedEnv(opened.env, t0 + options.time_limit_s)
        try:
            res: AgentResult = runner.run(timed, task.instruction, recorder, options.max_steps)
        except TimeLimitExceeded as exc:
            res = interrupted_result(exc.message, metered, recorder)
            row["status"] = "time_limit"
        except ContextOverflowError as exc:  # the task's failure, found before the model was fed
            res = interrupted_result(exc.message, metered, recorder)
            row["status"] = "context_overflow"
        t_eval = time.monotonic()
        opened.collect()
        verdict = task.evaluate(opened.root, env=opened.eval_env)
        row.update(success=verdict.success, score=float(verdict.score), steps=res.steps, llm_calls=res.llm_calls,
                   tokens_in=res.tokens_in, tokens_out=res.tokens_out, evaluate_s=round(time.monotonic() - t_eval, 6))
        row["verdict"] = verdict.as_record()  # #29: what the evaluator expected and found (agentlab view)
        if res.subtasks is not None:  # hierarchical runners (Agent S2, PC-Agent) report their subtasks
            row.update(subtasks=res.subtasks, subtasks_done=res.subtasks_done)
        if row["status"] not in ("time_limit", "context_overflow"):
            row["status"] = res.status
        row["agent_error"] = res.error
        recorder.finish(row["status"], error=res.error, score=row["score"], success=row["success"])
    except AgentlabError as exc:
        row["error"] = " ".join(str(exc).split())
        log.warning("task %s: harness error: %s", task.id, row["error"])
        if recorder is not None:
            recorder.finish("error", error=row["error"])
    finally:
        if opened is not None:
            opened.close()
    row["seconds"] = round(time.monotonic() - t0, 3)
    return row


def _plan_for(task: ExecTask, pool: AgentPool, planner: PlanFn | None, row: dict[str, Any]) -> list[PlanStep] | None:
    """The plan to execute (None: the manager wrote none; the row says why). The planner's
    plan when one is given, else the task's gold plan, else its ground-truth agent on the whole task."""
    if planner is not None:
        decided = planner(task)
        row.update(plan_source="manager", manager_raw=decided.raw)
        if not decided.plan:
            row["plan_error"] = " ".join((decided.error or "the manager wrote no plan").split())
            return None
        return list(decided.plan)
    if task.plan:
        row["plan_source"] = "gold"
        return list(task.plan)
    row["plan_source"] = "gt_agent"
    return [PlanStep(gt_agent(task, pool), task.instruction)]


def run_plan_task(
    task: ExecTask,
    row: dict[str, Any],
    *,
    pool: AgentPool,
    llm: LLMBackend,
    out_dir: Path,
    options: ExecOptions,
    planner: PlanFn | None,
    t0: float,
    folder: Path,
    ask: Ask | None = None,
) -> dict[str, Any]:
    """The multi-agent path of :func:`run_task`: the plan's steps run in order in one opened env
    (:func:`agentlab.teams.executed.execute_plan`), the task is judged once; ``row`` gains
    ``plan``, ``step_outcomes``, ``agents`` and the summed costs (docs/multi_agent.md)."""
    if options.team == "cola":
        return run_cola_task(task, row, pool=pool, llm=llm, out_dir=out_dir, options=options, ask=ask, t0=t0,
                             folder=folder)
    row.update(mode=options.mode, team=options.team, plan=[], step_outcomes=[])
    hub: Hub | None = None
    try:
        if options.team is not None:
            raise HarnessError(f"unknown team {options.team!r}", where=task.source or task.id)
        plan = _plan_for(task, pool, planner, row)
        if plan is None:
            row["status"] = "no_plan"
            row["seconds"] = round(time.monotonic() - t0, 3)
            return row
        hub = Hub(task.instruction, plan)
        row["plan"] = [s.as_dict() for s in plan]
        run = execute_plan(task, plan, pool=pool, llm=llm, episode_dir=folder, run_dir=out_dir, options=options,
                           deadline=t0 + options.time_limit_s, hub=hub)
        row.update(success=run.verdict.success, score=float(run.verdict.score), status=plan_status(run.outcomes, len(plan)),
                   setup_s=round(run.setup_s, 6), evaluate_s=round(run.evaluate_s, 6))
        row["verdict"] = run.verdict.as_record()  # #29: what the evaluator expected and found (agentlab view)
    except AgentlabError as exc:
        row["error"] = " ".join(str(exc).split())
        log.warning("task %s: harness error: %s", task.id, row["error"])
    if hub is not None:
        row.update(plan_row(hub.plan, hub.outcomes))
        atomic_write_json(folder / PLAN_FILE, {"task": task.instruction, "plan": row["plan"], "step_outcomes": row["step_outcomes"],
                                               "status": row["status"], "success": row["success"], "error": row["error"]})
    row["seconds"] = round(time.monotonic() - t0, 3)
    return row


def run_cola_task(task: ExecTask, row: dict[str, Any], *, pool: AgentPool, llm: LLMBackend, out_dir: Path,
                  options: ExecOptions, ask: Ask | None, t0: float, folder: Path) -> dict[str, Any]:
    """The COLA path of :func:`run_task` (``options.team == "cola"``): the team plans, acts, reviews and
    recovers in one opened env (docs/agents/cola.md); ``row`` gains the executed plan, the step outcomes,
    the team's counters (reviews, retries, reassignments, backtracks, questions) and the costs of every
    attempt, rolled-back ones included, plus the team's own model calls."""
    row.update(mode=options.mode, team="cola", plan=[], step_outcomes=[], plan_source="cola",
               interaction=options.cola.interaction, cola=options.cola.model_dump(mode="json"))
    hub = Hub(task.instruction)
    team: dict[str, Any] = {}
    try:
        run = run_cola(task, pool=pool, llm=llm, episode_dir=folder, run_dir=out_dir, options=options,
                       deadline=t0 + options.time_limit_s, hub=hub, ask=ask)
        status = plan_status(run.outcomes, len(run.subtasks)) if run.status == "done" else run.status
        row.update(success=run.verdict.success, score=float(run.verdict.score), status=status,
                   setup_s=round(run.setup_s, 6), evaluate_s=round(run.evaluate_s, 6))
        row["verdict"] = run.verdict.as_record()  # #29: what the evaluator expected and found (agentlab view)
        team = cola_row(run)
    except AgentlabError as exc:
        row["error"] = " ".join(str(exc).split())
        log.warning("task %s: harness error: %s", task.id, row["error"])
    row.update(plan_row(hub.plan, hub.outcomes))
    row.update(team)
    atomic_write_json(folder / PLAN_FILE, {"task": task.instruction, "plan": row["plan"], "step_outcomes": row["step_outcomes"],
                                           "status": row["status"], "success": row["success"], "error": row["error"],
                                           **{k: team[k] for k in ("reviews", "retries", "reassignments", "backtracks",
                                                                   "questions") if k in team}})
    row["seconds"] = round(time.monotonic() - t0, 3)
    return row


def _new_row(task: ExecTask, out_dir: Path, options: ExecOptions, agent: str | None, model_id: str,
             seed_index: int = 0) -> dict[str, Any]:
    """An episode's row before it ran: failed, no steps, no error yet."""
    folder = episode_folder(out_dir, task.id, options, seed_index)
    return {
        "id": task.id, "domain": task.domain, "router": "forced" if agent else options.router, "agents": [],
        "success": False, "score": 0.0, "status": "error", "steps": 0, "llm_calls": 0, "tokens_in": 0, "tokens_out": 0,
        "seconds": 0.0, "error": None, "trajectory": folder.relative_to(out_dir).as_posix(),
        "max_steps": options.max_steps, "time_limit_s": options.time_limit_s, "seed": options.seed + seed_index,
        "seed_index": seed_index, "max_new_tokens": options.max_new_tokens, "runner_options": dict(options.runner_options),
        "model_id": model_id,
    }


def lost_row(item: WorkItem, why: str, *, out_dir: Path, options: ExecOptions, agent: str | None = None,
             model_id: str = "") -> dict[str, Any]:
    """The row of an episode whose worker died every time it ran it: a harness error
    (``--retry-errors`` runs it again)."""
    task, seed_index = item
    row = _new_row(task, out_dir, options, agent, model_id, seed_index)
    row["error"] = f"harness: {why}"
    return row


def comparable_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row without its :data:`TIMING_FIELDS`: equal for serial and parallel runs of one
    deterministic configuration."""
    return {k: v for k, v in row.items() if k not in TIMING_FIELDS}


def run_item(item: WorkItem, **kwargs: Any) -> dict[str, Any]:
    """:func:`run_task` on one (task, seed index) item of a suite."""
    task, seed_index = item
    return run_task(task, seed_index=seed_index, **kwargs)


def _in_process(index: int, **kwargs: Any) -> Callable[[WorkItem], dict[str, Any]]:
    """The serial worker: :func:`run_item` with the objects run_suite was given."""
    return partial(run_item, **kwargs)


@dataclass
class SuiteSummary:
    """What a suite run ended with (all rows of results.jsonl, old and new)."""

    rows: list[dict[str, Any]]
    ran: int
    skipped: int

    @property
    def harness_errors(self) -> int:
        return sum(1 for r in self.rows if r.get("error"))

    @property
    def execution_acc(self) -> float:
        return sum(bool(r.get("success")) for r in self.rows) / len(self.rows) if self.rows else 0.0

    def by_domain(self) -> dict[str, tuple[float, int]]:
        """domain -> (ExecutionAcc, tasks)."""
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in self.rows:
            groups[str(r.get("domain"))].append(bool(r.get("success")))
        return {d: (sum(v) / len(v), len(v)) for d, v in sorted(groups.items())}


def results_path(out_dir: Path) -> Path:
    return out_dir / RESULTS_FILE


def check_out_dir(out_dir: Path, resume: bool) -> None:
    """Refuse to mix runs: an existing non-empty results.jsonl needs ``resume``."""
    path = results_path(out_dir)
    if not resume and path.exists() and path.stat().st_size > 0:
        raise DataError("results.jsonl already holds rows; pass --resume to continue this run or choose another --out",
                        where=path)


def run_suite(
    tasks: Iterable[ExecTask],
    *,
    pool: AgentPool,
    llm: LLMBackend,
    out_dir: Path,
    options: ExecOptions,
    route: RouteFn | None = None,
    agent: str | None = None,
    resume: bool = False,
    limit: int | None = None,
    progress: bool = True,
    retry_errors: bool = False,
    manifest: Manifest | None = None,
    force_resume: bool = False,
    planner: PlanFn | None = None,
    ask: Ask | None = None,
    scale: Scale | None = None,
    recipe: WorkerRecipe[WorkItem, dict[str, Any]] | None = None,
) -> SuiteSummary:
    """Run every (task, seed) not yet in ``results.jsonl``, appending a row as each one ends.

    Each task runs ``options.seeds`` times; the items go seed by seed (every task with the first
    seed, then every task with the next), so a cut run holds whole passes first.
    ``limit`` stops after that many newly run items (the rest stay for a resumed run).
    ``manifest`` (see :func:`suite_manifest`) is recorded in the folder, or, when resuming, must
    match the recorded one (:func:`agentlab.manifest.open_run`; ``force_resume`` continues anyway).
    ``scale`` with several workers (or a cluster address) runs the items on Ray workers, each
    built by ``recipe`` (an :class:`agentlab.episode_worker.EpisodeRecipe`: loaded models are not
    shipped); the rows arrive in the order items finish. An item whose worker died twice gets a
    harness-error row (:func:`lost_row`).
    ``retry_errors`` (with ``resume``) first drops the rows that ended in a harness error (an app
    that did not start, an unreachable model) so those tasks run again; the file is rewritten
    atomically, so an interruption keeps either the old rows or the pruned ones.
    """
    from tqdm import tqdm

    out_dir.mkdir(parents=True, exist_ok=True)
    check_out_dir(out_dir, resume)
    tasks = list(tasks)
    if manifest is not None:  # refuses before anything in the folder is touched
        open_run(out_dir, manifest, resume=resume, force=force_resume)
    path = results_path(out_dir)
    rows = read_jsonl(path) if path.exists() else []
    if retry_errors and any(r.get("error") for r in rows):
        kept = [r for r in rows if not r.get("error")]
        log.info("exec: %d harness-error row(s) dropped to run again", len(rows) - len(kept))
        write_jsonl(path, kept)
        rows = kept
    done = {(r.get("id"), r.get("seed")) for r in rows}
    todo = [(t, i) for i in range(options.seeds) for t in tasks if (t.id, options.seed + i) not in done]
    skipped = len(done)
    if limit is not None:
        todo = todo[:limit]
    log.info("exec: %d episode(s) to run, %d already in %s", len(todo), skipped, path)
    scale = scale or Scale()
    if scale.distributed and recipe is None:
        raise HarnessError("running on several workers needs a recipe that builds each worker's model, pool "
                           "and router (agentlab.episode_worker.EpisodeRecipe); loaded models are not shipped")
    if recipe is None:
        recipe = partial(_in_process, pool=pool, llm=llm, out_dir=out_dir, options=options, route=route, agent=agent,
                         planner=planner, ask=ask)
    lost = partial(lost_row, out_dir=out_dir, options=options, agent=agent, model_id=getattr(llm, "model_id", ""))
    ran = 0
    finished = map_unordered(recipe, todo, scale, lost=lost)
    # #29: disable=None shows the bar on a terminal only (a notebook kernel would keep it as stderr noise)
    for (task, _), row in tqdm(finished, total=len(todo), desc="exec", unit="episode", disable=None if progress else True):
        append_jsonl(path, row)
        rows.append(row)
        ran += 1
        log.info("task %s (seed %s): %s score=%.2f", task.id, row["seed"], row["status"], row["score"])
    return SuiteSummary(rows=rows, ran=ran, skipped=skipped)
