"""A desktop task's GUI reference solution: the steps a person takes on screen (tests only).

A task file's optional ``gui_solution`` is a list of steps in the desktop action space, aimed at
elements by their accessible role and name rather than at pixels, so that it replays on a fresh
screen whatever the element numbers are::

    "gui_solution": [
      {"key": "ctrl+d"},
      {"click": {"role": "push button", "name": "Done"}},
      {"wait": {"role": "push button", "name": "Edit bookmark for this tab"}},
      {"type": "Total\\t60\\n", "into": {"role": "text", "name": "A1"}},
      {"sleep": 1.5}
    ]

Each step holds exactly one of ``click``, ``double_click``, ``drag`` (``to``: where to drop), ``type`` (``into``: the element to click
first), ``key`` (``"ctrl+s"``), ``wait`` (until the element is on screen) and ``sleep`` (seconds).
A step aimed at an element waits for it up to ``timeout_s``. Like ``reference_solution`` it exists
to prove the task solvable (``agentlab tasks check --gui`` replays it through the desktop env) and
is never shown to an agent.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: ``long_press`` and ``spin`` are a phone's (a row held to select it; a number picker swiped to a
#: value): a desktop replay refuses them in one line
ACTIONS = ("click", "double_click", "drag", "type", "key", "wait", "gone", "sleep", "long_press", "spin")
PHONE_ONLY = frozenset({"long_press", "spin"})


class Target(BaseModel):
    """An element on screen by its accessible role and name (the ``nth`` match, top-to-bottom)."""

    model_config = ConfigDict(extra="forbid")

    role: str | None = None
    name: str | None = None  #: the element's label, exactly (spaces at the ends ignored)
    contains: str | None = None  #: a part of its label
    pattern: str | None = None  #: a regular expression its whole label matches
    nth: int = 0  #: which match, counting from 0 (negative: from the last)

    @model_validator(mode="after")
    def _something(self) -> Target:
        if self.role is None and self.name is None and self.contains is None and self.pattern is None:
            raise ValueError("a target needs a role, a name, contains or pattern")
        if self.pattern is not None:
            re.compile(self.pattern)
        return self

    def matches(self, role: str, text: str) -> bool:
        text = text.strip()
        return ((self.role is None or role == self.role)
                and (self.name is None or text == self.name)
                and (self.contains is None or self.contains in text)
                and (self.pattern is None or re.fullmatch(self.pattern, text) is not None))

    def describe(self) -> str:
        parts = [self.role or "element"]
        if self.name is not None:
            parts.append(repr(self.name))
        if self.contains is not None:
            parts.append(f"containing {self.contains!r}")
        if self.pattern is not None:
            parts.append(f"matching /{self.pattern}/")
        if self.nth:
            parts.append(f"(match {self.nth})")
        return " ".join(parts)


class GuiStep(BaseModel):
    """One step of a GUI solution (exactly one action key)."""

    model_config = ConfigDict(extra="forbid")

    click: Target | None = None
    double_click: Target | None = None
    drag: Target | None = None
    to: Target | None = None  #: with ``drag``: the element to drop on
    type: str | None = None
    into: Target | None = None  #: with ``type``: click this element first
    key: str | None = None  #: keys pressed together, "ctrl+s"
    wait: Target | None = None  #: until this element is on screen
    gone: Target | None = None  #: until this element is no longer on screen
    sleep: float | None = Field(None, ge=0, le=60)
    long_press: Target | None = None  #: press and hold (a phone's list row, to select it)
    spin: Target | None = None  #: swipe this number picker until it shows ``value``'s number
    value: str | None = None  #: with ``spin``: "09:00", "9 pm", "7"
    timeout_s: float = Field(30.0, gt=0, le=300)  #: how long to wait for the target

    @model_validator(mode="after")
    def _one_action(self) -> GuiStep:
        given = [a for a in ACTIONS if getattr(self, a) is not None]
        if len(given) != 1:
            raise ValueError(f"a GUI step holds exactly one of {', '.join(ACTIONS)}; this one has "
                             f"{', '.join(given) or 'none'}")
        if self.into is not None and self.type is None:
            raise ValueError("'into' goes with 'type'")
        if (self.value is None) != (self.spin is None):
            raise ValueError("'spin' and 'value' go together: spin a number picker to a value")
        if (self.to is None) != (self.drag is None):
            raise ValueError("'drag' and 'to' go together: drag an element to another")
        return self

    @property
    def action(self) -> str:
        return next(a for a in ACTIONS if getattr(self, a) is not None)

    @property
    def target(self) -> Target | None:
        value: Any = getattr(self, self.action)
        return value if isinstance(value, Target) else self.into

    def describe(self) -> str:
        act = self.action
        if act == "spin":
            assert self.spin is not None
            return f"spin {self.spin.describe()} to {self.value!r}"
        if act in ("click", "double_click", "wait", "gone", "long_press"):
            assert self.target is not None
            return f"{act} {self.target.describe()}"
        if act == "drag":
            assert self.drag is not None and self.to is not None
            return f"drag {self.drag.describe()} to {self.to.describe()}"
        if act == "type":
            where = f" into {self.into.describe()}" if self.into is not None else ""
            return f"type {self.type!r}{where}"
        if act == "key":
            return f"key {self.key}"
        return f"sleep {self.sleep}s"
