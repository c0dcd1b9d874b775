"""What a domain's synthesizer hands back: a request, its calls, and how to tell they worked.

A :class:`Draft` is written by a domain module (:mod:`.sheets`, :mod:`.documents` ...) for a
start state it has just made in a folder. Calls hold argument *values*; :func:`reply` writes them
as the agent writes them (the grammar's literals: strings quoted with ``repr``, whole numbers
bare, ``True``/``False``), ending with ``done()``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.toolkits.base import Toolkit

#: a postcondition on the workspace after the calls ran (``None``: it holds; else what is wrong)
Check = Callable[[Path], "str | None"]


@dataclass(frozen=True)
class Draft:
    """One synthesized request with the calls that carry it out on its start state."""

    request: str
    calls: tuple[tuple[str, tuple[Any, ...]], ...]
    check: Check
    #: which generator wrote it (``sheets.rename_sheet``), for the report
    family: str


#: a domain's generator: makes its start state in the folder, returns the draft about it
Generator = Callable[[random.Random, Path], Draft]


def literal(value: Any, kind: type) -> str:
    """``value`` as the grammar writes an argument of type ``kind``."""
    if kind is bool or isinstance(value, bool):
        return "True" if value else "False"
    if kind is int:
        return str(int(value))
    if kind is float:
        return f"{float(value):g}"
    return repr(str(value))


def call_literals(kit: Toolkit, name: str, args: tuple[Any, ...]) -> list[str]:
    """The literal of each argument of ``name(*args)``; every parameter must be given."""
    tool = kit.tools[name]
    if len(args) != len(tool.params):
        raise ValueError(f"{name}: {len(args)} argument(s) for {len(tool.params)} parameter(s)")
    return [literal(v, p.type) for v, p in zip(args, tool.params)]


def reply(kit: Toolkit, draft: Draft) -> str:
    """The reply the agent should write: one call per line, then ``done()``."""
    lines = [f"{name}({', '.join(call_literals(kit, name, args))})" for name, args in draft.calls]
    return "\n".join([*lines, "done()"])
