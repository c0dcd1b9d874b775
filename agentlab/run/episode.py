"""Carry tasks out: route a task to an agent, run the agent's episode, judge the end state.

One task (:func:`run_task`): pick the agent (the given one, or the router's choice) → build it
from its pool document's runner (:data:`~agentlab.agents.base.AGENTS`) → write the task's
start state into a fresh workspace inside the episode folder → ``agent.run`` with a
trajectory recorder → ``task.evaluate`` on the final state → one result row. A suite
(:func:`_run_suite`, behind :func:`agentlab.run.execute`) appends one row per task to
``results.jsonl`` as each finishes, so a killed run keeps every finished row and a resume skips them. With ``seeds=K`` each task
runs K times (seeds ``seed .. seed+K-1``); a row is done per (task id, seed). A run given a
:class:`~agentlab.record.manifest.Manifest` records it in ``manifest.json`` and resumes only when it
matches (:func:`agentlab.record.manifest.open_run`).
With a :class:`~agentlab.parallel.Scale`
of several workers the tasks run on Ray workers, each building its own model, pool and router from
a recipe (:class:`agentlab.run.worker.EpisodeRecipe`); only this process writes ``results.jsonl``.

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
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from agentlab.agents.context import Models
from agentlab.record.budget import BudgetOutcome
from agentlab.envs.task_env import TaskEnv, open_task_env
from agentlab.envs.workspace import isolation_in_force
from agentlab.errors import AgentlabError, DataError, DiskFullError, HarnessError, TimeLimitExceeded
from agentlab.tasks.spec import ExecTask, id_problem, judge_subtasks
from agentlab.fileio import remove_inside
from agentlab.llm.base import LLMBackend, ReplyCap
from agentlab.llm.config import LLMConfig
from agentlab.llm.deadline import task_deadline
from agentlab.llm.roles import Backends
from agentlab.metaagent.router import ROUTERS, Router, RouterShelf, build_router
from agentlab.record.manifest import (Manifest, backend_identity, build_manifest, checkpoint_identity, encoder_identity)
from agentlab.record.rerun import RerunChange
from agentlab.record.row import EpisodeRow
from agentlab.runlock import check_unlocked
from agentlab.pool.store import AgentPool
from agentlab.teams.base import ExecOptions, Job, NoAgentChosen, PlanFn, RouteFn, TeamSettings, team_class, team_name
from agentlab.dialogue.person import Ask
from agentlab.metaagent.ground_truth import gt_agent  # noqa: F401  (ground-truth routing: part of this module's API)

log = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
EPISODES_DIR = "episodes"

#: one episode of a suite: a task and the index of its seed (``options.seed + index``)
WorkItem = tuple[ExecTask, int]
#: the fields of a row that measure time: the only ones a serial and a parallel run of the same
#: deterministic configuration may differ in (see :func:`comparable_row`)
TIMING_FIELDS = frozenset({"seconds", "setup_s", "evaluate_s"})




class RouterRoute:
    """A route function over a built router: the agent it chooses for a task file among those that
    can act on its env, under the store's policy (none chosen: :class:`NoAgentChosen`, the task
    fails). Carries whether a gold plan runs under it."""

    def __init__(self, router: Router, kind: str) -> None:
        from agentlab.agents.base import RunnableAgents
        from agentlab.metaagent.store import StoreRule

        self.router, self.kind, self.policy = router, kind, StoreRule(router.pool)
        self.follows_gold_plans = router.follows_gold_plans
        self._acting = RunnableAgents(router.pool)

    def acting(self, env: str) -> frozenset[str]:
        """The pool's agents whose runner can act on a task of ``env`` (a GUI-only agent never
        gets a workspace task) and can be built here (:func:`~agentlab.agents.base.unavailable`:
        an agent missing a resource, such as a Drive folder, would only give a harness error);
        agents without a runner are left out."""
        return self._acting(env)

    def __call__(self, task: ExecTask) -> str:
        env = getattr(task, "env", None)
        decided = self.router.route([task], acting=self.acting(env) if env else None, policy=self.policy)[0]
        if decided.agent is None:
            why = f": {' '.join(decided.error.split())}" if decided.error else ""
            raise NoAgentChosen(f"router '{self.kind}' chose no agent{why}", where=task.source or task.id)
        return decided.agent


def router_route(kind: str, pool: AgentPool, tokens: Path | None = None, llm: LLMConfig | None = None) -> RouteFn:
    """A route function for any router of :data:`~agentlab.metaagent.router.ROUTERS`, built as
    ``agentlab route`` builds it: AgentToken and the hybrid (or any router given ``tokens``) loaded
    from its checkpoint (default: the shipped one of the router's backbone), the other baselines fitted on the pool's seed
    demonstrations, ground truth as it is. ``llm``: the router's own model (an endpoint apart from
    the agents'; None: ``AGENTLAB_LLM_*``)."""
    return RouterRoute(build_router(kind, pool, tokens, llm=llm), kind)


def router_identity(kind: str, tokens: Path | None = None, llm: LLMConfig | None = None) -> dict[str, Any]:
    """What a router's decisions depend on besides the prompts, for the manifest: the checkpoint
    :func:`router_route` loads (AgentToken, or any router given ``tokens``; by default the shipped one of
    ``llm``'s backbone) with its hash, the training data a fitted baseline reads (``data/demos``),
    nothing more for ground truth."""
    from agentlab.metaagent.data import default_demos_path, holds_dataset
    from agentlab.metaagent.shipped import shipped_tokens

    entry = ROUTERS.get(kind)
    if entry is None or entry.state == "none":  # ground truth, or a label ("forced")
        return checkpoint_identity(kind, None)
    if entry.state == "checkpoint" or tokens is not None:
        return checkpoint_identity(kind, tokens or shipped_tokens(llm))
    demos = default_demos_path()
    return checkpoint_identity(kind, demos if holds_dataset(demos) else None)


def suite_manifest(
    tasks: Iterable[ExecTask],
    *,
    pool: AgentPool,
    models: LLMBackend | Backends,
    options: ExecOptions,
    router: dict[str, Any] | None = None,
    agent: str | None = None,
) -> Manifest:
    """The manifest of an ``agentlab exec`` run: the agents' model, the router (``router``: from
    :func:`router_identity`; default ground truth) and the sentence encoder, every agent document
    and task file hashed, the seeds, and the options that change results (not the display: where
    a desktop is shown does not change what happens on it). Each role with a model of its own
    (``models.roles``) is recorded as ``role:<name>`` with whether it sees images and at what size, so a
    resume with a changed role model is refused."""
    models = Backends.of(models)
    opts = asdict(options)
    envs = opts.pop("envs")
    opts.pop("seed"), opts.pop("seeds"), opts.pop("team_settings")
    if isinstance(options.team_settings, TeamSettings):  # a team's own settings change results only when it runs
        opts[str(options.team)] = options.team_settings.model_dump(mode="json")
    opts.update(router="forced" if agent else options.router, agent=agent, device=envs["device"],
                sandbox=options.envs.sandbox, isolation=isolation_in_force(options.envs.sandbox))
    return build_manifest(
        "exec",
        models={"agents": _seeing(backend_identity(models.llm), models.llm, models.sides.default),
                "router": router or checkpoint_identity("forced" if agent else options.router, None),
                "sentence_encoder": encoder_identity(),
                **{f"role:{r}": _seeing(backend_identity(b), b, models.sides.of(r), always=True)
                   for r, b in sorted(models.roles.items())}},
        seeds=[options.seed + i for i in range(options.seeds)],
        options=opts,
        tasks={t.id: t.source for t in tasks},
        documents={d.name: d.path for d in pool.agents},
    )


def _seeing(ident: dict[str, Any], llm: LLMBackend | None, side: int, *, always: bool = False) -> dict[str, Any]:
    """A model identity with whether it is shown screenshots and their size (a text model's entry
    stays as it was before roles existed, so older run folders still resume)."""
    if llm is None:  # a run whose agents need no model (scripted envs, replay)
        return ident
    images = bool(llm.capabilities.images)
    if images or always:
        ident.update(images=images, max_image_side=side if images else None)
    return ident


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
    llm: LLMBackend | Backends,
    out_dir: Path,
    options: ExecOptions,
    route: RouteFn | None = None,
    agent: str | None = None,
    seed_index: int = 0,
    planner: PlanFn | None = None,
    ask: Ask | None = None,
    routers: RouterShelf | None = None,
) -> dict[str, Any]:
    """Carry one task out and judge it; the row of ``results.jsonl`` (never raises AgentlabError).

    The kernel every way of carrying a task out shares: the episode folder, the team
    (:func:`agentlab.teams.base.team_name`: one agent, a plan's steps, or a named team), the
    metered models (``llm``: one model, or a model per role with each role's screenshot size), the deadline, opening the env the team asks for, judging the end state once, the row
    (its costs from the meters) and harness errors; ``routers``: those the run has built (None: this task's own). ``seed_index`` picks the run's seed ``options.seed + seed_index``; ``ask`` is how a
    team that asks a person asks.
    """
    t0 = time.monotonic()
    seed = options.seed + seed_index
    folder = episode_folder(out_dir, task.id, options, seed_index)
    # left by a run killed before its row was written: start again (only ever inside episodes/)
    remove_inside(folder, out_dir / EPISODES_DIR)
    given = Backends.of(llm)
    row = _new_row(task, out_dir, options, agent, getattr(given.llm, "model_id", ""), seed_index)
    if (cap := options.max_new_tokens) is not None:
        given = Backends(ReplyCap(given.llm, cap), {r: ReplyCap(b, cap) for r, b in given.roles.items()}, given.sides)
    models = Models(given)
    name = team_name(task, options, agent=agent, route=route, planner=planner)
    job = Job(task=task, pool=pool, models=models, options=replace(options, seed=seed), folder=folder, run_dir=out_dir,
              deadline=t0 + options.time_limit_s, agent=agent, route=route, planner=planner, ask=ask,
              routers=routers or RouterShelf(pool))
    team = team_class(name, where=task.source or task.id)()
    opened: TaskEnv | None = None
    try:
        with task_deadline(job.deadline):  # routing and planning ask models too
            opening = team.prepare(job, row)
        if opening is not None:
            t_setup = time.monotonic()
            opened = open_task_env(opening.kind, task, folder, opening.options)
            row.setup_s, row.isolation = round(time.monotonic() - t_setup, 6), opened.isolation
            try:  # a model call of the team's own (a planner, a reviewer) stops at the deadline too
                with task_deadline(job.deadline):
                    team.run(job, opened, row)
            except TimeLimitExceeded as exc:  # the task's failure, as when an agent's step runs out
                row.status, row.agent_error = "time_limit", exc.message
            t_eval = time.monotonic()
            opened.collect()
            verdict = task.evaluate(opened.root, env=opened.eval_env)
            row.success, row.score, row.verdict = verdict.success, float(verdict.score), verdict.as_record()
            if task.subtasks:
                row.judged_subtasks = judge_subtasks(task.subtasks, verdict)
                row.subtask_acc = sum(s["success"] for s in row.judged_subtasks) / len(row.judged_subtasks)
            row.evaluate_s = round(time.monotonic() - t_eval, 6)
            team.judged(job, verdict)
    except DiskFullError:  # not this task's problem: the run stops (its row would not fit either)
        raise
    except TimeLimitExceeded as exc:  # while routing or planning: nothing ran, nothing to judge
        row.status, row.agent_error = "time_limit", exc.message
    except AgentlabError as exc:
        row.error = " ".join(str(exc).split())
        log.warning("task %s: harness error: %s", task.id, row.error)
    finally:
        if opened is not None:
            opened.close()
    team.close(job, row)
    used = models.total()
    row.llm_calls, row.tokens_in, row.tokens_out, row.loop_cuts = used.calls, used.tokens_in, used.tokens_out, used.loop_cuts
    row.usage_by_role, row.seconds = models.usage_by_role(), round(time.monotonic() - t0, 3)
    return row.to_json()


