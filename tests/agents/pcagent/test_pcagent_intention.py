"""PC-Agent's intention understanding agent (active perception, the paper's Figure 3): a text
selection by description is located by asking for the span's first and last words among the OCR
lines, then OCR gives both ends. Scripted role replies (TEST DOUBLE backend); real OCR boxes."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from agentlab.agents.asker import RoleAsker
from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.agents.pcagent.decision import DecisionAgent
from agentlab.agents.pcagent.intention import IntentionAgent, parse_span
from agentlab.agents.pcagent.perception import Perception, TextItem
from agentlab.envs.actions.desktop import DESKTOP, SelectText
from agentlab.envs.base import Observation, StepResult
from agentlab.envs.ocr import OcrBox, group_lines
from agentlab.errors import ActionParseError

PARAGRAPHS = [("Dear", "team,"), ("The", "budget", "is", "final."), ("Please", "review", "it."), ("Thanks", "again.")]


def _ocr() -> list[OcrBox]:
    words = []
    for row, line in enumerate(PARAGRAPHS):
        x = 20
        for w in line:
            words.append(OcrBox(w, (x, 40 + 30 * row, 10 * len(w), 12), 90.0))
            x += 10 * len(w) + 8
    return words + group_lines(words)


def _perception() -> Perception:
    ocr = _ocr()
    obs = Observation(screenshot=Image.new("RGB", (400, 300), "white"), elements=[])
    return Perception(obs, 50, ocr=ocr, items=[TextItem(1 + i, b) for i, b in enumerate(b for b in ocr if b.level == "line")])


def _asker(llm: Any) -> RoleAsker[PCAgentConfig]:
    return RoleAsker(llm, PCAgentConfig(max_retries=2), system="pcagent/system", correction="pcagent/correction")


def test_the_reply_names_where_the_span_starts_and_ends() -> None:
    assert parse_span("Start: \"Please review\"\nEnd: Thanks again.") == ("Please review", "Thanks again.")
    assert parse_span("**Start:** The budget\n**End:** final.") == ("The budget", "final.")
    with pytest.raises(ActionParseError, match="no end line"):
        parse_span("Start: Please")


def test_the_span_is_located_by_ocr_and_a_reply_off_screen_or_backwards_is_asked_again(role_scripted) -> None:
    llm = role_scripted(intention=["Start: the last two paragraphs\nEnd: the end",  # not on screen
                                   "Start: Thanks again.\nEnd: Please review",          # the end before the start
                                   "Start: Please review\nEnd: Thanks again."])
    span, reply = IntentionAgent(_asker(llm)).locate("the last two paragraphs", "Make the last two paragraphs bold", _ocr())
    assert span is not None and reply.startswith("Start: Please review")
    assert span.points == ((21, 106), (147, 136))  # inside 'Please' ... inside the right edge of 'again.'
    assert (span.start.text, span.end.text) == ("Please review", "Thanks again.")
    prompts = llm.asked("intention")
    assert "The decision agent wants to select: the last two paragraphs" in prompts[0]
    assert "Please review it." in prompts[0] and "Thanks again." in prompts[0]  # the OCR lines
    assert "not on the screen" in prompts[1] and "the end must come after the start" in prompts[2]


def test_nothing_located_after_the_retries_leaves_the_selection_as_written(role_scripted) -> None:
    llm = role_scripted(intention=["no idea"] * 3)
    span, reply = IntentionAgent(_asker(llm)).locate("the signature", "Bold the signature", _ocr())
    assert span is None and reply == "no idea" and len(llm.asked("intention")) == 3
    assert IntentionAgent(_asker(role_scripted())).locate("x", "y", [])[0] is None  # no OCR text: nothing asked


class _Env:
    """TEST DOUBLE for the desktop env: takes any action of the desktop space and keeps it."""

    actions = DESKTOP

    def __init__(self) -> None:
        self.done: list[Any] = []

    def step(self, action: Any) -> StepResult:
        self.done.append(action)
        return StepResult(Observation(screenshot=Image.new("RGB", (400, 300), "white"), elements=[]), False)


def _decide(llm: Any, intention: bool) -> tuple[Any, Any, _Env]:
    env = _Env()
    asker = _asker(llm)
    agent = DecisionAgent(asker, IntentionAgent(asker) if intention else None)
    asked, carried = agent.decide(env, instruction="Make the last two paragraphs bold.", subtask="Bold them",  # type: ignore[arg-type]
                                  outputs=(), perception=_perception(), progress="", reflection="")
    return asked, carried, env


def test_a_selection_by_description_becomes_a_drag_between_the_ends_the_intention_agent_found(role_scripted) -> None:
    llm = role_scripted(decision=['Thought: select them.\nAction: select_text("the last two paragraphs")'],
                        intention=["Start: Please\nEnd: again."])
    _, carried, env = _decide(llm, intention=True)
    sent = env.done[0]
    assert isinstance(sent, SelectText) and (sent.start, sent.end) == ((21, 106), (147, 136))
    assert carried.target["intention"]["located"] is True and carried.target["ocr"] == "Please ... again."
    # quoted words OCR finds exactly need no intention agent: nothing more is asked
    quoted = role_scripted(decision=['Action: select_text("The budget is final.")'])
    _, carried, env = _decide(quoted, intention=True)
    assert [r for r, _ in quoted.calls] == ["decision"] and env.done[0].start == (21, 76)
    assert "intention" not in (carried.target or {})


def test_without_the_intention_agent_the_description_goes_to_the_env_as_written(role_scripted) -> None:
    llm = role_scripted(decision=['Action: select_text("the last two paragraphs")'])
    _, carried, env = _decide(llm, intention=False)
    assert env.done[0] == SelectText("the last two paragraphs") and [r for r, _ in llm.calls] == ["decision"]
