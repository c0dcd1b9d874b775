"""Typed actions and the parsers that turn model output into them.

Two textual action spaces come from the seed papers: AppAgent's phone space (``tap(5)``,
``swipe(3, "up", "medium")``...) and PC-Agent's desktop space (click, double click, type,
select text, drag, scroll, hotkey, stop). Each action is a frozen dataclass whose docstring's
first line *is* its entry in the prompt (:func:`action_space_doc`), and whose ``e.g.`` example
is checked by the tests to parse back to the same class — so the instructions a model reads
and the parser that reads its answer cannot drift apart (the Agent-S idea).

Model output is parsed with :mod:`ast` (``ast.parse`` + ``ast.literal_eval`` per argument),
never ``eval``; anything unparseable raises :class:`~agentlab.errors.ActionParseError`
naming the text, never a silent no-op.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar

from agentlab.errors import ActionParseError

PHONE = "phone"
DESKTOP = "desktop"

DIRECTIONS = ("up", "down", "left", "right")
DISTANCES = ("short", "medium", "long")

#: type name (``to_dict()["type"]``) -> class
_BY_TYPE: dict[str, type[Action]] = {}
#: space -> callable name (lower case, incl. aliases) -> class, in registration order
_BY_NAME: dict[str, dict[str, type[Action]]] = {PHONE: {}, DESKTOP: {}}


def register(*names: str, spaces: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """Class decorator: make an action parseable under ``names`` in the given spaces."""

    def deco(cls: type[Action]) -> type[Action]:
        cls.call_name = names[0]
        cls.aliases = names
        cls.spaces = spaces
        _BY_TYPE[names[0]] = cls
        for space in spaces:
            for n in names:
                _BY_NAME[space][n.lower()] = cls
        return cls

    return deco


def _lit(v: Any) -> str:
    """A Python literal for ``v`` (double-quoted strings, as the prompts show them)."""
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, tuple):
        return "(" + ", ".join(_lit(x) for x in v) + ")"
    return repr(v)


def _point(v: Any, what: str) -> tuple[int, int] | None:
    if v is None:
        return None
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(_is_int(x) for x in v):
        return int(v[0]), int(v[1])
    raise ActionParseError(f"{what} must be a point (x, y), got {v!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _need_int(v: Any, what: str) -> int:
    if not _is_int(v):
        raise ActionParseError(f"{what} must be an integer element number, got {v!r}")
    return int(v)


def _need_str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise ActionParseError(f"{what} must be a quoted string, got {v!r}")
    return v


@dataclass(frozen=True)
class Action:
    """Base class: serialisable (``to_dict``/``from_dict``), printable (``to_call``)."""

    call_name: ClassVar[str] = "action"
    aliases: ClassVar[tuple[str, ...]] = ()
    spaces: ClassVar[tuple[str, ...]] = ()
    #: True for actions that end the episode (exit/FINISH, stop).
    terminal: ClassVar[bool] = False

    # -- serialisation ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.call_name}
        for k, v in asdict(self).items():
            d[k] = list(v) if isinstance(v, tuple) else v
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Action:
        """Rebuild an action from :meth:`to_dict` output (trajectories, replay)."""
        if not isinstance(d, dict) or "type" not in d:
            raise ActionParseError(f"not an action record: {d!r}")
        cls = _BY_TYPE.get(str(d["type"]))
        if cls is None:
            raise ActionParseError(f"unknown action type {d['type']!r}; known: {sorted(_BY_TYPE)}")
        kwargs = {k: v for k, v in d.items() if k != "type"}
        return cls._from_args([], kwargs)

    # -- text ---------------------------------------------------------------------------
    def to_call(self) -> str:
        """The textual form a model would write; parses back to an equal action."""
        parts: list[str] = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.default is MISSING and f.default_factory is MISSING:
                parts.append(_lit(v))
            elif v != (f.default if f.default is not MISSING else f.default_factory()):  # type: ignore[misc]
                parts.append(f"{f.name}={_lit(v)}")
        return f"{self.call_name}({', '.join(parts)})"

    def describe(self) -> str:
        """Short human-readable description for logs and trajectory viewers."""
        return self.to_call()

    @property
    def element_ref(self) -> int | None:
        """The element number this action targets, if any (for element documentation)."""
        v = getattr(self, "element", None)
        return v if _is_int(v) else None

    # -- parsing ------------------------------------------------------------------------
    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        """Build from positional/keyword literals; subclasses override for flexible forms."""
        names = [f.name for f in fields(cls)]
        if len(args) > len(names):
            raise ActionParseError(f"{cls.call_name}() takes at most {len(names)} argument(s), got {len(args)}")
        values = dict(zip(names, args, strict=False))
        for k, v in kwargs.items():
            if k not in names:
                raise ActionParseError(f"{cls.call_name}() has no argument {k!r}; arguments: {names}")
            if k in values:
                raise ActionParseError(f"{cls.call_name}() got {k!r} twice")
            values[k] = v
        try:
            return cls(**values)
        except TypeError as exc:
            raise ActionParseError(f"{cls.call_name}(): {exc}") from None


# ----------------------------------------------------------------------------- phone space


@register("tap", spaces=(PHONE,))
@dataclass(frozen=True)
class Tap(Action):
    """tap(element: int) - tap the UI element labelled with that number, e.g. tap(5)."""

    element: int

    def __post_init__(self) -> None:
        _need_int(self.element, "tap: element")

    def describe(self) -> str:
        return f"tap element {self.element}"


@register("long_press", spaces=(PHONE,))
@dataclass(frozen=True)
class LongPress(Action):
    """long_press(element: int) - press and hold the labelled element for about a second, e.g. long_press(5)."""

    element: int

    def __post_init__(self) -> None:
        _need_int(self.element, "long_press: element")

    def describe(self) -> str:
        return f"long-press element {self.element}"


@register("swipe", spaces=(PHONE,))
@dataclass(frozen=True)
class Swipe(Action):
    """swipe(element: int, direction: "up"|"down"|"left"|"right", distance: "short"|"medium"|"long") - swipe on the labelled element, e.g. swipe(21, "up", "medium")."""

    element: int
    direction: str
    distance: str = "medium"

    def __post_init__(self) -> None:
        _need_int(self.element, "swipe: element")
        d = _need_str(self.direction, "swipe: direction").strip().lower()
        s = _need_str(self.distance, "swipe: distance").strip().lower()
        if d not in DIRECTIONS:
            raise ActionParseError(f"swipe: direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}")
        if s not in DISTANCES:
            raise ActionParseError(f"swipe: distance must be one of {', '.join(DISTANCES)}, got {self.distance!r}")
        object.__setattr__(self, "direction", d)
        object.__setattr__(self, "distance", s)

    def to_call(self) -> str:
        return f"swipe({self.element}, {_lit(self.direction)}, {_lit(self.distance)})"

    def describe(self) -> str:
        return f"swipe {self.direction} ({self.distance}) on element {self.element}"


@register("text", "input_text", spaces=(PHONE,))
@dataclass(frozen=True)
class Text(Action):
    """text(text: str) - type text into the focused input field (a keyboard is showing), e.g. text("Hello, world!")."""

    text: str

    def __post_init__(self) -> None:
        _need_str(self.text, "text: text")

    def describe(self) -> str:
        return f"type {_lit(self.text)}"


@register("back", spaces=(PHONE,))
@dataclass(frozen=True)
class Back(Action):
    """back() - press the system Back button to return to the previous page, e.g. back()."""

    def describe(self) -> str:
        return "press Back"


@register("exit", "finish", spaces=(PHONE,))
@dataclass(frozen=True)
class Finish(Action):
    """exit() - the task is complete; end the episode (FINISH also works), e.g. exit()."""

    terminal: ClassVar[bool] = True

    def describe(self) -> str:
        return "finish"


#: AppAgent calls it Exit(); both names refer to the same action.
Exit = Finish


# --------------------------------------------------------------------------- desktop space


def _target_from_args(cls_name: str, args: list[Any]) -> dict[str, Any]:
    """``f(5)`` -> element 5; ``f(100, 200)`` or ``f((100, 200))`` -> coordinates."""
    if len(args) == 1 and _is_int(args[0]):
        return {"element": args[0]}
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        p = _point(args[0], f"{cls_name}: point")
        assert p is not None
        return {"x": p[0], "y": p[1]}
    if len(args) == 2 and all(_is_int(a) for a in args):
        return {"x": args[0], "y": args[1]}
    if not args:
        return {}
    raise ActionParseError(f"{cls_name}() takes an element number or x, y coordinates, got {args!r}")


@dataclass(frozen=True)
class _Pointer(Action):
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
            _need_int(self.element, f"{self.call_name}: element")
        elif not (_is_int(self.x) and _is_int(self.y)):
            raise ActionParseError(f"{self.call_name}(): x and y must both be integers, got {self.x!r}, {self.y!r}")

    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        merged = _target_from_args(cls.call_name, args)
        dup = set(merged) & set(kwargs)
        if dup:
            raise ActionParseError(f"{cls.call_name}() got {sorted(dup)} twice")
        return super()._from_args([], {**merged, **kwargs})

    def to_call(self) -> str:
        if self.element is not None:
            return f"{self.call_name}({self.element})"
        return f"{self.call_name}({self.x}, {self.y})"

    def _where(self) -> str:
        return f"element {self.element}" if self.element is not None else f"({self.x}, {self.y})"


@register("click", spaces=(DESKTOP,))
@dataclass(frozen=True)
class Click(_Pointer):
    """click(element: int) or click(x: int, y: int) - left-click an element or a screen point, e.g. click(3)."""

    def describe(self) -> str:
        return f"click {self._where()}"


@register("double_click", "doubleclick", spaces=(DESKTOP,))
@dataclass(frozen=True)
class DoubleClick(_Pointer):
    """double_click(element: int) or double_click(x: int, y: int) - double-click an element or point, e.g. double_click(120, 340)."""

    def describe(self) -> str:
        return f"double-click {self._where()}"


@register("type", "type_text", "write", spaces=(DESKTOP,))
@dataclass(frozen=True)
class Type(Action):
    """type(text: str) - type text at the keyboard focus (click the field first), e.g. type("quarterly report")."""

    text: str
    element: int | None = None

    def __post_init__(self) -> None:
        _need_str(self.text, "type: text")
        if self.element is not None:
            _need_int(self.element, "type: element")

    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        # Accept type(3, "text") as well as type("text", 3): ints are elements, strings text.
        pos: dict[str, Any] = {}
        for a in args:
            key = "element" if _is_int(a) else "text"
            if key in pos:
                raise ActionParseError(f"type() got two {key} arguments: {args!r}")
            pos[key] = a
        return super()._from_args([], {**pos, **kwargs})

    def describe(self) -> str:
        where = f" into element {self.element}" if self.element is not None else ""
        return f"type {_lit(self.text)}{where}"


@register("select_text", "select", spaces=(DESKTOP,))
@dataclass(frozen=True)
class SelectText(Action):
    """select_text(text: str) - select that text on screen (or select_text(start=(x1, y1), end=(x2, y2))), e.g. select_text("the last two paragraphs")."""

    text: str = ""
    element: int | None = None
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        _need_str(self.text, "select_text: text")
        if self.element is not None:
            _need_int(self.element, "select_text: element")
        object.__setattr__(self, "start", _point(self.start, "select_text: start"))
        object.__setattr__(self, "end", _point(self.end, "select_text: end"))
        if (self.start is None) != (self.end is None):
            raise ActionParseError("select_text(): give both start and end points, or neither")
        if not self.text and self.start is None:
            raise ActionParseError("select_text() needs the text to select or start/end points")

    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        pos: dict[str, Any] = {}
        points = []
        for a in args:
            if isinstance(a, str) and "text" not in pos:
                pos["text"] = a
            elif _is_int(a) and "element" not in pos:
                pos["element"] = a
            elif isinstance(a, (tuple, list)):
                points.append(a)
            else:
                raise ActionParseError(f"select_text(): unexpected argument {a!r}")
        if points:
            if len(points) != 2:
                raise ActionParseError("select_text(): give two points, start and end")
            pos["start"], pos["end"] = points
        return super()._from_args([], {**pos, **kwargs})

    def describe(self) -> str:
        if self.text:
            return f"select {_lit(self.text)}"
        return f"select from {self.start} to {self.end}"


@register("drag", spaces=(DESKTOP,))
@dataclass(frozen=True)
class Drag(Action):
    """drag(source: int, target: int) or drag((x1, y1), (x2, y2)) - press on the first, move to the second, release, e.g. drag(2, 7)."""

    source: int | None = None
    target: int | None = None
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", _point(self.start, "drag: start"))
        object.__setattr__(self, "end", _point(self.end, "drag: end"))
        for name in ("source", "target"):
            v = getattr(self, name)
            if v is not None:
                _need_int(v, f"drag: {name}")
        if (self.source is None) == (self.start is None):
            raise ActionParseError("drag() needs exactly one of a source element or a start point")
        if (self.target is None) == (self.end is None):
            raise ActionParseError("drag() needs exactly one of a target element or an end point")

    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        pos: dict[str, Any] = {}
        if len(args) == 4 and all(_is_int(a) for a in args):
            pos = {"start": (args[0], args[1]), "end": (args[2], args[3])}
        elif len(args) <= 2:
            for i, a in enumerate(args):
                if _is_int(a):
                    pos["source" if i == 0 else "target"] = a
                else:
                    pos["start" if i == 0 else "end"] = a
        else:
            raise ActionParseError(f"drag() takes two elements/points or four coordinates, got {args!r}")
        return super()._from_args([], {**pos, **kwargs})

    @property
    def element_ref(self) -> int | None:
        return self.source

    def to_call(self) -> str:
        a = _lit(self.source) if self.source is not None else _lit(self.start)
        b = _lit(self.target) if self.target is not None else _lit(self.end)
        return f"drag({a}, {b})"

    def describe(self) -> str:
        a = f"element {self.source}" if self.source is not None else str(self.start)
        b = f"element {self.target}" if self.target is not None else str(self.end)
        return f"drag {a} to {b}"


@register("scroll", spaces=(DESKTOP,))
@dataclass(frozen=True)
class Scroll(Action):
    """scroll(direction: "up"|"down"|"left"|"right", amount: int = 3) or scroll(element: int, direction, amount) - scroll the wheel, over an element if given, e.g. scroll("down", 5)."""

    direction: str = "down"
    amount: int = 3
    element: int | None = None
    x: int | None = None
    y: int | None = None

    def __post_init__(self) -> None:
        d = _need_str(self.direction, "scroll: direction").strip().lower()
        if d not in DIRECTIONS:
            raise ActionParseError(f"scroll: direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}")
        object.__setattr__(self, "direction", d)
        if not _is_int(self.amount) or self.amount <= 0:
            raise ActionParseError(f"scroll: amount must be a positive integer, got {self.amount!r}")
        if self.element is not None:
            _need_int(self.element, "scroll: element")
        if (self.x is None) != (self.y is None) or (self.x is not None and not (_is_int(self.x) and _is_int(self.y))):
            raise ActionParseError("scroll(): x and y must both be integers when given")

    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        # Integers before the direction locate the scroll (element, or x, y); one integer
        # after it is the amount. A lone signed integer is pyautogui style: +up / -down.
        if len(args) == 1 and _is_int(args[0]) and "direction" not in kwargs:
            n = args[0]
            if n == 0:
                raise ActionParseError("scroll(0) does nothing")
            return super()._from_args([], {"direction": "up" if n > 0 else "down", "amount": abs(n), **kwargs})
        di = next((i for i, a in enumerate(args) if isinstance(a, str)), None)
        pos: dict[str, Any] = {}
        if di is None:
            if args:
                raise ActionParseError(f"scroll(): which direction? got {args!r}")
            return super()._from_args([], kwargs)
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
        return super()._from_args([], {**pos, **kwargs})

    def to_call(self) -> str:
        loc = f"{self.element}, " if self.element is not None else ""
        if self.x is not None:
            loc = f"{self.x}, {self.y}, "
        return f"scroll({loc}{_lit(self.direction)}, {self.amount})"

    def describe(self) -> str:
        where = f" over element {self.element}" if self.element is not None else ""
        if self.x is not None:
            where = f" at ({self.x}, {self.y})"
        return f"scroll {self.direction} {self.amount}{where}"


@register("hotkey", "press", "key", spaces=(DESKTOP,))
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
            k = _need_str(k, "hotkey: key")
            out.extend(p.strip().lower() for p in k.split("+") if p.strip())
        if not out:
            raise ActionParseError("hotkey() needs at least one key, e.g. hotkey(\"ctrl\", \"c\")")
        object.__setattr__(self, "keys", tuple(out))

    @classmethod
    def _from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        extra = set(kwargs) - {"keys"}
        if extra:
            raise ActionParseError(f"hotkey() has no argument(s) {sorted(extra)}")
        return cls(*args, *(kwargs.get("keys") or ()))

    def to_call(self) -> str:
        return "hotkey(" + ", ".join(_lit(k) for k in self.keys) + ")"

    def describe(self) -> str:
        return "press " + "+".join(self.keys)


@register("stop", "done", "finish", "exit", spaces=(DESKTOP,))
@dataclass(frozen=True)
class Stop(Action):
    """stop() - the task is complete (or cannot be done); end the episode, e.g. stop()."""

    terminal: ClassVar[bool] = True

    def describe(self) -> str:
        return "stop"


# ----------------------------------------------------------------------------------- docs


def action_classes(space: str) -> list[type[Action]]:
    """The action classes of a space, in the order the prompt lists them."""
    if space not in _BY_NAME:
        raise ValueError(f"unknown action space {space!r}; use {PHONE!r} or {DESKTOP!r}")
    seen: list[type[Action]] = []
    for cls in _BY_NAME[space].values():
        if cls not in seen:
            seen.append(cls)
    return seen


def action_space_doc(space: str) -> str:
    """The action list for a prompt, generated from the classes' docstrings."""
    lines = []
    for cls in action_classes(space):
        first = (cls.__doc__ or cls.call_name).strip().splitlines()[0]
        lines.append(f"- {first}")
    return "\n".join(lines)


