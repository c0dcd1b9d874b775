"""Words and lines on a screen, with their boxes: OCR for agents that find things by their text.

Agent S2's *textual* grounding expert selects a span by the words it contains, and PC-Agent's
active perception adds OCR text boxes to the accessibility elements so text with no element
of its own (a paragraph in a document, a cell's content) can be aimed at. Both read a
screenshot through :func:`read_screen`.

Why the preprocessing: tesseract on a raw Xvfb screenshot (small UI text on large flat
areas) finds nothing with its default page mode; greyscale, a 2x upscale and sparse-text
mode (``--psm 11``) find UI words reliably (platform notes). Boxes are mapped back to screen
pixels. Words are grouped into lines geometrically (same row, small gaps), because sparse
mode puts each word in a block of its own.

``bbox`` is ``(x, y, width, height)`` in screen pixels everywhere in this module (the
``agentlab desktop observe --ocr --json`` contract), unlike :class:`~agentlab.envs.base.Element`'s
corner form.
"""

from __future__ import annotations

import difflib
import logging
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import EnvironmentUnavailableError

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

log = logging.getLogger(__name__)

Level = Literal["word", "line"]


@dataclass(frozen=True)
class OcrBox:
    """One recognised word or line."""

    text: str
    bbox: tuple[int, int, int, int]  #: x, y, width, height in screen pixels
    conf: float  #: tesseract's confidence 0-100 (a line: its words' mean)
    level: Level = "word"

    @property
    def center(self) -> tuple[int, int]:
        x, y, w, h = self.bbox
        return x + w // 2, y + h // 2

    @property
    def corners(self) -> tuple[int, int, int, int]:
        """``x1, y1, x2, y2`` (the form :class:`~agentlab.envs.base.Element` uses)."""
        x, y, w, h = self.bbox
        return x, y, x + w, y + h

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "bbox": list(self.bbox), "conf": round(self.conf, 1), "level": self.level}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OcrBox:
        x, y, w, h = (int(v) for v in d["bbox"])
        return cls(str(d["text"]), (x, y, w, h), float(d.get("conf", 0.0)), d.get("level", "word"))


@dataclass(frozen=True)
class TextMatch:
    """Where a phrase was found: the union box of the matched words, and how well it matched."""

    text: str  #: the words on screen that matched
    bbox: tuple[int, int, int, int]  #: x, y, width, height
    score: float  #: 1.0 for an exact word sequence, else difflib's ratio against a line
    words: tuple[OcrBox, ...]

    @property
    def start(self) -> tuple[int, int]:
        """Just inside the left edge of the first word, vertically centred (where a drag to select starts)."""
        x, y, _, h = self.words[0].bbox
        return x + 1, y + h // 2

    @property
    def end(self) -> tuple[int, int]:
        """Just inside the right edge of the last word."""
        x, y, w, h = self.words[-1].bbox
        return x + max(w - 1, 1), y + h // 2


def ocr_problem() -> str | None:
    """Why OCR cannot run here (one line), or None when it can."""
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return "pytesseract is not installed (pip install 'agentlab[office]')"
    if shutil.which("tesseract") is None:
        return "the tesseract program is not installed (Debian: apt-get install tesseract-ocr; scripts/sysdeps.sh)"
    return None


def _union(boxes: list[OcrBox] | tuple[OcrBox, ...]) -> tuple[int, int, int, int]:
    x1 = min(b.bbox[0] for b in boxes)
    y1 = min(b.bbox[1] for b in boxes)
    x2 = max(b.bbox[0] + b.bbox[2] for b in boxes)
    y2 = max(b.bbox[1] + b.bbox[3] for b in boxes)
    return x1, y1, x2 - x1, y2 - y1


