"""Which of a request's asks the calls so far answered: an ask that no call answered gets a step.

Why: :func:`~agentlab.toolkits.check.unmet_asks` checks an ask by the values it names, so an ask
naming none — "please turn it 90 degrees clockwise", "star his contract renewal email", "add a
test script that just runs jest" — is never reported, and a small specialist that wrote one call
and ``done()`` for a two-part request stops there (the second development set: seven of its
failures were a second ask of this kind that never had a step). This module reads the other way
round: from the calls that ran to the asks they answer. It reads the request, the calls and the
names of the files the workspace held at the start; never a task's evaluator or expected values.

* A **piece** is one of :func:`~agentlab.tasks.requests.split_asks`. It is an **ask** when it
  asks for an operation: it opens with an operation verb ("add ...", "please drop ..."), or a
  request marker ("can you", "I'd like", "should be", "to ...") is followed by one. A piece that
  only says where things are ("The mail is in ..."), what is wrong ("photo.png is too big"), or
  what must not change ("Keep the original", "Leave the other files alone", "should stay") is
  not: an ask of its own would make the specialist call a tool for it.
* A call **answers** the ask its values point to: the piece naming the longest of its non-file
  values (a quoted title, a URL, a name, a number; one piece per call, so
  ``add_bullet('Risks', 'Hiring freeze')`` answers the piece naming 'Hiring freeze' and not the
  one naming the Risks slide); a file the call wrote that did not exist at the start answers
  every piece naming it ("save the result as scan_fixed.png"). A call whose values no piece names
  answers the first unanswered ask whose most likely tool (read from the piece alone) is its own.
  A call whose values name an ask of another tool ("Title it 'Next steps'" is ``set_title``'s,
  the call ``add_slide``) also answers the first unanswered ask of its own tool that names no
  value of its own ("Can you add one more slide"): the values were the new slide's. A call whose
  values only a note names ("Slide 2 of strategy.pptx should be titled Roadmap.") answers the ask
  beside that note ("Could you change it?"): the note said what the ask wants.
* An ask no call answered is **unanswered**; the specialist then takes it alone
  (:meth:`~agentlab.agents.tools.ToolAgent._ask_alone`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from agentlab.tasks.requests import OPERATION_VERBS, split_asks
from agentlab.toolkits.base import END_CALLS, Call, Toolkit
from agentlab.toolkits.slots import QUOTED, request_values

#: words that open a piece asking that something stays as it is, or how to do the operations:
#: never an operation of its own
_CONSTRAINT_HEADS = frozenset("keep leave save use don't dont never".split())

#: a request marker after which an operation verb makes the piece an ask
_MARKER = re.compile(r"\b(?:can|could|would|will)\s+you\b|\bplease\b|\bi'?d\s+like\b|\bi\s+(?:want|need)\b|"
                     r"\bwe\s+(?:want|need)\b|\bshould\s+(?:be|go|come|read|say|have)\b|\bneeds?\s+to\b|^to\b",
                     re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: words before a piece's first verb that say nothing of it ("also add ...", "then please sort ...")
_LEADING = frozenset("also and then so now finally just please".split())
#: a value shorter than this (characters) points nowhere: 'a', 'on', a bare digit
MIN_VALUE_CHARS = 2


def is_ask(piece: str) -> bool:
    """Whether ``piece`` asks for an operation (module docstring): an operation verb first (after
    "also", "then", "please" ...), or a request marker followed by one; never a piece that opens
    by asking that something stays as it is. What follows a colon is read as a start of its own
    ("We're releasing: bump the version ...")."""
    piece = QUOTED.sub(" ", piece)  # a quoted title is not the request's verb ("'Send the invites'.")
    _, colon, tail = piece.partition(":")
    if colon and tail.strip() and _opens_ask(tail):
        return True
    return _opens_ask(piece)


def _opens_ask(piece: str) -> bool:
    """:func:`is_ask` of one stretch of words, read from its start."""
    words = [w.lower() for w in _WORD.findall(piece)]
    while words and words[0] in _LEADING:
        words = words[1:]
    if not words:
        return False
    if words[0] in _CONSTRAINT_HEADS or re.search(r"\bshould\s+(?:stay|remain)\b", piece, re.IGNORECASE):
        return False
    if words[0] in OPERATION_VERBS:
        return True
    marker = _MARKER.search(piece.strip())
    if marker is None:
        return False
    after = [w.lower() for w in _WORD.findall(piece[marker.end():])]
    return any(w in OPERATION_VERBS for w in after)


def _names(piece: str, value: str) -> bool:
    """Whether ``piece`` writes ``value`` (case-insensitive, not inside a longer word)."""
    v = value.strip().casefold()
    if len(v) < MIN_VALUE_CHARS:
        return False
    return re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", piece.casefold()) is not None


def _value_texts(value: object) -> list[str]:
    """A call's argument as the request would write it: each item of a list; nothing for what no
    request writes (booleans, ``*``)."""
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _value_texts(v)]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return [] if text in ("", "*") else [text]


def answered_pieces(pieces: Sequence[str], calls: Sequence[Call], kit: Toolkit, existed: Collection[str],
                    top_tool: Callable[[str], str | None], *, by_tool_always: bool = False) -> set[int]:
    """The indices of ``pieces`` the ``calls`` answered (module docstring). ``existed``: the
    workspace's files (and folders) at the start, relative paths; ``top_tool``: a piece's most
    likely tool, or ``None``. ``by_tool_always``: a call its values placed also answers the
    first unanswered ask whose most likely tool is its own and that names no value of its own,
    even when the placed ask's tool is its own too (the lenient reading, an ablation)."""
    asks = [is_ask(p) for p in pieces]
    answered: set[int] = set()
    by_tool: list[tuple[Call, bool]] = []  # (a call, whether its values placed it already)
    for call in calls:
        if call.name in END_CALLS or call.name not in kit.tools:
            continue
        params = {p.name: p for p in kit.tools[call.name].params}
        best: tuple[bool, int, int] | None = None  # (an ask, length of the value named, -piece index)
        for name, value in call.args.items():
            param = params.get(name)
            for text in _value_texts(value):
                if param is not None and param.slot.kind in ("file", "folder"):
                    if text.strip("/") not in existed:  # a file it wrote: every piece naming it
                        answered.update(i for i, p in enumerate(pieces)
                                        if _names(p, text) or _names(p, text.rsplit("/", 1)[-1]))
                    continue
                for i, piece in enumerate(pieces):
                    key = (asks[i], len(text), -i)
                    if _names(piece, text) and (best is None or key > best):
                        best = key
        place = None if best is None else -best[2]
        if place is not None:
            answered.add(place)
            if not asks[place]:  # a note saying what the call did: the ask beside it refers to it
                answered.update(_beside(place, asks, answered))
        # values and tool disagree (add_slide's title named by "Title it 'Next steps'", whose own
        # tool is set_title): the call also did the ask of its tool ("add one more slide")
        if place is None or by_tool_always or (asks[place] and top_tool(pieces[place]) != call.name):
            by_tool.append((call, place is not None))
    for call, placed in by_tool:
        for i, piece in enumerate(pieces):
            if i not in answered and asks[i] and top_tool(piece) == call.name and not (placed and _own_values(piece)):
                answered.add(i)
                break
    return answered


