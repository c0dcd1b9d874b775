"""COLA's reviewer: did a step do what its subtask asked? Judged from the observed change.

Cheap deterministic checks come first and settle the clear cases without a model call:

* the agent could not act here (``wrong_env``) or the harness failed (``error``): **no**;
* the agent gave up (``failed``): **no**;
* no file of the task changed and the agent gave no output: **no** (no effect).

Otherwise (with ``mode="model"``) the model reads the subtask, the agent's reported status,
the list of files added/changed/removed (a before/after snapshot comparison), the start of
each changed text file, the agent's final output and the team's recent messages
(``data/prompts/cola/reviewer.txt``) and answers ``Verdict: yes|no|unsure``. A reply that
does not parse is sent back with the problem quoted (``cola/reviewer_correction``); when
every attempt fails, the verdict is ``unsure`` -- which in passive mode asks a person.
With ``mode="checks"`` a step that passed the checks is accepted.

:meth:`Reviewer.review_action` judges one action as it is taken (``cola/action_reviewer``;
:mod:`agentlab.teams.cola.action_review` wraps the acting agent's env with it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentlab.dialogue.ask import Attempt, RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template
from agentlab.envs.snapshot import FolderChanges
from agentlab.errors import ActionParseError
from agentlab.llm.base import ChatMessage, LLMBackend
from agentlab.safepath import SafeFolder, UnsafePathError
from agentlab.teams.cola.action_review import ActionView

PROMPTS = ("cola/reviewer", "cola/reviewer_correction", "cola/action_reviewer")
Verdict = Literal["yes", "no", "unsure"]
ReviewMode = Literal["model", "checks"]
_VERDICT_RE = re.compile(r"verdict\s*[:=-]?\s*\**\s*(yes|no|unsure)\b", re.I)
_REASON_RE = re.compile(r"reason\s*[:=-]\s*(.+)", re.I)
#: files whose start is shown to the reviewer (others are named only)
TEXT_SUFFIXES = frozenset({".txt", ".csv", ".md", ".json", ".py", ".tsv", ".html", ".xml", ".yaml", ".yml", ".log", ".ini"})


@dataclass(frozen=True)
class StepView:
    """What the reviewer sees of one finished step."""

    task: str
    subtask: str
    agent: str
    status: str  #: the agent's end status (done, failed, max_steps, wrong_env, error, ...)
    changes: FolderChanges
    output: str = ""  #: the agent's final output or answer text, if any
    error: str | None = None


@dataclass
class Review:
    """The verdict, why, and whether a check or the model gave it."""

    verdict: Verdict
    reason: str
    by: Literal["check", "model"]
    attempts: list[Attempt[tuple[Verdict, str]]] = field(default_factory=list)


def parse_review(text: str) -> tuple[Verdict, str]:
    m = _VERDICT_RE.search(text)
    if not m:
        raise ActionParseError("no 'Verdict: yes|no|unsure' line")
    reason = _REASON_RE.search(text)
    return m.group(1).lower(), (reason.group(1).strip() if reason else "")  # type: ignore[return-value]


def check_step(view: StepView) -> Review | None:
    """The deterministic verdict, or None when the model must judge."""
    if view.status in ("wrong_env", "error"):
        return Review("no", f"the agent could not act ({view.status}: {view.error or 'no detail'})", "check")
    if view.status == "failed":
        return Review("no", f"the agent gave up or failed ({view.error or 'no detail'})", "check")
    if view.changes.empty and not view.output.strip():
        return Review("no", "no effect: no file changed and the agent gave no output", "check")
    return None


def previews(root: Path, changes: FolderChanges, chars: int = 400, files: int = 4) -> str:
    """The start of each added or changed text file (what the reviewer can read of the change)."""
    out = []
    folder = SafeFolder(root)
    for rel in [*changes.added, *changes.changed][:files]:
        if Path(rel).suffix.lower() in TEXT_SUFFIXES:
            try:  # a link, a FIFO or a hard link to an outside file is never read
                text = folder.read_text(rel)
            except (UnsafePathError, OSError):
                continue
            cut = f"\n[... {len(text) - chars} more characters]" if len(text) > chars else ""
            out.append(f"--- {rel} (start) ---\n{text[:chars]}{cut}")
    return "\n".join(out)


class Reviewer:
    """Judges steps with the checks, then (``mode="model"``) with ``llm``."""

    def __init__(self, llm: LLMBackend, *, mode: ReviewMode = "model", max_attempts: int = 2, sampling: RetrySampling) -> None:
        self.llm = llm
        self.mode = mode
        self.max_attempts = max_attempts
        self.sampling = sampling
        self.template = load_template("cola/reviewer")
        self.correction = load_template("cola/reviewer_correction")
        self.action_template = load_template("cola/action_reviewer")

    def review(self, view: StepView, *, root: Path, dialogue: str) -> Review:
        found = check_step(view)
        if found is not None:
            return found
        if self.mode == "checks":
            return Review("yes", f"checks passed ({view.changes.describe()})", "check")
        prompt = [ChatMessage("user", self.template.render(
            task=view.task, subtask=view.subtask, agent=view.agent, status=view.status, changes=view.changes.describe(),
            previews=previews(root, view.changes), output=view.output.strip() or "(none)", dialogue=dialogue).strip())]
        return self._ask(prompt, "cola reviewer")

    def review_action(self, view: ActionView) -> Review:
        """One action's verdict from the model (:mod:`~agentlab.teams.cola.action_review`); an
        unreadable reply is ``unsure``, which never stops the agent. With ``mode="checks"`` there is
        nothing to check an action by: every action goes on."""
        if self.mode == "checks":
            return Review("yes", "no model review of actions with review=checks", "check")
        changes = ", ".join([*(f"+{p}" for p in view.changed), *(f"-{p}" for p in view.removed)]) or "(no file changed)"
        prompt = [ChatMessage("user", self.action_template.render(
            subtask=view.subtask, agent=view.agent, index=view.index, action=view.action, report=view.report,
            changes=changes).strip())]
        return self._ask(prompt, "cola action reviewer")

    def _ask(self, prompt: list[ChatMessage], label: str) -> Review:
        """The model's verdict on ``prompt``, re-asked until it reads; ``unsure`` when it never does."""
        asked = ask_until_parsed(self.llm, prompt, parse_review, max_attempts=self.max_attempts, params=self.sampling,
                                 correction=self.correction, label=label)
        if asked.value is None:
            return Review("unsure", f"the reviewer's replies could not be read ({asked.attempts[-1].problem})", "model",
                          asked.attempts)
        verdict, reason = asked.value
        return Review(verdict, reason or "(no reason given)", "model", asked.attempts)