def group_lines(words: list[OcrBox]) -> list[OcrBox]:
    """Lines made of words on the same row with gaps under ~1.5 word heights, top to bottom."""
    rows: list[list[OcrBox]] = []
    for w in sorted(words, key=lambda b: (b.center[1], b.bbox[0])):
        for row in rows:
            ref = row[-1]
            if abs(ref.center[1] - w.center[1]) <= max(3, min(ref.bbox[3], w.bbox[3]) // 2):
                row.append(w)
                break
        else:
            rows.append([w])
    lines: list[OcrBox] = []
    for row in rows:
        row.sort(key=lambda b: b.bbox[0])
        current = [row[0]]
        for w in row[1:]:
            prev = current[-1]
            gap = w.bbox[0] - (prev.bbox[0] + prev.bbox[2])
            if gap > 1.5 * max(prev.bbox[3], w.bbox[3]):
                lines.append(_line(current))
                current = [w]
            else:
                current.append(w)
        lines.append(_line(current))
    lines.sort(key=lambda b: (b.bbox[1], b.bbox[0]))
    return lines


def _line(words: list[OcrBox]) -> OcrBox:
    return OcrBox(" ".join(w.text for w in words), _union(words), sum(w.conf for w in words) / len(words), "line")


def read_words(image: Image.Image, *, scale: int = 2, psm: int = 11, min_conf: float = 40.0) -> list[OcrBox]:
    """The words tesseract reads on ``image`` (preprocessed as above), boxes in ``image``'s pixels."""
    if problem := ocr_problem():
        raise EnvironmentUnavailableError(f"OCR: {problem}")
    import pytesseract
    from PIL import Image as PILImage
    from PIL import ImageOps

    grey = ImageOps.grayscale(image)
    if scale != 1:
        grey = grey.resize((grey.width * scale, grey.height * scale), PILImage.Resampling.LANCZOS)
    data = pytesseract.image_to_data(grey, config=f"--psm {psm}", output_type=pytesseract.Output.DICT)
    out: list[OcrBox] = []
    for i, text in enumerate(data["text"]):
        text = (text or "").strip()
        conf = float(data["conf"][i])
        if not text or conf < min_conf:
            continue
        x, y, w, h = (int(data[k][i]) // scale for k in ("left", "top", "width", "height"))
        out.append(OcrBox(text, (x, y, max(w, 1), max(h, 1)), conf, "word"))
    return out


def read_screen(image: Image.Image, **kwargs: Any) -> list[OcrBox]:
    """Words, then lines, on a screenshot (see :func:`read_words` for the options)."""
    words = read_words(image, **kwargs)
    return words + group_lines(words)


_WORD = re.compile(r"[\w%$€£.,:/@-]+", re.UNICODE)


def _norm(text: str) -> str:
    return re.sub(r"[^\w%$€£@/:-]+", "", text.lower())


def find_text(boxes: list[OcrBox], phrase: str, *, min_score: float = 0.6) -> TextMatch | None:
    """The on-screen words that spell ``phrase``: an exact run of words in a line first (case
    and punctuation ignored), else the line (or run of words) most similar to it."""
    target = [_norm(t) for t in phrase.split() if _norm(t)]
    if not target:
        return None
    words = [b for b in boxes if b.level == "word"]
    lines = group_lines(words) if words else []
    # each line's words in reading order
    by_line: list[list[OcrBox]] = []
    for line in lines:
        lx, ly, lw, lh = line.bbox
        members = [w for w in words if lx <= w.center[0] <= lx + lw and ly <= w.center[1] <= ly + lh]
        by_line.append(sorted(members, key=lambda b: b.bbox[0]))
    n = len(target)
    for members in by_line:
        normed = [_norm(w.text) for w in members]
        for i in range(len(members) - n + 1):
            if normed[i:i + n] == target:
                run = tuple(members[i:i + n])
                return TextMatch(" ".join(w.text for w in run), _union(run), 1.0, run)
    best: TextMatch | None = None
    want = " ".join(target)
    for members in by_line:
        for i in range(len(members)):
            for j in range(i + 1, min(len(members), i + n + 2) + 1):
                run = tuple(members[i:j])
                score = difflib.SequenceMatcher(None, want, " ".join(_norm(w.text) for w in run)).ratio()
                if best is None or score > best.score:
                    best = TextMatch(" ".join(w.text for w in run), _union(run), score, run)
    return best if best is not None and best.score >= min_score else None


def ocr_lines_text(boxes: list[OcrBox], limit: int = 60) -> str:
    """The lines as prompt text: ``"Total: 42" at (x, y, w, h)`` one per line."""
    lines = [b for b in boxes if b.level == "line"][:limit]
    if not lines:
        return "(no text recognised on screen)"
    return "\n".join(f'"{b.text}" at ({b.bbox[0]}, {b.bbox[1]}, {b.bbox[2]}, {b.bbox[3]})' for b in lines)