def docstring_example(cls: type[Action]) -> str | None:
    """The ``e.g. ...`` example in a class's docstring (checked by the tests)."""
    m = re.search(r"e\.g\. (.+?)\.?$", (cls.__doc__ or "").strip().splitlines()[0])
    return m.group(1).strip() if m else None


# -------------------------------------------------------------------------------- parsing

_MULTIWORD = re.compile(r"\b(double|long|select|type|input)[ \-]+(click|press|text)\s*\(", re.I)
_CALL_START = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_BARE_TERMINAL = re.compile(r"^\W*(finish|exit|stop|done)\W*$", re.I)


def _clip(text: str, n: int = 160) -> str:
    text = text.strip()
    return text if len(text) <= n else text[: n - 1] + "…"


def _balanced_end(text: str, open_idx: int) -> int | None:
    """Index just past the ``)`` closing the ``(`` at ``open_idx`` (quote-aware), or None."""
    depth, quote, i = 0, "", open_idx
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _literal(node: ast.AST, snippet: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        raise ActionParseError(
            f"argument {ast.unparse(node)!r} in {snippet!r} is not a literal (number, quoted string or tuple)"
        ) from None


def _parse_call(body: str, m: re.Match[str], cls: type[Action]) -> Action:
    end = _balanced_end(body, m.end() - 1)
    if end is None:
        raise ActionParseError(f"unbalanced parentheses in action {_clip(body[m.start():])!r}")
    snippet = body[m.start() : end]
    try:
        tree = ast.parse("f" + snippet[len(m.group(1)) :].lstrip(), mode="eval")
    except SyntaxError as exc:
        raise ActionParseError(f"cannot parse action {_clip(snippet)!r}: {exc.msg}") from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ActionParseError(f"cannot parse action {_clip(snippet)!r}: not a single call")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise ActionParseError(f"cannot parse action {_clip(snippet)!r}: */** arguments are not allowed")
    args = [_literal(a, snippet) for a in call.args]
    kwargs = {str(k.arg): _literal(k.value, snippet) for k in call.keywords}
    try:
        return cls._from_args(args, kwargs)
    except ActionParseError as exc:
        raise ActionParseError(f"cannot parse action {_clip(snippet)!r}: {exc.message}") from None


def parse_action(text: str, space: str) -> Action:
    """Parse the first action call in ``text`` for ``space`` (``"phone"`` or ``"desktop"``).

    Tolerates surrounding prose, ``Action:`` prefixes, code fences, capitalised or spaced
    names (``Tap(5)``, ``double click(3)``) and AppAgent's bare ``FINISH``.
    """
    table = _BY_NAME.get(space)
    if table is None:
        raise ValueError(f"unknown action space {space!r}")
    if text is None or not str(text).strip():
        raise ActionParseError("empty action text: expected one of " + ", ".join(f"{c.call_name}()" for c in action_classes(space)))
    raw = str(text)
    body = _MULTIWORD.sub(lambda m: f"{m.group(1)}_{m.group(2)}(", raw.replace("`", " "))
    terminal = next(c for c in action_classes(space) if c.terminal)
    if _BARE_TERMINAL.match(body):
        return terminal()

    unknown: list[str] = []
    call_pos: int | None = None
    found: Action | None = None
    first_error: ActionParseError | None = None
    # The first call with a known name that parses wins; a known name used in prose
    # ("the text (label) ...") is skipped, and its error reported only if nothing parses.
    for m in _CALL_START.finditer(body):
        cls = table.get(m.group(1).lower())
        if cls is None:
            unknown.append(m.group(1))
            continue
        try:
            found = _parse_call(body, m, cls)
        except ActionParseError as exc:
            first_error = first_error or exc
            continue
        call_pos = m.start()
        break

    bare = re.search(r"\bFINISH\b", raw)
    if bare and (call_pos is None or bare.start() < call_pos):
        return terminal()
    if found is not None:
        return found
    if first_error is not None:
        raise first_error
    known = ", ".join(f"{c.call_name}()" for c in action_classes(space))
    hint = f" ({', '.join(sorted(set(unknown)))} is not a {space} action)" if unknown else ""
    raise ActionParseError(f"no {space} action found in {_clip(raw)!r}{hint}; expected one of {known}")


def parse_phone_action(text: str) -> Action:
    """Parse AppAgent's phone action space: tap, long_press, swipe, text, back, exit/FINISH."""
    return parse_action(text, PHONE)


def parse_desktop_action(text: str) -> Action:
    """Parse PC-Agent's desktop action space: click, double_click, type, select_text, drag,
    scroll, hotkey, stop."""
    return parse_action(text, DESKTOP)


__all__ = [
    "DESKTOP",
    "DIRECTIONS",
    "DISTANCES",
    "PHONE",
    "Action",
    "Back",
    "Click",
    "DoubleClick",
    "Drag",
    "Exit",
    "Finish",
    "Hotkey",
    "LongPress",
    "Scroll",
    "SelectText",
    "Stop",
    "Swipe",
    "Tap",
    "Text",
    "Type",
    "action_classes",
    "action_space_doc",
    "docstring_example",
    "parse_action",
    "parse_desktop_action",
    "parse_phone_action",
]
