"""The project's own execution tasks: JSON files that set up a start state and judge the end.

A task file (``data/tasks/<id>.json``) holds the instruction an agent receives, the domain
(the pool's vocabulary), which environment runs it (``workspace`` for code-writing agents,
``desktop`` for GUI agents, ``phone`` for phone agents), ``setup`` steps that write the start
files, the ``outputs`` the agent is expected to produce, and an OSWorld-style ``evaluator``
block (:mod:`agentlab.judge.evaluators`). An optional ``reference_solution`` exists to test the
task itself (a correct program must score 1, the untouched start state 0); it is never
shown to an agent.

A phone task's ``setup`` paths are device paths without the leading ``/`` (they are written
into a folder that mirrors the device and pushed from there), its ``apps`` are the packages
restarted after the push so they load their data, its ``outputs`` are absolute device paths
pulled back into that folder before judging, and its reference solution is ``language:
"actions"``: phone actions as an agent writes them (``tap(2)``), one per line, replayed on
the device.

These tasks are written for this project; the public benchmark lists are for evaluation of
routing only and are not copied here.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentlab.config import error_line, read_json_object
from agentlab.errors import DataError
from agentlab.judge.evaluators import EvalResult, EvaluatorSpec, evaluate
from agentlab.judge.getters import FinalState
from agentlab.tasks.decisions import PlanStep
from agentlab.tasks.gui_solution import GuiStep
from agentlab.paths import data_dir
from agentlab.tasks.env_kinds import ENV_KINDS
from agentlab.tasks.setup import WRITERS

#: the domain of tasks that touch two applications or files (data/tasks/pc-*.json, a PC-Eval
#: analog): no single agent's domain covers them, so it is a task domain outside the pool's
#: vocabulary; ground-truth routing sends them to the ``general`` agents (``episode.gt_agent``)
MULTI_APP_DOMAIN = "multi_apps"

#: a task id names its episode folder (``episodes/<id>``): a letter or digit, then letters, digits,
#: ``.``, ``_`` or ``-`` (no separators, no dot-only names such as ``..``), at most 100 characters
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def id_problem(task_id: str) -> str | None:
    """Why ``task_id`` cannot name an episode folder (None when it can)."""
    if TASK_ID.fullmatch(task_id):
        return None
    return (f"id {task_id!r} is not a safe folder name: use letters, digits, '.', '_' and '-', starting with a "
            "letter or digit, at most 100 characters (it names the task's episode folder)")


def relative_path_problem(path: str) -> str | None:
    """Why ``path`` is not a plain relative path inside a task's folder (None when it is)."""
    p = PurePosixPath(path.replace("\\", "/"))
    if not path.strip() or path.strip() in (".", "./"):
        return f"{path!r} names the folder itself, not a file in it"
    if p.is_absolute() or path.startswith("~"):
        return f"{path!r} is absolute; give a path relative to the task's folder"
    if ".." in p.parts:
        return f"{path!r} leaves the task's folder ('..')"
    return None


class Solution(BaseModel):
    """A known-good program for the task (tests only)."""

    language: Literal["python", "bash", "actions"]
    code: str  #: the program; for ``actions``, one action call per line (``tap(2)``)


class SubtaskSpec(BaseModel):
    """One annotated subtask of a task: what it asks, whose it is, and which of the evaluator's
    checks (indices into ``evaluator.func``) say it was done. The end state judges it, so SubtaskAcc
    is measured for any planner -- the gold plan, a manager, COLA, one generalist -- not reported by
    the agents. It holds no expected value: those stay in the evaluator, which no agent sees."""

    model_config = ConfigDict(extra="forbid")

    subtask: str
    #: the pool agent the subtask is for (None: not annotated)
    agent: str | None = None
    checks: list[int] = Field(min_length=1)


def subtask_problems(subtasks: list[SubtaskSpec], n_checks: int) -> list[str]:
    """What is wrong with a task's ``subtasks`` against an evaluator of ``n_checks`` checks."""
    if not subtasks:
        return ["subtasks: an empty list; leave 'subtasks' out when none are annotated"]
    out: list[str] = []
    owner: dict[int, int] = {}
    for i, sub in enumerate(subtasks):
        for c in sub.checks:
            if not 0 <= c < n_checks:
                out.append(f"subtasks[{i}].checks: {c} is not a check of the evaluator (0-{n_checks - 1})")
            elif c in owner:
                out.append(f"subtasks[{i}].checks: check {c} already belongs to subtasks[{owner[c]}]")
            else:
                owner[c] = i
    return out


