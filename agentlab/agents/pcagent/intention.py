"""The intention understanding agent: which text on screen a description of it means.

PC-Agent's active perception module (the paper's section 3.1, Figure 3) selects text in two
moves. A request seldom quotes the text it is about ("make the last two paragraphs bold"), so
the decision agent names what it wants to select, an *intention understanding agent* (a model)
reads the screen's text and says where that span starts and where it ends, and OCR then gives
both ends' exact positions. Here the decision agent writes ``select_text("the last two
paragraphs")``; when OCR does not find those very words on screen (:func:`find_text` gives no
exact run), :meth:`IntentionAgent.locate` asks ``pcagent/intention`` for the first and last
words of the span among the OCR lines, finds each with :func:`find_text`, and the selection is a
drag from the start's first word to the end's last word. When the decision agent quoted the
text, no model is asked (the OCR match is already exact).

It reads the screen's OCR text only; its reply is checked (both ends found on screen, the end
not before the start in reading order) and, when it does not check out after the retries, the
selection is left as the decision agent wrote it, for the env to try (and the reflection agent
to judge).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentlab.agents.asker import RoleAsker
from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.envs.ocr import OcrBox, TextMatch, find_text
from agentlab.envs.base import clip
from agentlab.errors import ActionParseError

_FIELD = re.compile(r"^[\s>*#_-]*(start|end)\s*[*_]*\s*:\s*[*_]*\s*(.+?)\s*$", re.I | re.M)


@dataclass(frozen=True)
class Span:
    """Where the intended text starts and ends on screen, and the words the model gave for each."""

    start_words: str
    end_words: str
    start: TextMatch
    end: TextMatch

    @property
    def points(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The drag: inside the left edge of the start's first word to the right edge of the end's last."""
        return self.start.start, self.end.end

    def record(self) -> dict[str, object]:
        """What the step record keeps of it (``info["ocr_target"]["intention"]``)."""
        return {"start": self.start_words, "end": self.end_words, "start_ocr": self.start.text,
                "end_ocr": self.end.text}


def parse_span(reply: str) -> tuple[str, str]:
    """``Start: ...`` and ``End: ...`` (quotes around either are dropped)."""
    found = {m.group(1).lower(): m.group(2).strip().strip("\"'“”‘’`").strip() for m in _FIELD.finditer(reply or "")}
    missing = [k for k in ("start", "end") if not found.get(k)]
    if missing:
        raise ActionParseError(f"no {' and no '.join(missing)} line in the reply {clip(' '.join((reply or '').split()), 200)!r}")
    return found["start"], found["end"]


def _before(a: TextMatch, b: TextMatch) -> bool:
    """Whether match ``a`` starts no later than ``b`` ends, in reading order (lines top to bottom)."""
    ax, ay, _, ah = a.bbox
    bx, by, bw, bh = b.bbox
    if ay + ah // 2 < by:  # a's line is above b's
        return True
    if by + bh // 2 < ay:
        return False
    return ax <= bx + bw


class IntentionAgent:
    """Asks ``pcagent/intention`` for the span a description means, among the OCR lines."""

    def __init__(self, asker: RoleAsker[PCAgentConfig]) -> None:
        self.asker = asker

    def locate(self, description: str, subtask: str, boxes: list[OcrBox], max_lines: int = 60) -> tuple[Span | None, str]:
        """The span ``description`` means on the screen whose OCR boxes are ``boxes``, and the
        model's last reply (or why nothing was asked); None when no reply checked out."""
        lines = [b for b in boxes if b.level == "line"][:max_lines]
        if not lines:
            return None, "no OCR text on screen to choose from"
        span: list[Span] = []

        def on_screen(words: tuple[str, str]) -> str | None:
            start, end = (find_text(boxes, w) for w in words)
            if start is None or end is None:
                gone = [w for w, m in zip(words, (start, end)) if m is None]
                return f"not on the screen: {', '.join(repr(g) for g in gone)}; copy words from the lines shown"
            if not _before(start, end):
                return f"{words[1]!r} comes before {words[0]!r} on the screen; the end must come after the start"
            span[:] = [Span(words[0], words[1], start, end)]
            return None

        asked = self.asker.ask("intention", "pcagent/intention",
                               {"subtask": subtask, "target": description, "lines": "\n".join(b.text for b in lines)},
                               parse_span, checks=[on_screen])
        last = asked.attempts[-1].reply if asked.attempts else ""
        return (span[0] if asked.value is not None and span else None), last
