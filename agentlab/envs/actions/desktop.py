"""PC-Agent's desktop action space: click, double_click, type, select_text, drag, scroll,
hotkey, stop.

Pointer actions aim at a numbered element (accessibility tree or grid cell) or at screen
coordinates; :class:`~agentlab.envs.desktop.DesktopEnv` carries them out with pyautogui.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from agentlab.envs.actions.base import DIRECTIONS, Action, as_point, is_int, lit, need_int, need_str
from agentlab.envs.actions.space import ActionSpace
from agentlab.errors import ActionParseError

DESKTOP = ActionSpace("desktop", "PC-Agent's desktop actions")


def _target_from_args(cls_name: str, args: list[Any]) -> dict[str, Any]:
    """``f(5)`` -> element 5; ``f(100, 200)`` or ``f((100, 200))`` -> coordinates."""
    if len(args) == 1 and is_int(args[0]):
        return {"element": args[0]}
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        p = as_point(args[0], f"{cls_name}: point")
        assert p is not None
        return {"x": p[0], "y": p[1]}
    if len(args) == 2 and all(is_int(a) for a in args):
        return {"x": args[0], "y": args[1]}
    if not args:
        return {}
    raise ActionParseError(f"{cls_name}() takes an element number or x, y coordinates, got {args!r}")


@dataclass(frozen=True)
class Pointer(Action):
    """Shared checks for actions aimed at an element or at screen coordinates."""

    element: int | None = None
    x: int | None = None
    y: int | None = None

    def __post_init__(self) -> None:
        has_el = self.element is not None
        has_xy = self.x is not None or self.y is not None
        if has_el == has_xy:
            raise ActionParseError(f"{self.call_name}() needs either an element number or both x and y")
        if has_el:
            need_int(self.element, f"{self.call_name}: element")
        elif not (is_int(self.x) and is_int(self.y)):
            raise ActionParseError(f"{self.call_name}(): x and y must both be integers, got {self.x!r}, {self.y!r}")

    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        merged = _target_from_args(cls.call_name, args)
        dup = set(merged) & set(kwargs)
        if dup:
            raise ActionParseError(f"{cls.call_name}() got {sorted(dup)} twice")
        return super().from_args([], {**merged, **kwargs})

    def to_call(self) -> str:
        if self.element is not None:
            return f"{self.call_name}({self.element})"
        return f"{self.call_name}({self.x}, {self.y})"

    def _where(self) -> str:
        return f"element {self.element}" if self.element is not None else f"({self.x}, {self.y})"


@DESKTOP.action("click")
@dataclass(frozen=True)
class Click(Pointer):
    """click(element: int) or click(x: int, y: int) - left-click an element or a screen point, e.g. click(3)."""

    def describe(self) -> str:
        return f"click {self._where()}"


@DESKTOP.action("double_click", "doubleclick")
@dataclass(frozen=True)
class DoubleClick(Pointer):
    """double_click(element: int) or double_click(x: int, y: int) - double-click an element or point, e.g. double_click(120, 340)."""

    def describe(self) -> str:
        return f"double-click {self._where()}"


@DESKTOP.action("type", "type_text", "write")
@dataclass(frozen=True)
class Type(Action):
    """type(text: str) - type text at the keyboard focus (click the field first), e.g. type("quarterly report")."""

    text: str
    element: int | None = None

    def __post_init__(self) -> None:
        need_str(self.text, "type: text")
        if self.element is not None:
            need_int(self.element, "type: element")

    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        # Accept type(3, "text") as well as type("text", 3): ints are elements, strings text.
        pos: dict[str, Any] = {}
        for a in args:
            key = "element" if is_int(a) else "text"
            if key in pos:
                raise ActionParseError(f"type() got two {key} arguments: {args!r}")
            pos[key] = a
        return super().from_args([], {**pos, **kwargs})

    def describe(self) -> str:
        where = f" into element {self.element}" if self.element is not None else ""
        return f"type {lit(self.text)}{where}"


@DESKTOP.action("select_text", "select")
@dataclass(frozen=True)
class SelectText(Action):
    """select_text(text: str) - select that text on screen (or select_text(start=(x1, y1), end=(x2, y2))), e.g. select_text("the last two paragraphs")."""

    text: str = ""
    element: int | None = None
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        need_str(self.text, "select_text: text")
        if self.element is not None:
            need_int(self.element, "select_text: element")
        object.__setattr__(self, "start", as_point(self.start, "select_text: start"))
        object.__setattr__(self, "end", as_point(self.end, "select_text: end"))
        if (self.start is None) != (self.end is None):
            raise ActionParseError("select_text(): give both start and end points, or neither")
        if not self.text and self.start is None:
            raise ActionParseError("select_text() needs the text to select or start/end points")

    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        pos: dict[str, Any] = {}
        points = []
        for a in args:
            if isinstance(a, str) and "text" not in pos:
                pos["text"] = a
            elif is_int(a) and "element" not in pos:
                pos["element"] = a
            elif isinstance(a, (tuple, list)):
                points.append(a)
            else:
                raise ActionParseError(f"select_text(): unexpected argument {a!r}")
        if points:
            if len(points) != 2:
                raise ActionParseError("select_text(): give two points, start and end")
            pos["start"], pos["end"] = points
        return super().from_args([], {**pos, **kwargs})

    def describe(self) -> str:
        if self.text:
            return f"select {lit(self.text)}"
        return f"select from {self.start} to {self.end}"


@DESKTOP.action("drag")
@dataclass(frozen=True)
class Drag(Action):
    """drag(source: int, target: int) or drag((x1, y1), (x2, y2)) - press on the first, move to the second, release, e.g. drag(2, 7)."""

    source: int | None = None
    target: int | None = None
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", as_point(self.start, "drag: start"))
        object.__setattr__(self, "end", as_point(self.end, "drag: end"))
        for name in ("source", "target"):
            v = getattr(self, name)
            if v is not None:
                need_int(v, f"drag: {name}")
        if (self.source is None) == (self.start is None):
            raise ActionParseError("drag() needs exactly one of a source element or a start point")
        if (self.target is None) == (self.end is None):
            raise ActionParseError("drag() needs exactly one of a target element or an end point")

    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        pos: dict[str, Any] = {}
        if len(args) == 4 and all(is_int(a) for a in args):
            pos = {"start": (args[0], args[1]), "end": (args[2], args[3])}
        elif len(args) <= 2:
            for i, a in enumerate(args):
                if is_int(a):
                    pos["source" if i == 0 else "target"] = a
                else:
                    pos["start" if i == 0 else "end"] = a
        else:
            raise ActionParseError(f"drag() takes two elements/points or four coordinates, got {args!r}")
        return super().from_args([], {**pos, **kwargs})

    @property
    def element_ref(self) -> int | None:
        return self.source

    def to_call(self) -> str:
        a = lit(self.source) if self.source is not None else lit(self.start)
        b = lit(self.target) if self.target is not None else lit(self.end)
        return f"drag({a}, {b})"

    def describe(self) -> str:
        a = f"element {self.source}" if self.source is not None else str(self.start)
        b = f"element {self.target}" if self.target is not None else str(self.end)
        return f"drag {a} to {b}"


@DESKTOP.action("scroll")
@dataclass(frozen=True)
class Scroll(Action):
    """scroll(direction: "up"|"down"|"left"|"right", amount: int = 3) or scroll(element: int, direction, amount) - scroll the wheel, over an element if given, e.g. scroll("down", 5)."""

    direction: str = "down"
    amount: int = 3
    element: int | None = None
    x: int | None = None
    y: int | None = None

    def __post_init__(self) -> None:
        d = need_str(self.direction, "scroll: direction").strip().lower()
        if d not in DIRECTIONS:
            raise ActionParseError(f"scroll: direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}")
        object.__setattr__(self, "direction", d)
        if not is_int(self.amount) or self.amount <= 0:
            raise ActionParseError(f"scroll: amount must be a positive integer, got {self.amount!r}")
        if self.element is not None:
            need_int(self.element, "scroll: element")
        if (self.x is None) != (self.y is None) or (self.x is not None and not (is_int(self.x) and is_int(self.y))):
            raise ActionParseError("scroll(): x and y must both be integers when given")

    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        # Integers before the direction locate the scroll (element, or x, y); one integer
        # after it is the amount. A lone signed integer is pyautogui style: +up / -down.
        if len(args) == 1 and is_int(args[0]) and "direction" not in kwargs:
            n = args[0]
            if n == 0:
                raise ActionParseError("scroll(0) does nothing")
            return super().from_args([], {"direction": "up" if n > 0 else "down", "amount": abs(n), **kwargs})
        di = next((i for i, a in enumerate(args) if isinstance(a, str)), None)
        pos: dict[str, Any] = {}
        if di is None:
            if args:
                raise ActionParseError(f"scroll(): which direction? got {args!r}")
            return super().from_args([], kwargs)
        before, after = args[:di], args[di + 1 :]
        pos["direction"] = args[di]
        if len(before) == 1:
            pos["element"] = before[0]
        elif len(before) == 2:
            pos["x"], pos["y"] = before
        elif before:
            raise ActionParseError(f"scroll(): too many arguments before the direction: {before!r}")
        if len(after) == 1:
            pos["amount"] = after[0]
        elif after:
            raise ActionParseError(f"scroll(): too many arguments after the direction: {after!r}")
        return super().from_args([], {**pos, **kwargs})

    def to_call(self) -> str:
        loc = f"{self.element}, " if self.element is not None else ""
        if self.x is not None:
            loc = f"{self.x}, {self.y}, "
        return f"scroll({loc}{lit(self.direction)}, {self.amount})"

    def describe(self) -> str:
        where = f" over element {self.element}" if self.element is not None else ""
        if self.x is not None:
            where = f" at ({self.x}, {self.y})"
        return f"scroll {self.direction} {self.amount}{where}"


@DESKTOP.action("hotkey", "press", "key")
@dataclass(frozen=True, init=False)
class Hotkey(Action):
    """hotkey(*keys: str) - press keys together ("ctrl+s" also works), e.g. hotkey("ctrl", "s")."""

    keys: tuple[str, ...] = field(default_factory=tuple)

    def __init__(self, *keys: str) -> None:
        flat: list[str] = []
        for k in keys:
            if isinstance(k, (list, tuple)):
                flat.extend(k)
            else:
                flat.append(k)
        out: list[str] = []
        for k in flat:
            k = need_str(k, "hotkey: key")
            out.extend(p.strip().lower() for p in k.split("+") if p.strip())
        if not out:
            raise ActionParseError("hotkey() needs at least one key, e.g. hotkey(\"ctrl\", \"c\")")
        object.__setattr__(self, "keys", tuple(out))

    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        extra = set(kwargs) - {"keys"}
        if extra:
            raise ActionParseError(f"hotkey() has no argument(s) {sorted(extra)}")
        return cls(*args, *(kwargs.get("keys") or ()))

    def to_call(self) -> str:
        return "hotkey(" + ", ".join(lit(k) for k in self.keys) + ")"

    def describe(self) -> str:
        return "press " + "+".join(self.keys)


@DESKTOP.action("stop", "done", "finish", "exit")
@dataclass(frozen=True)
class Stop(Action):
    """stop() - the task is complete (or cannot be done); end the episode, e.g. stop()."""

    terminal: ClassVar[bool] = True

    def describe(self) -> str:
        return "stop"