def judge_subtasks(subtasks: list[SubtaskSpec], verdict: EvalResult) -> list[dict[str, Any]]:
    """Each annotated subtask judged by its checks in ``verdict`` (the end state's): done when every
    one of them scored full marks; a check the verdict lacks counts as not passed."""
    scores = [c.score for c in verdict.checks]
    return [{"subtask": s.subtask, "agent": s.agent, "checks": list(s.checks),
             "success": all(c < len(scores) and scores[c] >= 1.0 - 1e-9 for c in s.checks)} for s in subtasks]


class ExecTask(BaseModel):
    """One execution task, as stored in ``data/tasks/*.json``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    instruction: str
    domain: str
    #: the env kind it runs in (:data:`~agentlab.tasks.env_kinds.ENV_KINDS`)
    env: str = "workspace"
    apps: list[str] = Field(default_factory=list)
    setup: list[dict[str, Any]] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    evaluator: EvaluatorSpec
    reference_solution: Solution | None = None
    #: a desktop task's GUI reference solution: steps in the desktop action space aimed at elements
    #: by accessible role and name (:mod:`agentlab.tasks.gui_solution`); tests only, like
    #: ``reference_solution`` (``agentlab tasks check --gui`` replays it), never shown to an agent
    gui_solution: list[GuiStep] | None = None
    #: the gold agent (a pool name) for ground-truth routing; absent: the pool's agent for domain + env
    agent: str | None = None
    #: a multi-agent task's gold plan, in order (``agentlab exec --router gt`` executes it); None: one agent
    plan: list[PlanStep] | None = None
    #: the task's annotated subtasks, each with the evaluator checks that say it was done (SubtaskAcc
    #: judged on the end state, whoever planned); evaluation only, never shown to an agent
    subtasks: list[SubtaskSpec] | None = None
    source: str | None = Field(None, exclude=True)

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if why := id_problem(value):
            raise ValueError(why)
        return value

    @field_validator("env")
    @classmethod
    def _known_env(cls, value: str) -> str:
        if value not in ENV_KINDS:
            raise ValueError(f"env {value!r} is not one of {', '.join(ENV_KINDS)}")
        return value

    @field_validator("instruction")
    @classmethod
    def _has_words(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the instruction is empty")
        return value

    def problems(self) -> list[str]:
        from agentlab.pool import ALL_DOMAINS

        known = [*ALL_DOMAINS, MULTI_APP_DOMAIN]
        out = [] if self.domain in known else [f"domain {self.domain!r} is not one of {known}"]
        for i, step in enumerate(self.setup):
            kind = step.get("type")
            if kind not in WRITERS:
                out.append(f"setup[{i}]: unknown type {kind!r}; known: {', '.join(sorted(WRITERS))}")
            path = step.get("path")
            if not isinstance(path, str):
                out.append(f"setup[{i}]: needs a relative 'path'")
            elif why := relative_path_problem(path):  # phone tasks too: a device path without its leading '/'
                out.append(f"setup[{i}].path: {why}")
        kind = ENV_KINDS[self.env]
        if kind.device_paths:
            out += [f"outputs: {o!r} is not an absolute device path (/sdcard/...)" for o in self.outputs if not o.startswith("/")]
            if not self.apps:
                out.append("apps: a phone task names the app package(s) to start, e.g. [\"com.example.clock\"]")
        else:
            out += [f"outputs: {why}" for o in self.outputs if (why := relative_path_problem(o))]
        sol = self.reference_solution
        if sol is not None and (sol.language == "actions") != kind.device_paths:
            out.append(f"reference_solution: language {sol.language!r} does not fit env {self.env!r} "
                       "(phone tasks replay 'actions'; the others run python or bash)")
        if self.gui_solution is not None and (self.env not in ("desktop", "phone") or not self.gui_solution):
            out.append("gui_solution: only a desktop or phone task has one, and it lists at least one step")
        if self.plan is not None and not self.plan:
            out.append("plan: an empty list; leave 'plan' out for a single-agent task")
        if self.plan is not None and self.agent is not None:
            out.append("plan and agent: give one of them (a plan names an agent per step)")
        if self.subtasks is not None:
            out += subtask_problems(self.subtasks, len(self.evaluator.funcs))
        return out + self.evaluator.problems()

    def expected_length(self) -> int:
        """How long the task is expected to take, in single-agent episodes' worth, known before it
        runs: the agents of its gold plan or the applications it spans, whichever is more (a
        two-application task with a two-agent plan makes two agents' calls: 2.6-4.1 s against
        1.1-1.7 s for one in ``benchmarks/ray_speedup.py``). Several workers start the longest first."""
        return max(1, len(self.plan or ()), len(set(self.apps)))

    def prepare(self, root: str | Path) -> None:
        """Write the start state into ``root`` (a workspace or the folder a desktop app opens)."""
        state = FinalState(Path(root))
        for i, step in enumerate(self.setup):
            cfg = dict(step)
            kind = cfg.pop("type")
            rel = cfg.pop("path")
            try:
                target = state.path(rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                WRITERS[kind](target, **cfg)
            except (OSError, DataError) as exc:  # a start state that cannot be written is the task file's fault
                why = exc.message if isinstance(exc, DataError) else (exc.strerror or str(exc))
                raise DataError(f"setup[{i}] ({kind} {rel!r}): cannot write the start state: {why}",
                                where=self.source or self.id) from None

    def evaluate(self, root: str | Path, *, env: Any = None, values: dict[str, Any] | None = None) -> EvalResult:
        """Score the final state found in ``root`` (and ``env``, if a getter needs it)."""
        return evaluate(self.evaluator, FinalState(Path(root), env=env, values=dict(values or {})))


def load_task(path: str | Path) -> ExecTask:
    """Read and check one task file; any problem raises :class:`DataError` naming the file."""
    path = Path(path)
    raw = read_json_object(path, what="task file", error=DataError)
    try:
        task = ExecTask.model_validate({**raw, "source": str(path)})
    except ValidationError as exc:
        raise DataError(error_line(exc.errors()[0]), where=path) from None
    problems = task.problems()
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DataError(problems[0] + more, where=path)
    if task.id != path.stem:
        raise DataError(f"id {task.id!r} differs from the file name; name the file {task.id}.json", where=path)
    return task


def tasks_dir() -> Path:
    return data_dir() / "tasks"


def load_tasks(folder: str | Path | None = None) -> list[ExecTask]:
    """Every task in ``folder`` (default ``data/tasks``), sorted by id; two ids that name one folder
    on a case-insensitive file system (``Report`` and ``report``) are refused."""
    tasks = [load_task(p) for p in task_files(folder)]
    check_unique_ids(tasks)
    return tasks


def check_unique_ids(tasks: list[ExecTask]) -> None:
    """Refuse ids that collide once case is ignored: their episode folders would be one."""
    seen: dict[str, ExecTask] = {}
    for t in tasks:
        key = t.id.casefold()
        if key in seen:
            raise DataError(f"id {t.id!r} collides with {seen[key].id!r} ({seen[key].source or 'another task'}): "
                            "their episode folders would be one on a case-insensitive file system; rename one",
                            where=t.source or t.id)
        seen[key] = t


def task_files(folder: str | Path | None = None) -> list[Path]:
    """The task files of ``folder`` (default ``data/tasks``); none at all is an error."""
    folder = Path(folder) if folder is not None else tasks_dir()
    if folder.is_file():
        raise DataError("is a file; expected a folder of task files (--dir)", where=folder)
    if not folder.is_dir():
        raise DataError("task folder not found", where=folder)
    folders = sorted(p for p in folder.glob("*.json") if p.is_dir())
    if folders:
        raise DataError("is a folder, not a task file; rename or move it out of the task folder", where=folders[0])
    files = sorted(p for p in folder.glob("*.json") if p.is_file())
    if not files:
        raise DataError("no task files (*.json) in this folder", where=folder)
    return files
