"""Agent S2's worker: one subgoal, one semantic action per turn, grounded and carried out.

Each turn the worker sees the task, its subgoal, what it did so far on that subgoal and the
screen (the screenshot for a model that takes images, else elements and OCR lines), and
answers ``Thought: ... / Action: <one call>`` (:mod:`agentlab.agents.s2.actions`). The reply is
accepted only once it parses, its expert can ground it on this screen and the env carried it
out; every problem on the way (no such element, words not on screen, an ablated expert, a
refused key) is fed back for the next attempt, at most ``max_retries`` times.

With ``actions: typed`` the worker instead answers one typed GUI call over the screen's numbered
marks (:mod:`agentlab.agents.gui_actions`, the desktop specialists' space): a local model decodes
it under the screen's grammar, an endpoint gets it as tools, and the call is carried out as it
stands (the mark *is* the grounding, so no expert is asked). The paper's worker names elements in
words because its grounding models place them; a 135M model cannot describe an element it then
finds, but it can pick one of the numbers it is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentlab.agents.gui_actions import GuiCall, GuiChoices, GuiScreen, carry_out, constraint, parse_gui_reply
from agentlab.agents.response import sections
from agentlab.agents.s2.actions import Fail, SemanticAction, actions_doc, parse_semantic
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import S2Config
from agentlab.agents.s2.grounding import CarriedOut, Grounded, Mixture
from agentlab.agents.s2.screen import Screen
from agentlab.dialogue.ask import AskResult, Attempt
from agentlab.envs.base import Env, clip
from agentlab.errors import ActionParseError


@dataclass(frozen=True)
class WorkerReply:
    """One accepted reply: a semantic action (the paper's worker) or a typed GUI call."""

    thought: str
    action: SemanticAction | None
    action_text: str
    call: GuiCall | None = None

    @property
    def terminal(self) -> bool:
        """``done()`` or ``fail(...)``: the subgoal ends."""
        return self.call.terminal if self.call is not None else bool(self.action and self.action.terminal)

    @property
    def call_text(self) -> str:
        if self.call is not None:
            return self.call.render()
        assert self.action is not None
        return self.action.to_call()

    @property
    def fail_reason(self) -> str:
        """Why the worker gave up on the subgoal ("" when it did not)."""
        if self.call is not None:
            return (str(self.call.args.get("reason", "")) or "gave up") if self.call.name == "fail" else ""
        return self.action.reason if isinstance(self.action, Fail) else ""


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
        if parsed.terminal or parsed.action is None:
            return
        self.grounded = self.mixture.ground(parsed.action, self.screen)
        self.outcome = self.mixture.carry_out(self.grounded)


@dataclass
class _ActTyped:
    """The last check on a typed reply: carry the call out on the marks it was chosen from."""

    env: Env
    screen: GuiScreen
    grounded: Grounded | None = None
    outcome: CarriedOut | None = None

    def __call__(self, parsed: WorkerReply) -> None:
        self.grounded = self.outcome = None
        if parsed.call is None or parsed.call.terminal:
            return
        done = carry_out(self.env, parsed.call, self.screen)
        mark = parsed.call.args.get("element")
        target = self.screen.mark(mark).label() if isinstance(mark, int) else parsed.call.render()
        self.grounded = Grounded(None, target, None, list(done.actions))
        assert done.result is not None  # a non-terminal call steps the env at least once
        info: dict[str, Any] = dict(done.result.info)
        if len(done.actions) > 1:
            info["actions"] = [a.describe() for a in done.actions]
        self.outcome = CarriedOut(done.result.observation, info)


class Worker:
    """Carries subgoals out on one env through the run's experts."""

    def __init__(self, asker: RoleAsker[S2Config], mixture: Mixture, task: str) -> None:
        self.asker = asker
        self.mixture = mixture
        self.task = task

    def _fields(self, subgoal: str, done: list[str], history: list[str]) -> dict[str, str]:
        return {
            "task": self.task,
            "subgoal": subgoal,
            "done": "\n".join(f"- {d}" for d in done) or "(none yet)",
            "history": "\n".join(f"{i}. {h}" for i, h in enumerate(history, 1)) or "(nothing yet)",
        }

    def turn(self, screen: Screen, subgoal: str, *, done: list[str], history: list[str],
             on_attempt: Callable[[Attempt[WorkerReply]], None] | None = None) -> Turn:
        """Ask for, ground and carry out one action towards ``subgoal``."""
        cfg = self.asker.config
        if cfg.actions == "typed":
            return self._typed_turn(screen, subgoal, done=done, history=history, on_attempt=on_attempt)
        act = _Act(self.mixture, screen)
        fields = {
            **self._fields(subgoal, done, history),
            "observation": "(the screenshot is attached)" if self.asker.sees_images("worker")
            else screen.text(cfg.max_elements, cfg.ocr),
            "actions": actions_doc(cfg.experts),
        }
        asked = self.asker.ask("worker", "s2/worker", fields, parse_worker_reply, checks=[act],
                               images=[screen.obs.screenshot], on_attempt=on_attempt)
        return Turn(asked, act.grounded if asked.ok else None, act.outcome if asked.ok else None)

    def _typed_turn(self, screen: Screen, subgoal: str, *, done: list[str], history: list[str],
                    on_attempt: Callable[[Attempt[WorkerReply]], None] | None) -> Turn:
        """One typed GUI call over this screen's marks, grounded on the subgoal's and the task's words."""
        cfg = self.asker.config
        gui = GuiScreen.of(screen.obs, cfg.max_elements, ocr=cfg.ocr)
        choices = GuiChoices.build(gui, f"{subgoal}\n{self.task}")
        act = _ActTyped(self.mixture.env, gui)

        def parse(reply: str) -> WorkerReply:
            call = parse_gui_reply(reply, choices)
            return WorkerReply("", None, clip(reply.strip(), 300), call=call)

        fields = {**self._fields(subgoal, done, history), "screen": gui.listing(),
                  "actions": choices.doc(allow_end=True), "example": choices.example()}
        llm = self.asker.llm_for(self.asker.model_role("worker"))
        asked = self.asker.ask("worker", "s2/worker_typed", fields, parse, checks=[act],
                               images=[screen.obs.screenshot], on_attempt=on_attempt,
                               constraint=constraint(llm, choices, allow_end=True))
        return Turn(asked, act.grounded if asked.ok else None, act.outcome if asked.ok else None)
