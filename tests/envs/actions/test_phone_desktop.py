"""The action dataclasses and the two textual parsers (no device needed)."""

from __future__ import annotations

import pytest

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import DESKTOP, Click, DoubleClick, Drag, Hotkey, Scroll, SelectText, Stop, Type
from agentlab.envs.actions.phone import PHONE, Back, Exit, Finish, LongPress, Swipe, Tap, Text
from agentlab.envs.actions.space import ActionSpace
from agentlab.errors import ActionParseError


@pytest.mark.parametrize("space", [PHONE, DESKTOP])
def test_every_documented_example_parses_to_its_class(space: ActionSpace) -> None:
    doc = space.doc()
    for cls in space.classes:
        example = cls.doc_example()
        assert example, f"{cls.__name__} docstring has no 'e.g.' example"
        assert example in doc
        action = space.parse(example)
        assert type(action) is cls


SAMPLES = [
    (PHONE, Tap(element=5)),
    (PHONE, LongPress(element=2)),
    (PHONE, Swipe(element=3, direction="Left", distance="long")),
    (PHONE, Text("it's \"quoted\" (and parenthesised) — ünïcode")),
    (PHONE, Back()),
    (PHONE, Finish()),
    (DESKTOP, Click(element=4)),
    (DESKTOP, Click(x=10, y=20)),
    (DESKTOP, DoubleClick(x=1, y=2)),
    (DESKTOP, Type("hello world", element=3)),
    (DESKTOP, SelectText("last paragraph")),
    (DESKTOP, SelectText(start=(1, 2), end=(30, 40))),
    (DESKTOP, Drag(source=1, end=(5, 6))),
    (DESKTOP, Scroll("up", 2, element=7)),
    (DESKTOP, Scroll("down", 1, x=100, y=200)),
    (DESKTOP, Hotkey("ctrl", "shift+t")),
    (DESKTOP, Stop()),
]


@pytest.mark.parametrize(("space", "action"), SAMPLES, ids=lambda v: getattr(v, "call_name", v))
def test_round_trips_through_text_and_dict(space: ActionSpace, action: Action) -> None:
    assert space.parse(action.to_call()) == action
    assert Action.from_dict(action.to_dict()) == action
    assert action.describe()


def test_exit_alias_and_terminal_flags() -> None:
    assert Exit is Finish
    assert Finish.terminal and Stop.terminal and not Tap.terminal
    assert Hotkey("ctrl+s").keys == ("ctrl", "s")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Action: Tap(5)", Tap(5)),
        ("```\ntap( 12 )\n```", Tap(12)),
        ("FINISH", Finish()),
        ("Action: FINISH", Finish()),
        ("I see the text (title) so I tap(3)", Tap(3)),
        ('swipe(4, "UP")', Swipe(4, "up", "medium")),
        ("long press(2)", LongPress(2)),
        ("exit", Finish()),
    ],
)
def test_phone_parser_tolerates_model_formatting(text: str, expected: Action) -> None:
    assert PHONE.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("double click(3)", DoubleClick(element=3)),
        ("Click(100, 200)", Click(x=100, y=200)),
        ("click((100, 200))", Click(x=100, y=200)),
        ("scroll(-3)", Scroll("down", 3)),
        ('scroll(4, "up", 2)', Scroll("up", 2, element=4)),
        ("drag(1, 2, 3, 4)", Drag(start=(1, 2), end=(3, 4))),
        ('select text("foo")', SelectText("foo")),
        ('type(3, "abc")', Type("abc", element=3)),
        ('press("Enter")', Hotkey("enter")),
        ("STOP", Stop()),
    ],
)
def test_desktop_parser_forms(text: str, expected: Action) -> None:
    assert DESKTOP.parse(text) == expected


@pytest.mark.parametrize(
    ("space", "text", "needle"),
    [
        (PHONE, "", "empty action"),
        (PHONE, "I am not sure what to do", "no phone action found"),
        (PHONE, "click(3)", "click is not a phone action"),
        (PHONE, "tap(five)", "'five'"),
        (PHONE, 'swipe(2, "north")', "direction must be one of"),
        (PHONE, "tap(3", "unbalanced"),
        (PHONE, 'tap(__import__("os").system("true"))', "not a literal"),
        (DESKTOP, "click()", "either an element number or both x and y"),
        (DESKTOP, "tap(3)", "tap is not a desktop action"),
        (DESKTOP, "hotkey()", "at least one key"),
        (DESKTOP, "scroll(0)", "does nothing"),
    ],
)
def test_parse_errors_name_the_text(space: ActionSpace, text: str, needle: str) -> None:
    with pytest.raises(ActionParseError) as info:
        space.parse(text)
    assert needle in str(info.value)


def test_from_dict_rejects_unknown_type() -> None:
    with pytest.raises(ActionParseError, match="unknown action type"):
        Action.from_dict({"type": "teleport"})
