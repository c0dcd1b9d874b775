"""A request cut into its asks: sentences, then joints such as "and then", ", also", "and".

Why here, on the task floor: both the MetaAgent (multi-application detection,
:mod:`agentlab.metaagent.multiapp`; the clause manager, :mod:`agentlab.teams.clauses`) and the
specialists (tool retrieval per ask, :mod:`agentlab.agents.tools`) read a request as a sequence of
asks, and neither may import the other.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: a piece shorter than this (in words) is glued onto its neighbour ("rows and columns")
MIN_WORDS = 3

#: above this many pieces, plain ``and`` is no longer a joint (then the tail is glued): bounds the cuts routed
MAX_PIECES = 10


_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)")
_STRONG = (r",\s*(?:and\s+)?then\b|\band\s+then\b|\bthen\b|,?\s*after\s+that\b|\bafterwards\b|,?\s*finally\b|"
           r",\s*and\b|,\s*also\b")
_JOINT_STRONG = re.compile(r"\s*(?:" + _STRONG + r")[,:]?\s*", re.IGNORECASE)
_JOINT_ALL = re.compile(r"\s*(?:" + _STRONG + r"|\band\b)[,:]?\s*", re.IGNORECASE)


#: verbs that ask for an operation on files, documents, settings or messages (the toolkits'
#: tools' own verbs, and the everyday words people use for the same operations)
OPERATION_VERBS = frozenset("""
add append change convert copy count create crop delete drop export filter flip insert invert make mark
mirror move remove rename replace resize rotate scale set shift sort sum swap total update put turn take
star flag unstar hide show switch bump give fix open clear empty write fill merge split bold centre center
align italicise italicize underline highlight reply forward send bookmark archive tag trim shorten raise
lower increase decrease enable disable mute unmute list collect group duplicate transpose erase cut strip
shrink enlarge grey gray greyscale grayscale lighten darken brighten sharpen blur reorder rearrange
title retitle relabel label capitalise capitalize uppercase lowercase round format number bullet indent
""".split())

#: besides an operation verb, the words a clause of its own may open with after "and": a subject,
#: a request, "to" (of "I'd like it to ..."), or a verb saying how things should be
_CLAUSE_OPENERS = frozenset("""
i we you it they he she this that these those there please also then to can could would will let
save keep leave use get do don't dont make
""".split())
#: a verb within a few words that makes a clause of what follows "and" ("the date should be ...")
_CLAUSE_VERB = re.compile(r"^(?:\W*[\w'-]+){0,5}?\s*\b(?:should|must|needs?|has|have|is|are|was|were|goes|go)\b",
                          re.IGNORECASE)
_LEAD_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def opens_clause(rest: str) -> bool:
    """Whether ``rest`` (what follows an "and") opens a clause of its own — an operation verb, a
    subject or request word, or a verb within its first words — rather than a second item of the
    same ask ("between Tuesday and Thursday", "columns 80 and 120", "'Hardware: 12k' and 'Licences:
    4k'", "the build and dist folders")."""
    first = _LEAD_WORD.search(rest[:40])
    if first is None or first.start() > 1:  # a number, a quoted title, a path: an item
        return False
    word = first.group(0).lower()
    return word in OPERATION_VERBS or word in _CLAUSE_OPENERS or _CLAUSE_VERB.search(rest) is not None


def cut_at_joints(text: str, joint: re.Pattern[str], *, min_words: int, glue: str = " ",
                  cut: Callable[[str, str], bool] | None = None) -> list[str]:
    """``text`` cut into sentences, then at every match of ``joint``; a piece of fewer than
    ``min_words`` words (or one following such a piece) is glued back onto its neighbour with
    ``glue``. ``cut(joint text, what follows)``: whether a match is a cut (default: every one).
    Shared by the clause-level manager (:mod:`agentlab.teams.clauses`), whose joints are
    stricter, :func:`split_pieces` and :func:`split_asks`."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(text.strip()):
        for piece in _split(sentence, joint, cut):
            piece = piece.strip(" ,;")
            if not piece:
                continue
            if parts and (len(piece.split()) < min_words or len(parts[-1].split()) < min_words):
                parts[-1] = f"{parts[-1]}{glue}{piece}"
            else:
                parts.append(piece)
    return parts


def _split(sentence: str, joint: re.Pattern[str], cut: Callable[[str, str], bool] | None) -> list[str]:
    if cut is None:
        return joint.split(sentence)
    out, last = [], 0
    for m in joint.finditer(sentence):
        if m.end() > m.start() and cut(m.group(0), sentence[m.end():]):
            out.append(sentence[last:m.start()])
            last = m.end()
    return [*out, sentence[last:]]


def _and_joins_clauses(joint: str, rest: str) -> bool:
    """A joint is a cut unless it is a plain "and" before a second item of the same ask."""
    return re.fullmatch(r"\s*and[,:]?\s*", joint, re.IGNORECASE) is None or opens_clause(rest)


def split_asks(text: str, *, min_words: int = MIN_WORDS, max_pieces: int = MAX_PIECES) -> list[str]:
    """A request's asks as a specialist reads them: :func:`split_pieces`, except that a plain
    "and" cuts only where a clause of its own follows (:func:`opens_clause`). Why apart: "add a
    row between Tuesday and Thursday, with 7.5 hours" cut at its "and" made "Thursday, with 7.5
    hours?" an ask of its own, asked alone (the first development set); the MetaAgent's
    multi-application detection keeps the plain cut it was measured with."""
    return _pieces(text, min_words, max_pieces, _and_joins_clauses)


def split_pieces(text: str, *, min_words: int = MIN_WORDS, max_pieces: int = MAX_PIECES) -> list[str]:
    """``text``'s pieces in order, cut at every joint (never empty for a non-empty text)."""
    return _pieces(text, min_words, max_pieces, None)


def _pieces(text: str, min_words: int, max_pieces: int, cut: Callable[[str, str], bool] | None) -> list[str]:
    """Cut at every joint ``cut`` accepts; above ``max_pieces``, at the strong joints only, then
    the tail glued (never empty for a non-empty text)."""
    parts = cut_at_joints(text, _JOINT_ALL, min_words=min_words, cut=cut)
    if len(parts) > max_pieces:
        parts = cut_at_joints(text, _JOINT_STRONG, min_words=min_words)
    if len(parts) > max_pieces:
        parts = [*parts[: max_pieces - 1], " ".join(parts[max_pieces - 1:])]
    return parts or ([text.strip()] if text.strip() else [])


__all__ = ["MAX_PIECES", "MIN_WORDS", "OPERATION_VERBS", "cut_at_joints", "opens_clause", "split_asks", "split_pieces"]
