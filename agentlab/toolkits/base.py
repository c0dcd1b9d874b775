"""What a toolkit is: typed functions over one domain's files, whose signatures are the protocol.

A specialist's value is the structure of its domain (SheetCopilot's atomic spreadsheet actions,
FRIDAY's tools as functions): instead of writing any program, it answers with calls such as
``rename_sheet("budget.xlsx", "Data", "Q3")``. Each function of a toolkit is declared once,
with type hints whose :class:`Slot` markers say where an argument's values come from (a file of
the workspace, a sheet of a workbook, a header, a phrase of the request, a number ...), and a
docstring. From that one declaration come:

- the prompt's list of tools (:meth:`Toolkit.doc`) and the agent document's toolkit section;
- the call syntax and its checks (:func:`parse_calls`: a Python call per line, literal
  arguments, names and arity checked against the signature);
- the grammar a local model decodes under (:mod:`agentlab.toolkits.grammar`);
- the OpenAI ``tools`` schema an endpoint with function calling is given (:meth:`Tool.schema`).

Functions run inside the sandboxed workspace (:mod:`agentlab.toolkits.runtime`), with paths
relative to it, and return a short text saying what they did (or raise ``ToolError`` with what
went wrong, shown to the agent in its next turn).
"""

from __future__ import annotations

import ast
import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from agentlab.errors import ActionParseError

#: The largest file a toolkit call may write (the tool program's RLIMIT_FSIZE, :mod:`.runtime`):
#: a call that would write more gets a tool error, not a disk filled by one reply
MAX_OUTPUT_BYTES = 64 * 2**20

#: The pseudo-calls that end an episode (they are part of every toolkit's grammar and doc).
END_CALLS = {"done": "done()  -- the task is finished", "fail": "fail(\"why\")  -- the task cannot be done"}


class ToolError(Exception):
    """A call that cannot do what it was asked (a missing sheet, a cell out of range): the
    message is shown to the agent, the episode goes on."""


def workspace_file(path: str, what: str = "file") -> Path:
    """The file a call names, or the :class:`ToolError` every toolkit gives when it is not there."""
    p = Path(path)
    if not p.is_file():
        raise ToolError(f"no {what} {path!r} in the workspace")
    return p


