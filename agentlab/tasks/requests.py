"""A request cut into its asks: sentences, then joints such as "and then", ", also", "and".

Why here, on the task floor: both the MetaAgent (multi-application detection,
:mod:`agentlab.metaagent.multiapp`; the clause manager, :mod:`agentlab.teams.clauses`) and the
specialists (tool retrieval per ask, :mod:`agentlab.agents.tools`) read a request as a sequence of
asks, and neither may import the other.
"""

from __future__ import annotations

import re

#: a piece shorter than this (in words) is glued onto its neighbour ("rows and columns")
MIN_WORDS = 3

#: above this many pieces, plain ``and`` is no longer a joint (then the tail is glued): bounds the cuts routed
MAX_PIECES = 10


_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)")
_STRONG = (r",\s*(?:and\s+)?then\b|\band\s+then\b|\bthen\b|,?\s*after\s+that\b|\bafterwards\b|,?\s*finally\b|"
           r",\s*and\b|,\s*also\b")
_JOINT_STRONG = re.compile(r"\s*(?:" + _STRONG + r")[,:]?\s*", re.IGNORECASE)
_JOINT_ALL = re.compile(r"\s*(?:" + _STRONG + r"|\band\b)[,:]?\s*", re.IGNORECASE)


def cut_at_joints(text: str, joint: re.Pattern[str], *, min_words: int, glue: str = " ") -> list[str]:
    """``text`` cut into sentences, then at every match of ``joint``; a piece of fewer than
    ``min_words`` words (or one following such a piece) is glued back onto its neighbour with
    ``glue``. Shared by the clause-level manager (:mod:`agentlab.teams.clauses`), whose joints
    are stricter, and :func:`split_pieces`."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(text.strip()):
        for piece in joint.split(sentence):
            piece = piece.strip(" ,;")
            if not piece:
                continue
            if parts and (len(piece.split()) < min_words or len(parts[-1].split()) < min_words):
                parts[-1] = f"{parts[-1]}{glue}{piece}"
            else:
                parts.append(piece)
    return parts


def split_pieces(text: str, *, min_words: int = MIN_WORDS, max_pieces: int = MAX_PIECES) -> list[str]:
    """``text``'s pieces in order, cut at every joint (never empty for a non-empty text)."""
    parts = cut_at_joints(text, _JOINT_ALL, min_words=min_words)
    if len(parts) > max_pieces:
        parts = cut_at_joints(text, _JOINT_STRONG, min_words=min_words)
    if len(parts) > max_pieces:
        parts = [*parts[: max_pieces - 1], " ".join(parts[max_pieces - 1:])]
    return parts or ([text.strip()] if text.strip() else [])


__all__ = ["MAX_PIECES", "MIN_WORDS", "cut_at_joints", "split_pieces"]
