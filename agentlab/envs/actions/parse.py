"""The call-syntax parser shared by every action space: model text -> one typed action.

Models answer with calls such as ``tap(5)`` or ``swipe(3, "up", "medium")`` buried in prose.
The text is parsed with :mod:`ast` (``ast.parse`` + ``ast.literal_eval`` per argument), never
``eval``; anything unparseable raises :class:`~agentlab.errors.ActionParseError` naming the
text, never a silent no-op. The parser knows nothing about any one space: it gets the space's
table of call names (:class:`~agentlab.envs.actions.space.ActionSpace` passes its own).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from agentlab.envs.actions.base import Action
from agentlab.errors import ActionParseError

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


def call_arguments(body: str, m: re.Match[str]) -> tuple[str, list[Any], dict[str, Any]]:
    """The call whose name ``m`` matched in ``body`` (up to its balanced ``)``): its text and its
    literal arguments. Shared by every reply parser that reads ``name(args)`` calls out of prose
    (the action spaces here, Agent S2's semantic actions)."""
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
    return snippet, args, kwargs


def _parse_call(body: str, m: re.Match[str], cls: type[Action]) -> Action:
    snippet, args, kwargs = call_arguments(body, m)
    try:
        return cls.from_args(args, kwargs)
    except ActionParseError as exc:
        raise ActionParseError(f"cannot parse action {_clip(snippet)!r}: {exc.message}") from None


def parse_action_text(text: str, table: Mapping[str, type[Action]], space_name: str) -> Action:
    """Parse the first call in ``text`` whose (lower-case) name is in ``table``.

    Tolerates surrounding prose, ``Action:`` prefixes, code fences, capitalised or spaced
    names (``Tap(5)``, ``double click(3)``) and AppAgent's bare ``FINISH`` (the table's
    terminal action).
    """
    classes = list(dict.fromkeys(table.values()))
    known = ", ".join(f"{c.call_name}()" for c in classes)
    if text is None or not str(text).strip():
        raise ActionParseError("empty action text: expected one of " + known)
    raw = str(text)
    body = _MULTIWORD.sub(lambda m: f"{m.group(1)}_{m.group(2)}(", raw.replace("`", " "))
    terminal = next(c for c in classes if c.terminal)
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
    hint = f" ({', '.join(sorted(set(unknown)))} is not a {space_name} action)" if unknown else ""
    raise ActionParseError(f"no {space_name} action found in {_clip(raw)!r}{hint}; expected one of {known}")