def text_head(path: Path, lines: int = 8, width: int | None = None) -> str:
    """How a text file looks to an agent: its path, its first ``lines`` lines (each cut at
    ``width`` characters) and how many more there are; a binary file by its size. The files and
    data toolkits describe their files this way (each with the counts its prompts were fitted on)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return f"{path.name}: {path.stat().st_size} bytes (binary)"
    rows = text.splitlines()
    more = f"\n  ... {len(rows) - lines} more lines" if len(rows) > lines else ""
    return f"{path.as_posix()}:\n" + "\n".join(f"  {ln[:width]}" for ln in rows[:lines]) + more


def column_index(header: list[str], column: str) -> int:
    """Where ``column`` is in a table's ``header``: any case, and a name in the plural finds the
    column in the singular ("amounts" for ``amount``); a :class:`ToolError` listing the columns
    otherwise. The files and data toolkits look columns up this way."""
    want = column.strip().casefold()
    for i, h in enumerate(header):
        if h.strip().casefold() == want:
            return i
    for i, h in enumerate(header):
        if h.strip().casefold().rstrip("s") == want.rstrip("s"):
            return i
    raise ToolError(f"no column {column!r}; the columns are {', '.join(map(repr, header))}")


def json_or_text(value: str) -> Any:
    """``true`` / ``16`` / ``["a"]`` as JSON; anything else as the text it is."""
    try:
        return json.loads(value)
    except (ValueError, TypeError):
        return value


@dataclass(frozen=True)
class Slot:
    """Where an argument's values come from (the grammar offers these, :mod:`agentlab.toolkits.slots`).

    ``kind``: ``file`` (a workspace file with one of ``extensions``; ``new``: or a file name the
    request mentions, and only the mentioned files that do not exist yet when there are any: the
    request named where the result goes), ``folder``, ``sheet``, ``header``, ``cell``, ``row_key`` (a value of the
    first columns), ``slide`` (a slide title), ``anchor`` (a run of the request found in the documents), ``section`` (an INI section), ``setting``
    (a key of the settings file or of the toolkit's catalogue), ``phrase`` (words of the
    request), ``value`` (what a setting is set to: the request's URLs, paths, quoted words, words
    and numbers, ``true``/``false``, ``*`` for "all"), ``item`` (a thing named inside a file: a
    bookmark or bookmark folder, a mail folder, a message subject, a playlist entry), ``text``
    (free text), ``number``, ``bool``, ``choice`` (one of ``choices``). ``new`` on a named kind (a
    sheet's new name): never a sheet, slide or file that exists already. ``names``: a file slot
    also takes files with one of these base names whatever their extension (Chromium's
    ``Preferences``, VLC's ``vlcrc``, an mbox folder named ``Inbox``).
    """

    kind: str
    extensions: tuple[str, ...] = ()
    new: bool = False
    choices: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    #: the value may not be the one of the parameter just before it (the two things a swap exchanges)
    differs: bool = False


def file_slot(*extensions: str, new: bool = False, names: tuple[str, ...] = ()) -> Slot:
    return Slot("file", tuple(e.lower() for e in extensions), new=new, names=names)


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    slot: Slot
    default: Any = inspect.Parameter.empty

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty


@dataclass(frozen=True)
class Tool:
    """One function of a toolkit, read from its signature and docstring."""

    name: str
    fn: Callable[..., Any]
    params: tuple[Param, ...]
    doc: str

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0] if self.doc.strip() else ""

    def signature(self) -> str:
        parts = []
        for p in self.params:
            ann = getattr(p.type, "__name__", str(p.type))
            parts.append(f"{p.name}: {ann}" + ("" if p.required else f" = {p.default!r}"))
        return f"{self.name}({', '.join(parts)})"

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling description of this tool."""
        json_type = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}
        props: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": json_type.get(p.type, "string")}
            if p.slot.kind == "choice":
                prop["enum"] = list(p.slot.choices)
            props[p.name] = prop
        return {"type": "function", "function": {
            "name": self.name, "description": " ".join(self.doc.split()),
            "parameters": {"type": "object", "properties": props,
                           "required": [p.name for p in self.params if p.required]}}}


def _params(fn: Callable[..., Any]) -> tuple[Param, ...]:
    hints = typing.get_type_hints(fn, include_extras=True)
    out = []
    for name, p in inspect.signature(fn).parameters.items():
        hint = hints.get(name, str)
        slot, base = None, hint
        if typing.get_origin(hint) is Annotated:
            base, *meta = typing.get_args(hint)
            slot = next((m for m in meta if isinstance(m, Slot)), None)
        base = typing.get_origin(base) or base
        if slot is None:  # a plain hint: the kind follows the type
            slot = Slot({bool: "bool", int: "number", float: "number"}.get(base, "text"))
        out.append(Param(name, base if isinstance(base, type) else str, slot, p.default))
    return tuple(out)


@dataclass
class Toolkit:
    """A named set of tools for one domain (``sheets``, ``documents``, ...)."""

    name: str
    description: str
    #: what the workspace's files of this domain look like to the agent (a short text per file)
    describe: Callable[[Any], str] | None = None
    #: known setting keys of the domain (a settings toolkit's catalogue, shown and offered as slots)
    catalogue: tuple[str, ...] = ()
    #: the values the catalogue's enumerated keys take (``afterDelay``, ``bounded``), offered to
    #: ``value`` slots beside the request's words: a request rarely spells them as the file does
    catalogue_values: tuple[str, ...] = ()
    #: handwritten (request, calls) pairs shown in the prompt: the protocol by example (never a
    #: benchmark's or a held-out task's request)
    examples: tuple[tuple[str, str], ...] = ()
    tools: dict[str, Tool] = field(default_factory=dict)

    def tool(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn`` (decorator)."""
        self.tools[fn.__name__] = Tool(fn.__name__, fn, _params(fn), inspect.getdoc(fn) or "")
        return fn

    def examples_text(self) -> str:
        return "\n\n".join(f"Request: {q}\nYour calls:\n{a}" for q, a in self.examples)

    def doc(self, names: list[str] | None = None) -> str:
        """The prompt's list of tools (``names``: only these): one signature and its first docstring line each."""
        lines = [f"- {t.signature()}: {t.summary}" for t in self.tools.values() if names is None or t.name in names]
        lines += [f"- {v}" for v in END_CALLS.values()]
        return "\n".join(lines)


@dataclass(frozen=True)
class Call:
    """One parsed call: the tool's name and its arguments, bound to the parameters."""

    name: str
    args: dict[str, Any]

    def render(self) -> str:
        return f"{self.name}({', '.join(repr(v) for v in self.args.values())})"

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args}


def value_the_error_names(call: Call, error: str) -> tuple[int, str] | None:
    """The argument of a failed ``call`` that its ``error`` names, as ``(index, written value)``:
    the first of the call's values that the message quotes as a tool writes a value (``repr``;
    "no sheet 'Q3'; the sheets are ..." names ``'Q3'``, not the sheets after it). ``None`` when the
    error quotes none of them (a size limit, a malformed file). Why: such a value is the one the
    toolkit could not use -- there is no such sheet, column, paragraph or bookmark -- so a later
    step of the same episode should not be able to write it in that place again."""
    best: tuple[int, int, str] | None = None
    for i, value in enumerate(call.args.values()):
        if not isinstance(value, str) or len(value) < 2:
            continue
        at = error.find(repr(value))
        if at >= 0 and (best is None or at < best[0]):
            best = (at, i, repr(value))
    return None if best is None else (best[1], best[2])


def parse_calls(text: str, kit: Toolkit, *, max_calls: int = 5) -> list[Call]:
    """The calls of a reply, one per non-empty line (a fenced block's fences are ignored);
    raise :class:`~agentlab.errors.ActionParseError` saying what is wrong with the first bad line.

    A last line that is not a whole call after whole calls is dropped, not refused: it is where
    the reply ran out of tokens, and the calls before it stand on their own."""
    calls: list[Call] = []
    lines = [raw.strip().rstrip(";") for raw in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("```", "#"))]
    for i, line in enumerate(lines):
        try:
            node = ast.parse(line, mode="eval").body
        except SyntaxError:
            if calls and i == len(lines) - 1:
                break
            raise ActionParseError(f"not a call: {line[:80]!r}; write one call per line, e.g. {_example(kit)}") from None
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ActionParseError(f"not a call: {line[:80]!r}; write one call per line, e.g. {_example(kit)}")
        try:
            call = _bind(node, kit)
        except ValueError as exc:
            raise ActionParseError(str(exc)) from None
        if calls and call == calls[-1]:  # a call said again is not a second edit (small models loop)
            continue
        calls.append(call)
        if calls[-1].name in END_CALLS or len(calls) >= max_calls:
            break
    if not calls:
        raise ActionParseError(f"no call in the reply; answer with calls, one per line, e.g. {_example(kit)}, then done()")
    return calls


