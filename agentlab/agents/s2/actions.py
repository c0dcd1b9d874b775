"""The worker's semantic actions: what it may say, in words, and the parser that reads them.

Agent S2's worker never names pixels or element numbers. It writes ONE call such as
``click("the Add one button")`` or ``set_cells({"A4": "Total", "B4": 60})``; a grounding expert
(:mod:`agentlab.agents.s2.grounding`) turns it into desktop actions. Each class's docstring
first line is its entry in the worker prompt (with an ``e.g.`` example the tests parse back),
and :attr:`SemanticAction.expert` says which expert it needs, so an ablated expert's actions
leave the prompt and are refused when written anyway.

Parsing is :mod:`ast` on the first call with a known name (never ``eval``), tolerant like the
desktop action parser: prose around the call, code fences, ``Action:`` prefixes and a
capitalised name are fine; anything unusable is an :class:`~agentlab.errors.ActionParseError`
quoting the text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agentlab.agents.s2.config import Expert
from agentlab.envs.actions.base import bind_arguments
from agentlab.envs.actions.parse import call_arguments
from agentlab.envs.base import clip
from agentlab.errors import ActionParseError

_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
DIRECTIONS = ("up", "down", "left", "right")


def _lit(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False) if isinstance(v, (str, dict)) else repr(v)


def _text(v: Any, what: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ActionParseError(f"{what} must be a non-empty quoted string, got {v!r}")
    return v


@dataclass(frozen=True)
class SemanticAction:
    """Base class: a call name, the expert it needs (None: no grounding) and a printable form."""

    name: ClassVar[str] = ""
    terminal: ClassVar[bool] = False  #: ends the subgoal (done / fail)
    #: the expert every call of this action needs (``type`` needs the visual one only with ``into``)
    needs: ClassVar[Expert | None] = None

    @property
    def expert(self) -> Expert | None:
        return self.needs

    @classmethod
    def doc_line(cls) -> str:
        return (cls.__doc__ or cls.name).strip().splitlines()[0]

    @classmethod
    def example(cls) -> str:
        m = re.search(r"e\.g\. (.+?)\.?$", cls.doc_line())
        return m.group(1).strip() if m else f"{cls.name}()"

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        raise NotImplementedError

    def to_call(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class ClickSemantic(SemanticAction):
    """click(description: str, clicks: int = 1) - click the element you describe in words (visual expert), e.g. click("the Add one button")."""

    name: ClassVar[str] = "click"
    needs: ClassVar[Expert] = "visual"
    description: str = ""
    clicks: int = 1

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        vals = bind_arguments(cls.name, ("description", "clicks"), args, kwargs)
        clicks = vals.get("clicks", 1)
        if clicks not in (1, 2):
            raise ActionParseError(f"click(): clicks must be 1 or 2, got {clicks!r}")
        return cls(_text(vals.get("description"), "click: description"), clicks)

    def to_call(self) -> str:
        return f"click({_lit(self.description)}" + (f", clicks={self.clicks})" if self.clicks != 1 else ")")


@dataclass(frozen=True)
class ClickText(SemanticAction):
    """click_text(phrase: str) - click words shown on screen, found by reading the screen (textual expert), e.g. click_text("Dark mode")."""

    name: ClassVar[str] = "click_text"
    needs: ClassVar[Expert] = "textual"
    phrase: str = ""

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        return cls(_text(bind_arguments(cls.name, ("phrase",), args, kwargs).get("phrase"), "click_text: phrase"))

    def to_call(self) -> str:
        return f"click_text({_lit(self.phrase)})"


@dataclass(frozen=True)
class TypeSemantic(SemanticAction):
    """type(text: str, into: str = "") - type text at the focus, or into the element you describe (visual expert), e.g. type("Ana", into="the Name field")."""

    name: ClassVar[str] = "type"
    text: str = ""
    into: str = ""

    @property
    def expert(self) -> Expert | None:
        return "visual" if self.into else None

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        vals = bind_arguments(cls.name, ("text", "into"), args, kwargs)
        text = vals.get("text")
        if not isinstance(text, str) or not text:
            raise ActionParseError(f"type(): text must be a quoted string, got {text!r}")
        into = vals.get("into", "") or ""
        if not isinstance(into, str):
            raise ActionParseError(f"type(): into must describe an element in words, got {into!r}")
        return cls(text, into.strip())

    def to_call(self) -> str:
        return f"type({_lit(self.text)}" + (f", into={_lit(self.into)})" if self.into else ")")


@dataclass(frozen=True)
class SelectSpan(SemanticAction):
    """select_span(first: str, last: str = "") - select text on screen from the first words to the last ones (textual expert), e.g. select_span("Lopez")."""

    name: ClassVar[str] = "select_span"
    needs: ClassVar[Expert] = "textual"
    first: str = ""
    last: str = ""

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        vals = bind_arguments(cls.name, ("first", "last"), args, kwargs)
        last = vals.get("last", "") or ""
        return cls(_text(vals.get("first"), "select_span: first"), _text(last, "select_span: last") if last else "")

    def to_call(self) -> str:
        return f"select_span({_lit(self.first)}" + (f", {_lit(self.last)})" if self.last else ")")


@dataclass(frozen=True)
class SetCells(SemanticAction):
    """set_cells(cells: dict, sheet: str = "", file: str = "") - write spreadsheet cells directly (structural expert), e.g. set_cells({"A4": "Total", "B4": 60})."""

    name: ClassVar[str] = "set_cells"
    needs: ClassVar[Expert] = "structural"
    cells: tuple[tuple[str, str | int | float], ...] = ()
    sheet: str = ""
    file: str = ""

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        vals = bind_arguments(cls.name, ("cells", "sheet", "file"), args, kwargs)
        raw = vals.get("cells")
        if not isinstance(raw, dict) or not raw:
            raise ActionParseError(f'set_cells() needs a dict of cells, e.g. {{"A4": "Total"}}, got {raw!r}')
        cells: list[tuple[str, str | int | float]] = []
        for ref, value in raw.items():
            if not isinstance(ref, str) or not re.fullmatch(r"[A-Za-z]{1,3}[1-9][0-9]{0,6}", ref.strip()):
                raise ActionParseError(f"set_cells(): {ref!r} is not a cell name like A4")
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise ActionParseError(f"set_cells(): the value of {ref} must be text or a number, got {value!r}")
            cells.append((ref.strip().upper(), value))
        sheet, file = vals.get("sheet", "") or "", vals.get("file", "") or ""
        if not isinstance(sheet, str) or not isinstance(file, str):
            raise ActionParseError("set_cells(): sheet and file must be quoted strings")
        return cls(tuple(cells), sheet, file)

    def to_call(self) -> str:
        extra = (f", sheet={_lit(self.sheet)}" if self.sheet else "") + (f", file={_lit(self.file)}" if self.file else "")
        return f"set_cells({_lit(dict(self.cells))}{extra})"


@dataclass(frozen=True)
class HotkeySemantic(SemanticAction):
    """hotkey(*keys: str) - press keys together, e.g. hotkey("ctrl", "s")."""

    name: ClassVar[str] = "hotkey"
    keys: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        if kwargs:
            raise ActionParseError(f"hotkey() takes key names only, got {sorted(kwargs)}")
        keys: list[str] = []
        for a in args:
            keys.extend(p.strip().lower() for p in _text(a, "hotkey: key").split("+") if p.strip())
        if not keys:
            raise ActionParseError('hotkey() needs at least one key, e.g. hotkey("ctrl", "s")')
        return cls(tuple(keys))

    def to_call(self) -> str:
        return "hotkey(" + ", ".join(_lit(k) for k in self.keys) + ")"


@dataclass(frozen=True)
class ScrollSemantic(SemanticAction):
    """scroll(direction: "up"|"down"|"left"|"right", amount: int = 3) - scroll the mouse wheel, e.g. scroll("down", 5)."""

    name: ClassVar[str] = "scroll"
    direction: str = "down"
    amount: int = 3

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        vals = bind_arguments(cls.name, ("direction", "amount"), args, kwargs)
        d = str(vals.get("direction", "down")).strip().lower()
        amount = vals.get("amount", 3)
        if d not in DIRECTIONS:
            raise ActionParseError(f"scroll(): direction must be one of {', '.join(DIRECTIONS)}, got {d!r}")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
            raise ActionParseError(f"scroll(): amount must be a positive integer, got {amount!r}")
        return cls(d, amount)

    def to_call(self) -> str:
        return f"scroll({_lit(self.direction)}, {self.amount})"


@dataclass(frozen=True)
class Done(SemanticAction):
    """done() - the current subgoal is complete, e.g. done()."""

    name: ClassVar[str] = "done"
    terminal: ClassVar[bool] = True

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        return cls()

    def to_call(self) -> str:
        return "done()"


@dataclass(frozen=True)
class Fail(SemanticAction):
    """fail(reason: str) - the current subgoal cannot be done; say why, e.g. fail("no Save button on screen")."""

    name: ClassVar[str] = "fail"
    terminal: ClassVar[bool] = True
    reason: str = ""

    @classmethod
    def build(cls, args: list[Any], kwargs: dict[str, Any]) -> SemanticAction:
        reason = bind_arguments(cls.name, ("reason",), args, kwargs).get("reason", "")
        return cls(str(reason or "no reason given"))

    def to_call(self) -> str:
        return f"fail({_lit(self.reason)})"


#: every semantic action, in the order the worker prompt lists them
ACTIONS: tuple[type[SemanticAction], ...] = (ClickSemantic, ClickText, TypeSemantic, SelectSpan, SetCells,
                                             HotkeySemantic, ScrollSemantic, Done, Fail)
_BY_NAME = {cls.name: cls for cls in ACTIONS}
_ALIASES = {"highlight_text_span": "select_span", "set_cell_values": "set_cells", "type_text": "type",
            "finish": "done", "stop": "done"}


def actions_doc(experts: list[Expert] | tuple[Expert, ...]) -> str:
    """The worker prompt's action list: only actions the enabled experts can ground."""
    lines = []
    for cls in ACTIONS:
        if cls.needs is not None and cls.needs not in experts:
            continue
        line = cls.doc_line()
        if cls is TypeSemantic and "visual" not in experts:
            line = 'type(text: str) - type text at the keyboard focus (click the field first), e.g. type("Ana")'
        lines.append(f"- {line}")
    return "\n".join(lines)


