"""The decision agent: reason about the current subtask, then one desktop action or "subtask done".

Each step it sees the subtask, the screen (:class:`~agentlab.agents.pcagent.perception.Perception`),
the progress agent's summary and the reflection agent's verdict on the last action, and
replies (``pcagent/decision``)::

    Thought: <reasoning>
    Action: click(3)                      # one call of the env's action space, or
    Action: subtask_done(name="Ada")      # the subtask is finished; its outputs for the hub

``stop()`` counts as ``subtask_done()`` without outputs. A subtask whose plan line names
outputs must give each of them. The action is carried out as the reply's last check (like
AppAgent's deploy loop), after :meth:`Perception.resolve` aimed it: an action the env refuses
(an unknown number, text not on screen) is fed back to the model as a problem, and nothing
was done then.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentlab.agents.asker import RoleAsker
from agentlab.agents.gui_actions import GuiCall, GuiChoices, GuiScreen, carry_out, constraint, parse_gui_reply
from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.agents.pcagent.intention import IntentionAgent
from agentlab.agents.pcagent.perception import Perception
from agentlab.agents.response import sections
from agentlab.dialogue.ask import AskResult, Attempt
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import SelectText
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.base import Env, StepResult, clip
from agentlab.errors import ActionParseError

_DONE = re.compile(r"\b(subtask_done|subtask_finished|finish_subtask|subtask_complete)\s*\(", re.I)


@dataclass(frozen=True)
class Decision:
    """A parsed reply: either an action, or the subtask's end with its output values."""

    thought: str
    action_text: str
    action: Action | None = None  #: None when the subtask is finished (or a typed call stands for it)
    outputs: dict[str, str] = field(default_factory=dict)
    #: the typed GUI call of a typed decision (``PCAgentConfig.actions = "typed"``)
    call: GuiCall | None = None

    @property
    def finished(self) -> bool:
        return self.call.terminal if self.call is not None else self.action is None


