"""Parsing the sectioned replies (what a small model actually writes)."""

from __future__ import annotations

import pytest

from agentlab.agents.response import parse_act_reply, parse_reflect_reply, sections
from agentlab.envs.actions.phone import PHONE, Finish, Swipe, Tap
from agentlab.errors import ActionParseError


def test_sections_tolerate_markdown_and_case() -> None:
    s = sections("**Observation:** a list\n**thought**: go\n- Action: tap(3)\nSummary: did it\nAction: tap(9)")
    assert s == {"observation": "a list", "thought": "go", "action": "tap(3)", "summary": "did it"}


def test_act_reply_fields_and_fallbacks() -> None:
    r = parse_act_reply("Observation: x\nThought: y\nAction: swipe(2, 'up', 'short')\nSummary: z", PHONE)
    assert r.action == Swipe(2, "up", "short") and (r.observation, r.thought, r.summary) == ("x", "y", "z")
    assert parse_act_reply("I think I should tap(4) now.", PHONE).action == Tap(4)
    assert parse_act_reply("Thought: done\nAction: FINISH", PHONE).action == Finish()
    assert parse_act_reply("Action: the button\nbut really: tap(2)", PHONE).action == Tap(2)


@pytest.mark.parametrize(("reply", "needle"), [("", "empty reply"), ("I like turtles", "no 'Action:' line"),
                                               ("Action: tap(five)", "not a literal")])
def test_act_reply_errors_quote_the_reply(reply: str, needle: str) -> None:
    with pytest.raises(ActionParseError, match=needle):
        parse_act_reply(reply, PHONE)


def test_reflect_reply() -> None:
    r = parse_reflect_reply("Decision: **continue**\nThought: t\nDocumentation: Opens the alarm list.")
    assert (r.decision, r.documentation) == ("CONTINUE", "Opens the alarm list.")
    assert parse_reflect_reply("Decision: INEFFECTIVE").documentation == ""
    with pytest.raises(ActionParseError, match="no decision"):
        parse_reflect_reply("Documentation: x")
    with pytest.raises(ActionParseError, match="no 'Documentation:'"):
        parse_reflect_reply("Decision: SUCCESS\nThought: yes")
    assert parse_reflect_reply("Documentation: Deletes it.", need_decision=False).decision == ""
