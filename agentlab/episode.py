"""Carry tasks out: route a task to an agent, run the agent's episode, judge the end state.

One task (:func:`run_task`): pick the agent (the given one, or the router's choice) → build it
from its pool document's runner (:data:`~agentlab.agents.base.AGENTS`) → write the task's
start state into a fresh workspace inside the episode folder → ``agent.run`` with a
trajectory recorder → ``task.evaluate`` on the final state → one result row. A suite
(:func:`run_suite`) appends one row per task to ``results.jsonl`` as each finishes, so a
killed run keeps every finished row and ``resume=True`` skips them.

Problems of the harness (an env that cannot be built, a model that cannot be reached, an
agent without a runner here) are kept apart from task failures: the row's ``error`` is set
and the suite counts it in ``harness_errors``. Layout of a run folder::

    <out>/results.jsonl                  one row per task (see docs/execution.md)
    <out>/episodes/<task id>/traj.jsonl  every step, each model message included
    <out>/episodes/<task id>/workspace/  the task's files as the agent left them
    <out>/episodes/<task id>/device/     phone tasks: the device's files (start state pushed, outputs pulled)
"""

from __future__ import annotations

import logging
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.agents.base import AgentResult, agent_class
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.base import Env, Observation, StepResult
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions, open_task_env
from agentlab.errors import AgentlabError, DataError
from agentlab.eval.exec_tasks import ExecTask
from agentlab.fileio import append_jsonl, read_jsonl, write_jsonl
from agentlab.llm.base import LLMBackend, ReplyCap
from agentlab.pool.document import AgentDocument
from agentlab.pool.store import AgentPool
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


#: the task envs (a task file's ``env``) an agent acting in a kind of env can carry out. A code
#: agent edits a desktop task's files directly (as the paper's CLI agents do); a GUI agent needs
#: the task's application on a screen and a phone agent a device, so a workspace task sent to a
#: GUI agent is the router's mistake: a failed row (status ``wrong_env``), not a harness error.
CAN_ACT: dict[str, frozenset[str]] = {
    "workspace": frozenset({"workspace", "desktop"}),
    "desktop": frozenset({"desktop"}),
    "phone": frozenset({"phone"}),
}


class HarnessError(AgentlabError):
    """The harness could not carry a task out (not the agent's failure)."""


class NoAgentChosen(AgentlabError):
    """The router gave no agent for the task (e.g. the ICL router's generation named none): the
    routing failed, so the task fails -- not a harness error."""


class TimeLimitExceeded(AgentlabError):
    """The task's wall-time limit ran out (checked before each action)."""


@dataclass
class ExecOptions:
    """How each task of a suite is run (recorded in every row)."""

    router: str = "gt"
    max_steps: int = 10
    time_limit_s: float = 600.0
    seed: int = 0
    #: cut every model reply at this many new tokens (None: each runner's own setting)
    max_new_tokens: int | None = None
    #: laid over every document's ``runner_options`` (an ablation: ``{"use_docs": False}``)
    runner_options: dict[str, Any] = field(default_factory=dict)
    envs: TaskEnvOptions = field(default_factory=TaskEnvOptions)


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


def router_route(kind: str, pool: AgentPool, tokens: Path | None = None) -> RouteFn:
    """A route function for a trained or fitted router, built as ``agentlab route`` builds it:
    AgentToken (or any router given ``tokens``) loaded from its checkpoint (default
    ``data/tokens``), the other baselines fitted on the pool's seed demonstrations."""
    from agentlab.metaagent.data import load_training_set
    from agentlab.metaagent.router import router_class
    from agentlab.paths import data_dir

    cls = router_class(kind)
    if kind == "agenttoken" or tokens is not None:
        router = cls.load(tokens or data_dir() / "tokens", pool)
    else:
        router = cls(pool)
        router.fit(load_training_set(pool, None))

    def route(task: ExecTask) -> str:
        decided = router.route([task.instruction])[0]
        if decided.agent is None:
            why = f": {' '.join(decided.error.split())}" if decided.error else ""
            raise NoAgentChosen(f"router '{kind}' chose no agent{why}", where=task.source or task.id)
        return decided.agent

    return route


