"""AppAgent's phone action space: tap, long_press, swipe, text, back, exit (FINISH).

Element numbers refer to the set-of-marks labels of the current screen
(:class:`~agentlab.envs.base.Observation`); :class:`~agentlab.envs.android.AndroidEnv` carries
the actions out over adb.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agentlab.envs.actions.base import DIRECTIONS, Action, lit, need_int, need_str
from agentlab.envs.actions.space import ActionSpace
from agentlab.errors import ActionParseError

PHONE = ActionSpace("phone", "AppAgent's phone actions")

DISTANCES = ("short", "medium", "long")


@PHONE.action("tap")
@dataclass(frozen=True)
class Tap(Action):
    """tap(element: int) - tap the UI element labelled with that number, e.g. tap(5)."""

    element: int

    def __post_init__(self) -> None:
        need_int(self.element, "tap: element")

    def describe(self) -> str:
        return f"tap element {self.element}"


@PHONE.action("long_press")
@dataclass(frozen=True)
class LongPress(Action):
    """long_press(element: int) - press and hold the labelled element for about a second, e.g. long_press(5)."""

    element: int

    def __post_init__(self) -> None:
        need_int(self.element, "long_press: element")

    def describe(self) -> str:
        return f"long-press element {self.element}"


@PHONE.action("swipe")
@dataclass(frozen=True)
class Swipe(Action):
    """swipe(element: int, direction: "up"|"down"|"left"|"right", distance: "short"|"medium"|"long") - swipe on the labelled element, e.g. swipe(21, "up", "medium")."""

    element: int
    direction: str
    distance: str = "medium"

    def __post_init__(self) -> None:
        need_int(self.element, "swipe: element")
        d = need_str(self.direction, "swipe: direction").strip().lower()
        s = need_str(self.distance, "swipe: distance").strip().lower()
        if d not in DIRECTIONS:
            raise ActionParseError(f"swipe: direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}")
        if s not in DISTANCES:
            raise ActionParseError(f"swipe: distance must be one of {', '.join(DISTANCES)}, got {self.distance!r}")
        object.__setattr__(self, "direction", d)
        object.__setattr__(self, "distance", s)

    def to_call(self) -> str:
        return f"swipe({self.element}, {lit(self.direction)}, {lit(self.distance)})"

    def describe(self) -> str:
        return f"swipe {self.direction} ({self.distance}) on element {self.element}"


@PHONE.action("text", "input_text")
@dataclass(frozen=True)
class Text(Action):
    """text(text: str) - type text into the focused input field (a keyboard is showing), e.g. text("Hello, world!")."""

    text: str

    def __post_init__(self) -> None:
        need_str(self.text, "text: text")

    def describe(self) -> str:
        return f"type {lit(self.text)}"


@PHONE.action("back")
@dataclass(frozen=True)
class Back(Action):
    """back() - press the system Back button to return to the previous page, e.g. back()."""

    def describe(self) -> str:
        return "press Back"


@PHONE.action("exit", "finish")
@dataclass(frozen=True)
class Finish(Action):
    """exit() - the task is complete; end the episode (FINISH also works), e.g. exit()."""

    terminal: ClassVar[bool] = True

    def describe(self) -> str:
        return "finish"


#: AppAgent calls it Exit(); both names refer to the same action.
Exit = Finish
