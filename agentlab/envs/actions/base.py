"""The typed action every environment takes: base class, record form, argument checks.

Each action is a frozen dataclass whose docstring's first line *is* its entry in the prompt
(:meth:`Action.doc_line`), with an ``e.g.`` example (:meth:`Action.doc_example`) that the tests
parse back to the same class — so the instructions a model reads and the parser that reads
its answer cannot drift apart (the Agent-S idea). Which actions a model may use is decided
by an :class:`~agentlab.envs.actions.space.ActionSpace`; this module only knows every action
type by its record name, so a recorded action dict (trajectories, replay) turns back into an
action with :meth:`Action.from_dict` whatever space it came from.
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any, ClassVar

from agentlab.errors import ActionParseError

#: Directions shared by the phone's swipe and the desktop's scroll.
DIRECTIONS = ("up", "down", "left", "right")

#: record name (``to_dict()["type"]``) -> class, for every registered action of every space
_BY_TYPE: dict[str, type[Action]] = {}


def register_type(cls: type[Action]) -> None:
    """Make ``cls`` rebuildable from its record (:meth:`Action.from_dict`) by its ``call_name``."""
    known = _BY_TYPE.get(cls.call_name)
    if known is not None and known is not cls:
        raise TypeError(f"action type {cls.call_name!r} is already {known.__qualname__}; pick another name")
    _BY_TYPE[cls.call_name] = cls


# -- argument helpers shared by the action classes -------------------------------------------


def lit(v: Any) -> str:
    """A Python literal for ``v`` (double-quoted strings, as the prompts show them)."""
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, tuple):
        return "(" + ", ".join(lit(x) for x in v) + ")"
    return repr(v)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def as_point(v: Any, what: str) -> tuple[int, int] | None:
    """``(x, y)`` from a 2-sequence of integers, None from None; anything else is an error."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(is_int(x) for x in v):
        return int(v[0]), int(v[1])
    raise ActionParseError(f"{what} must be a point (x, y), got {v!r}")


def need_int(v: Any, what: str) -> int:
    if not is_int(v):
        raise ActionParseError(f"{what} must be an integer element number, got {v!r}")
    return int(v)


def need_str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise ActionParseError(f"{what} must be a quoted string, got {v!r}")
    return v


def bind_arguments(name: str, params: list[str] | tuple[str, ...], args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Positional and keyword arguments of a call ``name(...)`` matched to ``params`` (like
    Python would), each mistake one :class:`ActionParseError` naming the call."""
    if len(args) > len(params):
        raise ActionParseError(f"{name}() takes at most {len(params)} argument(s), got {len(args)}")
    values = dict(zip(params, args, strict=False))
    for k, v in kwargs.items():
        if k not in params:
            raise ActionParseError(f"{name}() has no argument {k!r}; arguments: {list(params)}")
        if k in values:
            raise ActionParseError(f"{name}() got {k!r} twice")
        values[k] = v
    return values


@dataclass(frozen=True)
class Action:
    """Base class: serialisable (``to_dict``/``from_dict``), printable (``to_call``)."""

    call_name: ClassVar[str] = "action"
    aliases: ClassVar[tuple[str, ...]] = ()
    #: Name of the action space the class belongs to (set when a space registers it).
    space: ClassVar[str] = ""
    #: True for actions that end the episode (exit/FINISH, stop).
    terminal: ClassVar[bool] = False

    # -- documentation ------------------------------------------------------------------
    @classmethod
    def doc_line(cls) -> str:
        """The class's entry in the prompt's action list: its docstring's first line."""
        return (cls.__doc__ or cls.call_name).strip().splitlines()[0]

    @classmethod
    def doc_example(cls) -> str | None:
        """The ``e.g. ...`` example in the docstring's first line (checked by the tests)."""
        m = re.search(r"e\.g\. (.+?)\.?$", cls.doc_line())
        return m.group(1).strip() if m else None

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
        return cls.from_args([], kwargs)

    # -- text ---------------------------------------------------------------------------
    def to_call(self) -> str:
        """The textual form a model would write; parses back to an equal action."""
        parts: list[str] = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.default is MISSING and f.default_factory is MISSING:
                parts.append(lit(v))
            elif v != (f.default if f.default is not MISSING else f.default_factory()):  # type: ignore[operator]  # mypy cannot tell default_factory is set here
                parts.append(f"{f.name}={lit(v)}")
        return f"{self.call_name}({', '.join(parts)})"

    def describe(self) -> str:
        """Short human-readable description for logs and trajectory viewers."""
        return self.to_call()

    @property
    def element_ref(self) -> int | None:
        """The element number this action targets, if any (for element documentation)."""
        v = getattr(self, "element", None)
        return v if is_int(v) else None

    # -- parsing ------------------------------------------------------------------------
    @classmethod
    def from_args(cls, args: list[Any], kwargs: dict[str, Any]) -> Action:
        """Build from positional/keyword literals; subclasses override for flexible forms."""
        values = bind_arguments(cls.call_name, [f.name for f in fields(cls)], args, kwargs)
        try:
            return cls(**values)
        except TypeError as exc:
            raise ActionParseError(f"{cls.call_name}(): {exc}") from None