def _bind(node: ast.Call, kit: Toolkit) -> Call:
    assert isinstance(node.func, ast.Name)
    name = node.func.id
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (ValueError, SyntaxError):
        raise ValueError(f"{name}(...): arguments must be literal values (strings in quotes, numbers, True/False, lists)") from None
    if name in END_CALLS:
        return Call(name, {"reason": str(args[0]) if args else str(kwargs.get("reason", ""))} if name == "fail" else {})
    tool = kit.tools.get(name)
    if tool is None:
        raise ValueError(f"unknown tool {name!r}; the tools are {', '.join(kit.tools)}, done and fail")
    if len(args) > len(tool.params):
        raise ValueError(f"{tool.signature()} takes {len(tool.params)} argument(s), got {len(args)}")
    bound: dict[str, Any] = {}
    for p, v in zip(tool.params, args):
        bound[p.name] = v
    for k, v in kwargs.items():
        if k not in {p.name for p in tool.params}:
            raise ValueError(f"{name}() has no argument {k!r}: {tool.signature()}")
        bound[k] = v
    missing = [p.name for p in tool.params if p.required and p.name not in bound]
    if missing:
        raise ValueError(f"{tool.signature()}: missing {', '.join(missing)}")
    for p in tool.params:
        if p.name in bound:
            bound[p.name] = _coerce(bound[p.name], p, tool)
        elif not p.required:
            bound[p.name] = p.default
    return Call(name, {p.name: bound[p.name] for p in tool.params})


def _coerce(value: Any, p: Param, tool: Tool) -> Any:
    if p.type is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if p.type is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if p.type in (int, float, str, bool, list) and not isinstance(value, p.type):
        raise ValueError(f"{tool.name}(): {p.name} must be {p.type.__name__}, got {value!r}")
    if p.slot.kind == "choice" and value not in p.slot.choices:
        raise ValueError(f"{tool.name}(): {p.name} must be one of {', '.join(map(repr, p.slot.choices))}")
    return value


def _example(kit: Toolkit) -> str:
    first = next(iter(kit.tools.values()), None)
    return f"{first.name}(...)" if first else "done()"