class _TimedEnv(Env):
    """Passes everything to ``inner``; refuses to act once the deadline has passed."""

    def __init__(self, inner: Env, deadline: float) -> None:
        self.inner, self.deadline = inner, deadline

    @property
    def actions(self) -> ActionSpace:
        return self.inner.actions

    def reset(self, task: str | None = None) -> Observation:
        return self.inner.reset(task)

    def observe(self) -> Observation:
        return self.inner.observe()

    def step(self, action: Action) -> StepResult:
        if time.monotonic() > self.deadline:
            raise TimeLimitExceeded("the task's wall-time limit ran out")
        return self.inner.step(action)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        """What else the inner env offers (a desktop's ``uno_url``, ``screenshot()``, ...)."""
        if name == "inner":  # not set yet (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def run_task(
    task: ExecTask,
    *,
    pool: AgentPool,
    llm: LLMBackend,
    out_dir: Path,
    options: ExecOptions,
    route: RouteFn | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """Carry one task out and judge it; the row of ``results.jsonl`` (never raises AgentlabError)."""
    t0 = time.monotonic()
    folder = out_dir / EPISODES_DIR / task.id
    if folder.exists():  # left by a run killed before its row was written: start again
        shutil.rmtree(folder)
    row: dict[str, Any] = {
        "id": task.id, "domain": task.domain, "router": "forced" if agent else options.router, "agents": [],
        "success": False, "score": 0.0, "status": "error", "steps": 0, "llm_calls": 0, "tokens_in": 0, "tokens_out": 0,
        "seconds": 0.0, "error": None, "trajectory": folder.relative_to(out_dir).as_posix(),
        "max_steps": options.max_steps, "time_limit_s": options.time_limit_s, "seed": options.seed,
        "max_new_tokens": options.max_new_tokens, "runner_options": dict(options.runner_options), "model_id": getattr(llm, "model_id", ""),
    }
    recorder: TrajectoryRecorder | None = None
    opened: TaskEnv | None = None
    if options.max_new_tokens is not None:
        llm = ReplyCap(llm, options.max_new_tokens)
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
        # a document's own seed wins over the run's; the run's overrides win over the document
        runner = cls(llm, doc, {"seed": options.seed, **doc.runner_options, **options.runner_options})
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
        timed = _TimedEnv(opened.env, t0 + options.time_limit_s)
        try:
            res: AgentResult = runner.run(timed, task.instruction, recorder, options.max_steps)
        except TimeLimitExceeded as exc:
            res = AgentResult(status="failed", error=exc.message)
            row["status"] = "time_limit"
        t_eval = time.monotonic()
        opened.collect()
        verdict = task.evaluate(opened.root, env=opened.eval_env)
        row.update(success=verdict.success, score=float(verdict.score), steps=res.steps, llm_calls=res.llm_calls,
                   tokens_in=res.tokens_in, tokens_out=res.tokens_out, evaluate_s=round(time.monotonic() - t_eval, 6))
        if res.subtasks is not None:  # hierarchical runners (Agent S2, PC-Agent) report their subtasks
            row.update(subtasks=res.subtasks, subtasks_done=res.subtasks_done)
        if row["status"] != "time_limit":
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
) -> SuiteSummary:
    """Run every task not yet in ``results.jsonl``, appending a row as each one ends.

    ``limit`` stops after that many newly run tasks (the rest stay for a resumed run).
    ``retry_errors`` (with ``resume``) first drops the rows that ended in a harness error (an app
    that did not start, an unreachable model) so those tasks run again; the file is rewritten
    atomically, so an interruption keeps either the old rows or the pruned ones.
    """
    from tqdm import tqdm

    out_dir.mkdir(parents=True, exist_ok=True)
    check_out_dir(out_dir, resume)
    path = results_path(out_dir)
    rows = read_jsonl(path) if path.exists() else []
    if retry_errors and any(r.get("error") for r in rows):
        kept = [r for r in rows if not r.get("error")]
        log.info("exec: %d harness-error row(s) dropped to run again", len(rows) - len(kept))
        write_jsonl(path, kept)
        rows = kept
    done = {r.get("id") for r in rows}
    todo = [t for t in tasks if t.id not in done]
    skipped = len(done)
    if limit is not None:
        todo = todo[:limit]
    log.info("exec: %d task(s) to run, %d already in %s", len(todo), skipped, path)
    ran = 0
    for task in tqdm(todo, desc="exec", unit="task", disable=not progress):
        row = run_task(task, pool=pool, llm=llm, out_dir=out_dir, options=options, route=route, agent=agent)
        append_jsonl(path, row)
        rows.append(row)
        ran += 1
        log.info("task %s: %s score=%.2f", task.id, row["status"], row["score"])
    return SuiteSummary(rows=rows, ran=ran, skipped=skipped)