def _new_row(task: ExecTask, out_dir: Path, options: ExecOptions, agent: str | None, model_id: str,
             seed_index: int = 0) -> EpisodeRow:
    """An episode's row before it ran: failed, no steps, no error yet."""
    folder = episode_folder(out_dir, task.id, options, seed_index)
    return EpisodeRow(
        id=task.id, domain=task.domain, router="forced" if agent else options.router, agents=[], success=False, score=0.0,
        status="error", steps=0, llm_calls=0, tokens_in=0, tokens_out=0, seconds=0.0, error=None,
        trajectory=folder.relative_to(out_dir).as_posix(), max_steps=options.max_steps, time_limit_s=options.time_limit_s,
        seed=options.seed + seed_index, seed_index=seed_index, max_new_tokens=options.max_new_tokens,
        runner_options=dict(options.runner_options), model_id=model_id)


def lost_row(item: WorkItem, why: str, *, out_dir: Path, options: ExecOptions, agent: str | None = None,
             model_id: str = "") -> dict[str, Any]:
    """The row of an episode whose worker died every time it ran it: a harness error
    (``--retry-errors`` runs it again)."""
    task, seed_index = item
    row = _new_row(task, out_dir, options, agent, model_id, seed_index)
    row.error = f"harness: {why}"
    return row.to_json()


