"""Agent S2's worker: one subgoal, one semantic action per turn, grounded and carried out.

Each turn the worker sees the task, its subgoal, what it did so far on that subgoal and the
screen (the screenshot for a model that takes images, else elements and OCR lines), and
answers ``Thought: ... / Action: <one call>`` (:mod:`agentlab.agents.s2.actions`). The reply is
accepted only once it parses, its expert can ground it on this screen and the env carried it
out; every problem on the way (no such element, words not on screen, an ablated expert, a
refused key) is fed back for the next attempt, at most ``max_retries`` times.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentlab.agents.response import sections
from agentlab.agents.s2.actions import SemanticAction, actions_doc, parse_semantic
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import S2Config
from agentlab.agents.s2.grounding import CarriedOut, Grounded, Mixture
from agentlab.agents.s2.screen import Screen
from agentlab.dialogue.ask import AskResult, Attempt
from agentlab.errors import ActionParseError


@dataclass(frozen=True)
class WorkerReply:
    thought: str
    action: SemanticAction
    action_text: str


def parse_worker_reply(reply: str) -> WorkerReply:
    """``Thought:`` and ``Action:`` sections (headers optional; the first call anywhere counts)."""
    if not reply or not reply.strip():
        raise ActionParseError("the model returned an empty reply")
    sec = sections(reply)
    text = sec.get("action", "")
    try:
        action = parse_semantic(text) if text else parse_semantic(reply)
    except ActionParseError:
        if not text:
            raise
        action = parse_semantic(reply)
    return WorkerReply(sec.get("thought", ""), action, text or reply.strip())


@dataclass
class Turn:
    """One accepted worker turn (or none): the reply, its grounding and what acting did."""

    asked: AskResult[WorkerReply]
    grounded: Grounded | None = None
    outcome: CarriedOut | None = None

    @property
    def reply(self) -> WorkerReply | None:
        return self.asked.value


@dataclass
class _Act:
    """The last check on a reply: ground it on this screen, then carry it out."""

    mixture: Mixture
    screen: Screen
    grounded: Grounded | None = None
    outcome: CarriedOut | None = None

    def __call__(self, parsed: WorkerReply) -> None:
        self.grounded = self.outcome = None
        if parsed.action.terminal:
            return
        self.grounded = self.mixture.ground(parsed.action, self.screen)
        self.outcome = self.mixture.carry_out(self.grounded)


class Worker:
    """Carries subgoals out on one env through the run's experts."""

    def __init__(self, asker: RoleAsker[S2Config], mixture: Mixture, task: str) -> None:
        self.asker = asker
        self.mixture = mixture
        self.task = task

    def turn(self, screen: Screen, subgoal: str, *, done: list[str], history: list[str],
             on_attempt: Callable[[Attempt[WorkerReply]], None] | None = None) -> Turn:
        """Ask for, ground and carry out one action towards ``subgoal``."""
        cfg = self.asker.config
        act = _Act(self.mixture, screen)
        fields = {
            "task": self.task,
            "subgoal": subgoal,
            "done": "\n".join(f"- {d}" for d in done) or "(none yet)",
            "history": "\n".join(f"{i}. {h}" for i, h in enumerate(history, 1)) or "(nothing yet)",
            "observation": "(the screenshot is attached)" if self.asker.sees_images("worker")
            else screen.text(cfg.max_elements, cfg.ocr),
            "actions": actions_doc(cfg.experts),
        }
        asked = self.asker.ask("worker", "s2/worker", fields, parse_worker_reply, checks=[act],
                               images=[screen.obs.screenshot], on_attempt=on_attempt)
        return Turn(asked, act.grounded if asked.ok else None, act.outcome if asked.ok else None)