def _done_outputs(text: str, m: re.Match[str]) -> dict[str, str]:
    """The keyword arguments of ``subtask_done(...)`` (literals only, parsed with :mod:`ast`)."""
    rest = text[m.start():]
    for end in [i + 1 for i, c in enumerate(rest) if c == ")"]:
        snippet = "f" + rest[len(m.group(1)):end]
        try:
            call = ast.parse(snippet, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
            raise ActionParseError(f"write the outputs as name=\"value\" arguments: {clip(rest[:end], 200)!r}")
        out: dict[str, str] = {}
        for k in call.keywords:
            try:
                value = ast.literal_eval(k.value)
            except (ValueError, SyntaxError, TypeError):
                raise ActionParseError(f"output {k.arg} in {clip(rest[:end], 200)!r} is not a quoted value") from None
            out[str(k.arg)] = str(value)
        return out
    raise ActionParseError(f"cannot parse {clip(rest, 200)!r}: unbalanced parentheses")


def parse_decision(reply: str, space: ActionSpace) -> Decision:
    """Thought and Action sections -> :class:`Decision` (an action call anywhere in the reply counts)."""
    if not reply or not reply.strip():
        raise ActionParseError("the model returned an empty reply")
    sec = sections(reply)
    thought = sec.get("thought", "")
    action_text = sec.get("action", "") or reply.strip()
    for text in (action_text, reply):
        m = _DONE.search(text)
        if m:
            return Decision(thought, clip(text[m.start():], 300), None, _done_outputs(text, m))
    try:
        action = space.parse(action_text)
    except ActionParseError as exc:
        if action_text == reply.strip():
            raise ActionParseError(f"{exc.message} (reply: {clip(reply, 200)!r})") from None
        try:
            action = space.parse(reply)
        except ActionParseError:
            raise ActionParseError(f"{exc.message} (reply: {clip(reply, 200)!r})") from None
    if action.terminal:
        return Decision(thought, action_text, None, {})
    return Decision(thought, action_text, action)


@dataclass
class Carried:
    """What the last check did: the action as sent to the env, its OCR target and the env's result."""

    action: Action | None = None
    target: dict[str, Any] | None = None
    result: StepResult | None = None


class DecisionAgent:
    """Asks ``pcagent/decision`` until a reply parses, names the needed outputs and its action runs.
    ``intention``: the agent that locates a text selection OCR does not find verbatim (None: off)."""

    def __init__(self, asker: RoleAsker[PCAgentConfig], intention: IntentionAgent | None = None) -> None:
        self.asker = asker
        self.intention = intention

    def _intended(self, wrote: SelectText, action: Action, target: dict[str, Any] | None, subtask: str,
                  perception: Perception) -> tuple[Action, dict[str, Any] | None]:
        """The selection the intention agent located (the drag between the span's ends), or the
        action as OCR alone resolved it, with what the agent replied kept in the target either way."""
        assert self.intention is not None
        span, reply = self.intention.locate(wrote.text, subtask, perception.ocr)
        if span is None:
            return action, {**(target or {}), "intention": {"reply": clip(reply, 300), "located": False}}
        start, end = span.points
        x1, y1 = min(span.start.bbox[0], span.end.bbox[0]), span.start.bbox[1]
        x2 = max(span.start.bbox[0] + span.start.bbox[2], span.end.bbox[0] + span.end.bbox[2])
        y2 = span.end.bbox[1] + span.end.bbox[3]
        return (dataclasses.replace(wrote, start=start, end=end),
                {"ocr": f"{span.start.text} ... {span.end.text}", "bbox": [x1, y1, x2 - x1, y2 - y1],
                 "intention": {**span.record(), "reply": clip(reply, 300), "located": True}})

    def decide(
        self,
        env: Env,
        *,
        instruction: str,
        subtask: str,
        outputs: tuple[str, ...],
        perception: Perception,
        progress: str,
        reflection: str,
        on_attempt: Callable[[Attempt[Decision]], None] | None = None,
    ) -> tuple[AskResult[Decision], Carried]:
        space = env.actions
        carried = Carried()

        def needs_outputs(d: Decision) -> str | None:
            missing = [n for n in outputs if d.finished and n not in d.outputs]
            if missing:
                args = ", ".join(f'{n}="..."' for n in missing)
                return f"this subtask must report its outputs: write subtask_done({args}) with the values you found"
            return None

        def carry(d: Decision) -> None:
            carried.action = carried.target = carried.result = None
            if d.action is None:
                return
            action, target = perception.resolve(d.action)
            if self.intention is not None and isinstance(d.action, SelectText) and _needs_intention(d.action, target, perception):
                action, target = self._intended(d.action, action, target, subtask, perception)
            carried.action, carried.target = action, target
            carried.result = env.step(action)

        if self.asker.config.actions == "typed" and not outputs:
            return self._decide_typed(env, instruction=instruction, subtask=subtask, perception=perception,
                                      progress=progress, reflection=reflection, on_attempt=on_attempt)
        done_example = "subtask_done(" + ", ".join(f'{n}="<value>"' for n in outputs) + ")"
        fields = {
            "instruction": instruction, "subtask": subtask, "screen": perception.listing(),
            "actions": space.doc(), "example": space.example(), "progress": progress,
            "reflection": reflection, "done_example": done_example,
            "outputs": ", ".join(outputs) if outputs else "none",
        }
        shot = perception.marked_screenshot()
        asked = self.asker.ask(
            "decision", "pcagent/decision", fields, lambda reply: parse_decision(reply, space),
            images=[shot], checks=[needs_outputs, carry], on_attempt=on_attempt,
        )
        return asked, carried

    def _decide_typed(self, env: Env, *, instruction: str, subtask: str, perception: Perception, progress: str,
                      reflection: str, on_attempt: Callable[[Attempt[Decision]], None] | None
                      ) -> tuple[AskResult[Decision], Carried]:
        """One typed GUI call over this screen's marks (the accessibility elements; the OCR lines
        when there are none), grounded on the subtask's and the instruction's words. ``done()`` ends
        the subtask; ``fail(reason)`` ends it too, the reason kept as the thought (PC-Agent has no
        give-up of its own: the next subtask, or the end check, sees what was not done)."""
        screen = typed_screen(perception)
        choices = GuiChoices.build(screen, f"{subtask}\n{instruction}")
        carried = Carried()

        def parse(reply: str) -> Decision:
            call = parse_gui_reply(reply, choices)
            thought = f"gave up: {call.args.get('reason', '')}" if call.name == "fail" else ""
            return Decision(thought, clip(reply.strip(), 300), None, {}, call=call)

        def carry(d: Decision) -> None:
            carried.action = carried.target = carried.result = None
            if d.call is None or d.call.terminal:
                return
            done = carry_out(env, d.call, screen)
            carried.action = done.actions[-1] if done.actions else None
            carried.result = done.result

        fields = {"instruction": instruction, "subtask": subtask, "screen": screen.listing(),
                  "actions": choices.doc(allow_end=True), "example": choices.example(),
                  "progress": progress, "reflection": reflection}
        llm = self.asker.llm_for(self.asker.model_role("decision"))
        asked = self.asker.ask(
            "decision", "pcagent/decision_typed", fields, parse, images=[perception.marked_screenshot()],
            checks=[carry], on_attempt=on_attempt, constraint=constraint(llm, choices, allow_end=True),
        )
        return asked, carried


def _needs_intention(wrote: Action, target: dict[str, Any] | None, perception: Perception) -> bool:
    """A selection by description (text, no points, no element) that OCR did not find word for
    word, on a screen with OCR text: the case the paper's intention understanding agent is for."""
    return (isinstance(wrote, SelectText) and bool(wrote.text) and wrote.start is None and wrote.element is None
            and bool(perception.ocr) and (target is None or float(target.get("score", 0.0)) < 1.0))


def typed_screen(perception: Perception) -> GuiScreen:
    """The marks a typed decision may act on: the listed accessibility elements, or the OCR text
    lines (clicked at their centre) when the screen has no elements."""
    if perception.elements or not perception.items:
        return GuiScreen(perception.observation, list(perception.elements))
    return GuiScreen(perception.observation, [i.as_element() for i in perception.items], ocr=True)