def _call(body: str, m: re.Match[str], cls: type[SemanticAction]) -> SemanticAction:
    snippet, args, kwargs = call_arguments(body, m)
    try:
        return cls.build(args, kwargs)
    except ActionParseError as exc:
        raise ActionParseError(f"cannot use {clip(snippet, 160)!r}: {exc.message}") from None


def parse_semantic(text: str) -> SemanticAction:
    """The first semantic action call in ``text`` (see the module docstring)."""
    if not text or not text.strip():
        raise ActionParseError("empty action: expected one of " + ", ".join(f"{c.name}()" for c in ACTIONS))
    body = text.replace("`", " ")
    first_error: ActionParseError | None = None
    unknown: list[str] = []
    for m in _CALL.finditer(body):
        key = m.group(1).lower()
        cls = _BY_NAME.get(_ALIASES.get(key, key))
        if cls is None:
            unknown.append(m.group(1))
            continue
        try:
            return _call(body, m, cls)
        except ActionParseError as exc:
            first_error = first_error or exc
    if re.fullmatch(r"\W*(done|finish(ed)?)\W*", text.strip(), re.I):
        return Done()
    if first_error is not None:
        raise first_error
    hint = f" ({', '.join(sorted(set(unknown)))} is not an action here)" if unknown else ""
    raise ActionParseError(f"no action found in {clip(text, 160)!r}{hint}; write one call such as "
                           f'click("the OK button") or done()')
