"""The communication hub: what each finished step of a plan left behind, passed to the next.

After every step the hub records a :class:`StepOutcome`: the agent, its subtask, how the step
ended, the files it produced, changed or removed in the shared state (found by comparing a
listing of the task root -- sizes, modification times and content hashes -- before and after
the step), the agent's final output (the last program output a code agent printed, else its
last thought) and a one-line summary. :meth:`Hub.context_for` renders what step ``k`` is told
about the steps before it, e.g.::

    Earlier steps (their results are in the shared files):
    1. SheetAgent (done): wrote totals.csv; output: Total is 412.5

That block goes in front of the step's subtask (prompt ``teams/step``) and is recorded in the
step's trajectory as a role message ``{"role": "hub", "text": ..., "values": {...}}``.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentlab.safepath import SafeFolder, UnsafePathError
from agentlab.tasks.decisions import PlanStep
from agentlab.envs.trajectory import StepRecord
from agentlab.envs.base import clip

log = logging.getLogger(__name__)

#: a multi-agent episode folder's record of its plan and step outcomes (next to the step-<k>-<agent>/ folders)
PLAN_FILE = "plan.json"
#: longest output / summary text the hub passes on (characters)
MAX_OUTPUT_CHARS = 300
#: files bigger than this are compared by size and mtime only (not hashed)
HASH_LIMIT_BYTES = 32 * 1024 * 1024
#: names the listing skips: caches, the workspace's own program folder and an application's lock files, not results
_SKIP_PARTS = ("__pycache__", ".agentlab")
_SKIP_PREFIXES = (".~lock.",)


@dataclass(frozen=True)
class FileStamp:
    """What a listing keeps of one file: enough to tell that it changed."""

    size: int
    mtime_ns: int
    sha256: str | None


def snapshot(root: Path) -> dict[str, FileStamp]:
    """Every regular file under ``root`` (paths relative to it, ``/``-separated) with its stamp.
    Read through :class:`~agentlab.safepath.SafeFolder`: a link a program left is not a result
    and is never followed (its target is not hashed, its size not looked at)."""
    out: dict[str, FileStamp] = {}
    if not root.is_dir():
        return out
    folder = SafeFolder(root)

    def skipped(rel: str) -> bool:
        parts = rel.split("/")
        return any(p in _SKIP_PARTS for p in parts) or parts[-1].startswith(_SKIP_PREFIXES)

    for e in folder.walk(skipped):
        if not e.readable:
            continue
        try:
            digest = hashlib.sha256(folder.read_bytes(e.rel)).hexdigest() if e.size <= HASH_LIMIT_BYTES else None
        except (UnsafePathError, OSError):  # replaced or gone since the listing: not a result
            continue
        out[e.rel] = FileStamp(e.size, e.mtime_ns, digest)
    return out


def changed_files(before: dict[str, FileStamp], after: dict[str, FileStamp]) -> tuple[list[str], list[str]]:
    """(files added or changed, files removed), each sorted."""
    touched = sorted(p for p, s in after.items() if before.get(p) != s)
    removed = sorted(p for p in before if p not in after)
    return touched, removed


def final_output(records: list[StepRecord]) -> str:
    """What the agent said last: the last non-empty program output (code agents), else the
    last thought of a step (GUI agents), clipped; '' when there is none."""
    for rec in reversed(records):
        ran = rec.info.get("program") if isinstance(rec.info, dict) else None
        if isinstance(ran, dict) and str(ran.get("stdout") or "").strip():
            return clip(str(ran["stdout"]), MAX_OUTPUT_CHARS)
    for rec in reversed(records):
        if rec.thought.strip():
            return clip(rec.thought, MAX_OUTPUT_CHARS)
    return ""


@dataclass
class StepOutcome:
    """How one step of a plan ended and what it left in the shared state."""

    index: int  #: 0-based position in the plan
    agent: str
    subtask: str
    #: done | failed | max_steps | wrong_env | time_limit | error (the runner's AgentResult status, or the step runner's)
    status: str
    steps: int = 0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)  #: added or changed, relative to the task root
    removed: list[str] = field(default_factory=list)
    output: str = ""  #: the agent's final output (see :func:`final_output`)
    summary: str = ""
    success: bool | None = None  #: the step judged on its own (a reviewer); None when nobody judged it
    error: str | None = None
    trajectory: str | None = None  #: the step's trajectory folder, relative to the run folder

    @property
    def step(self) -> PlanStep:
        return PlanStep(self.agent, self.subtask)

    def as_row(self) -> dict[str, Any]:
        """The ``step_outcomes`` entry of a result row (JSON-ready)."""
        return asdict(self)


def summarize(status: str, files: list[str], removed: list[str], output: str, error: str | None) -> str:
    """One line: what the step changed and said (deterministic, no model call)."""
    parts = []
    if files:
        parts.append("wrote " + ", ".join(files[:6]) + (f" (+{len(files) - 6} more)" if len(files) > 6 else ""))
    if removed:
        parts.append("removed " + ", ".join(removed[:6]) + (f" (+{len(removed) - 6} more)" if len(removed) > 6 else ""))
    if output:
        parts.append(f"output: {clip(output, 160)}")
    if status != "done" and error:
        parts.append(f"problem: {clip(error, 160)}")
    return "; ".join(parts) if parts else "changed no file"


class Hub:
    """The record of a plan's finished steps and what the next step is told about them."""

    def __init__(self, task_instruction: str, plan: list[PlanStep] | None = None) -> None:
        self.task = task_instruction
        self.plan = list(plan or [])
        self.outcomes: list[StepOutcome] = []

    def record(self, outcome: StepOutcome) -> None:
        self.outcomes.append(outcome)
        log.info("hub: step %d %s (%s): %s", outcome.index + 1, outcome.agent, outcome.status, outcome.summary)

    def rollback(self, step_index: int) -> list[StepOutcome]:
        """Forget the outcomes of step ``step_index`` (0-based) and later, as a team does when it
        restores the files from before that step (a retry, a backtrack); the outcomes forgotten."""
        dropped = [o for o in self.outcomes if o.index >= step_index]
        self.outcomes = [o for o in self.outcomes if o.index < step_index]
        return dropped

    def context_for(self, step_index: int) -> str:
        """What step ``step_index`` (0-based) is told about the steps before it ('' for the first)."""
        earlier = [o for o in self.outcomes if o.index < step_index]
        if not earlier:
            return ""
        lines = ["Earlier steps (their results are in the shared files):"]
        lines += [f"{o.index + 1}. {o.agent} ({o.status}): {o.summary}" for o in earlier]
        return "\n".join(lines)

    def values_for(self, step_index: int) -> dict[str, Any]:
        """The parameters passed on to step ``step_index``: the files the earlier steps wrote and their outputs."""
        earlier = [o for o in self.outcomes if o.index < step_index]
        files = sorted({f for o in earlier for f in o.files} - {f for o in earlier for f in o.removed})
        return {"files": files, "outputs": [o.output for o in earlier if o.output]}

    def role(self, step_index: int) -> dict[str, Any]:
        """The hub's role message for the first record of step ``step_index`` (docs/trajectories.md)."""
        return {"role": "hub", "text": self.context_for(step_index) or "(first step: nothing to pass on)",
                "values": self.values_for(step_index)}
