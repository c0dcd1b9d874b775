"""COLA's reviewer judging every action as it is taken, not only the finished step.

Why: the paper's reviewer can check each action of a decision agent and stop a wrong one at
once, instead of letting the agent spend the rest of its step budget building on it (and the
team rolling all of it back). :class:`ReviewedEnv` wraps the env a step's agent acts on: after
each action it shows the reviewer the subtask, the action, what the env reported back and the
files the action changed (a workspace's), and

* **no** raises :class:`~agentlab.errors.ActionRejected`: the agent's step ends ``failed`` with
  the reviewer's reason (:func:`~agentlab.agents.base.run_agent`), the step reviewer then says
  no without a model call, and the team's policy retries with that reason or reassigns;
* **yes** or **unsure** lets the agent go on (an unreadable reply is ``unsure``: a judge that
  cannot be read never stops an agent).

Every verdict is kept (:attr:`ReviewedEnv.reviews`) and becomes a reviewer message of the team's
trajectory (with its action number and text). It costs one
reviewer call per action (``review_max_new_tokens`` each), which is why it is off by default
(``--team-option review_actions=true``). The action that was rejected has run: it is in the team
trajectory's reviewer message, while the agent's own trajectory ends before recording it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Callable

from agentlab.envs.base import Env, Observation, StepResult, clip
from agentlab.envs.wrapper import EnvWrapper
from agentlab.errors import ActionRejected
from agentlab.teams.hub import changed_files, snapshot

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.actions.base import Action

#: characters of the env's report (a program's output, the screen's text) the reviewer reads
REPORT_CHARS = 600


@dataclass(frozen=True)
class ActionView:
    """What the reviewer sees of one action: the subtask it serves, the action, what came back."""

    subtask: str
    agent: str
    index: int  #: 1-based, within the step
    action: str  #: the action as the agent wrote it (``describe()``)
    report: str  #: what the env reported back (program output, the new screen's text), clipped
    changed: tuple[str, ...] = ()  #: files the action added or changed (a workspace's)
    removed: tuple[str, ...] = ()


class Judgement(Protocol):
    """What a judge answers (:class:`~agentlab.teams.cola.reviewer.Review` is one)."""

    @property
    def verdict(self) -> str: ...  # yes | no | unsure

    @property
    def reason(self) -> str: ...

    @property
    def by(self) -> str: ...  # check | model


@dataclass(frozen=True)
class ActionReview:
    """One action's verdict, for the team trajectory."""

    index: int
    action: str
    verdict: str
    reason: str
    by: str


def _report(result: StepResult) -> str:
    """The env's answer to an action as one clipped text: a program's exit and output, else the
    observation's text."""
    info = result.info
    if "returncode" in info or "stdout" in info:
        out = f"exit {info.get('returncode')}; output: {str(info.get('stdout', '')).strip() or '(none)'}"
        err = str(info.get("stderr", "")).strip()
        return clip(out + (f"; errors: {err}" if err else ""), REPORT_CHARS)
    return clip(result.observation.text or "(no text)", REPORT_CHARS)


class ReviewedEnv(EnvWrapper):
    """Passes everything to ``inner``; after each action asks ``judge`` and stops a rejected one.

    ``root``: the folder whose files the action may change (a workspace's), compared before and
    after each action; None for a screen, where the env's report is all the reviewer reads.
    """

    def __init__(self, inner: Env, judge: Callable[[ActionView], Judgement], *, subtask: str, agent: str,
                 root: Path | None = None) -> None:
        super().__init__(inner)
        self.judge, self.subtask, self.agent, self.root = judge, subtask, agent, root
        self.reviews: list[ActionReview] = []
        self._after: dict[str, Any] | None = None  # the files after the last action: the next one's "before"

    def reset(self, task: str | None = None) -> Observation:
        self._after = None  # a reset may change the files: the next action compares afresh
        return self.inner.reset(task)

    def step(self, action: Action) -> StepResult:
        before = (self._after if self._after is not None else snapshot(self.root)) if self.root is not None else None
        result = self.inner.step(action)
        changed: list[str] = []
        removed: list[str] = []
        if before is not None and self.root is not None:
            self._after = snapshot(self.root)
            changed, removed = changed_files(before, self._after)
        view = ActionView(subtask=self.subtask, agent=self.agent, index=len(self.reviews) + 1, action=action.describe(),
                          report=_report(result), changed=tuple(changed), removed=tuple(removed))
        review = self.judge(view)
        self.reviews.append(ActionReview(view.index, view.action, review.verdict, review.reason, review.by))
        if review.verdict == "no":
            raise ActionRejected(f"the reviewer rejected action {view.index} ({clip(view.action, 120)}): {review.reason}")
        return result