def _beside(i: int, asks: Sequence[bool], answered: set[int]) -> list[int]:
    """The unanswered ask a note at ``i`` is about: the first after it, else the last before it
    ("Slide 2 should be titled Roadmap. Could you change it?")."""
    after = [j for j in range(i + 1, len(asks)) if asks[j] and j not in answered]
    before = [j for j in range(i) if asks[j] and j not in answered]
    return after[:1] or before[-1:]


def _own_values(piece: str) -> bool:
    """Whether ``piece`` names a value other than a file: a quoted phrase, a number, a URL."""
    said = request_values(piece)
    return bool(QUOTED.search(piece) or said.numbers or said.urls)


def unanswered_asks(instruction: str, calls: Sequence[Call], kit: Toolkit, existed: Collection[str],
                    top_tool: Callable[[str], str | None], *, by_tool_always: bool = False) -> list[str]:
    """The asks of ``instruction`` that none of ``calls`` (the calls that ran without error)
    answered, in order; [] for a request of one piece or when no call ran."""
    pieces = split_asks(instruction)
    ran = [c for c in calls if c.name not in END_CALLS]
    if len(pieces) < 2 or not ran:
        return []
    answered = answered_pieces(pieces, ran, kit, existed, top_tool, by_tool_always=by_tool_always)
    return [p for i, p in enumerate(pieces) if i not in answered and is_ask(p)]


__all__ = ["OPERATION_VERBS", "answered_pieces", "is_ask", "unanswered_asks"]
