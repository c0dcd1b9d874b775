"""The action dataclasses and the two textual parsers (no device needed)."""

from __future__ import annotations

import pytest

from agentlab.envs import actions as A
from agentlab.errors import ActionParseError


@pytest.mark.parametrize("space", [A.PHONE, A.DESKTOP])
def test_every_documented_example_parses_to_its_class(space: str) -> None:
    doc = A.action_space_doc(space)
    for cls in A.action_classes(space):
        example = A.docstring_example(cls)
        assert example, f"{cls.__name__} docstring has no 'e.g.' example"
        assert example in doc
        action = A.parse_action(example, space)
        assert type(action) is cls


SAMPLES = [
    (A.PHONE, A.Tap(element=5)),
    (A.PHONE, A.LongPress(element=2)),
    (A.PHONE, A.Swipe(element=3, direction="Left", distance="long")),
    (A.PHONE, A.Text("it's \"quoted\" (and parenthesised) — ünïcode")),
    (A.PHONE, A.Back()),
    (A.PHONE, A.Finish()),
    (A.DESKTOP, A.Click(element=4)),
    (A.DESKTOP, A.Click(x=10, y=20)),
    (A.DESKTOP, A.DoubleClick(x=1, y=2)),
    (A.DESKTOP, A.Type("hello world", element=3)),
    (A.DESKTOP, A.SelectText("last paragraph")),
    (A.DESKTOP, A.SelectText(start=(1, 2), end=(30, 40))),
    (A.DESKTOP, A.Drag(source=1, end=(5, 6))),
    (A.DESKTOP, A.Scroll("up", 2, element=7)),
    (A.DESKTOP, A.Scroll("down", 1, x=100, y=200)),
    (A.DESKTOP, A.Hotkey("ctrl", "shift+t")),
    (A.DESKTOP, A.Stop()),
]


@pytest.mark.parametrize(("space", "action"), SAMPLES, ids=lambda v: getattr(v, "call_name", v))
def test_round_trips_through_text_and_dict(space: str, action: A.Action) -> None:
    assert A.parse_action(action.to_call(), space) == action
    assert A.Action.from_dict(action.to_dict()) == action
    assert action.describe()


def test_exit_alias_and_terminal_flags() -> None:
    assert A.Exit is A.Finish
    assert A.Finish.terminal and A.Stop.terminal and not A.Tap.terminal
    assert A.Hotkey("ctrl+s").keys == ("ctrl", "s")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Action: Tap(5)", A.Tap(5)),
        ("```\ntap( 12 )\n```", A.Tap(12)),
        ("FINISH", A.Finish()),
        ("Action: FINISH", A.Finish()),
        ("I see the text (title) so I tap(3)", A.Tap(3)),
        ('swipe(4, "UP")', A.Swipe(4, "up", "medium")),
        ("long press(2)", A.LongPress(2)),
        ("exit", A.Finish()),
    ],
)
def test_phone_parser_tolerates_model_formatting(text: str, expected: A.Action) -> None:
    assert A.parse_phone_action(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("double click(3)", A.DoubleClick(element=3)),
        ("Click(100, 200)", A.Click(x=100, y=200)),
        ("click((100, 200))", A.Click(x=100, y=200)),
        ("scroll(-3)", A.Scroll("down", 3)),
        ('scroll(4, "up", 2)', A.Scroll("up", 2, element=4)),
        ("drag(1, 2, 3, 4)", A.Drag(start=(1, 2), end=(3, 4))),
        ('select text("foo")', A.SelectText("foo")),
        ('type(3, "abc")', A.Type("abc", element=3)),
        ('press("Enter")', A.Hotkey("enter")),
        ("STOP", A.Stop()),
    ],
)
def test_desktop_parser_forms(text: str, expected: A.Action) -> None:
    assert A.parse_desktop_action(text) == expected


@pytest.mark.parametrize(
    ("space", "text", "needle"),
    [
        (A.PHONE, "", "empty action"),
        (A.PHONE, "I am not sure what to do", "no phone action found"),
        (A.PHONE, "click(3)", "click is not a phone action"),
        (A.PHONE, "tap(five)", "'five'"),
        (A.PHONE, 'swipe(2, "north")', "direction must be one of"),
        (A.PHONE, "tap(3", "unbalanced"),
        (A.PHONE, 'tap(__import__("os").system("true"))', "not a literal"),
        (A.DESKTOP, "click()", "either an element number or both x and y"),
        (A.DESKTOP, "tap(3)", "tap is not a desktop action"),
        (A.DESKTOP, "hotkey()", "at least one key"),
        (A.DESKTOP, "scroll(0)", "does nothing"),
    ],
)
def test_parse_errors_name_the_text(space: str, text: str, needle: str) -> None:
    with pytest.raises(ActionParseError) as info:
        A.parse_action(text, space)
    assert needle in str(info.value)


def test_from_dict_rejects_unknown_type() -> None:
    with pytest.raises(ActionParseError, match="unknown action type"):
        A.Action.from_dict({"type": "teleport"})