def comparable_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row without its :data:`TIMING_FIELDS` (a plan's ``step_outcomes`` too: each step times
    itself): equal for serial and parallel runs of one deterministic configuration."""
    out = {k: v for k, v in row.items() if k not in TIMING_FIELDS}
    if isinstance(out.get("step_outcomes"), list):
        out["step_outcomes"] = [{k: v for k, v in s.items() if k not in TIMING_FIELDS} if isinstance(s, dict) else s
                                for s in out["step_outcomes"]]
    return out


@dataclass
class SuiteSummary:
    """What a suite run ended with (all rows of results.jsonl, old and new)."""

    rows: list[dict[str, Any]]
    ran: int
    skipped: int
    #: how the run's budget went (None: it had none)
    budget: BudgetOutcome | None = None
    #: the episodes of this call that reran a replaced row (:mod:`agentlab.record.rerun`), and how they changed
    reruns: list[RerunChange] = field(default_factory=list)
    #: replaced rows whose rerun has not finished yet (a resumed run carries them out)
    rerun_pending: int = 0

    @property
    def harness_errors(self) -> int:
        return sum(1 for r in self.rows if r.get("error"))

    @property
    def execution_acc(self) -> float:
        return sum(bool(r.get("success")) for r in self.rows) / len(self.rows) if self.rows else 0.0

    @property
    def subtask_counts(self) -> tuple[int, int]:
        """(annotated subtasks judged done, annotated subtasks) over the rows that have them."""
        judged = [s for r in self.rows for s in (r.get("judged_subtasks") or ())]
        return sum(bool(s.get("success")) for s in judged), len(judged)

    def by_domain(self) -> dict[str, tuple[float, int]]:
        """domain -> (ExecutionAcc, tasks)."""
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in self.rows:
            groups[str(r.get("domain"))].append(bool(r.get("success")))
        return {d: (sum(v) / len(v), len(v)) for d, v in sorted(groups.items())}


def results_path(out_dir: Path) -> Path:
    return out_dir / RESULTS_FILE


def check_out_dir(out_dir: Path, resume: bool) -> None:
    """Refuse to mix runs: an existing non-empty results.jsonl needs ``resume``; a folder another
    run is writing is refused whatever the flags (:class:`~agentlab.runlock.RunLock`)."""
    check_unlocked(out_dir)
    path = results_path(out_dir)
    if not resume and path.exists() and path.stat().st_size > 0:
        raise DataError("results.jsonl already holds rows; pass --resume to continue this run or choose another --out",
                        where=path)
