"""Active perception: accessibility elements plus OCR text boxes, one numbered list, and back again.

PC-Agent's active perception module gives the decision agent two kinds of targets: the
interactive elements of the accessibility tree (with their roles and names), and the text on
screen that has no element of its own (a cell's content, a label, a paragraph), found by OCR
(:func:`agentlab.envs.ocr.read_screen`). Both are listed as numbered items, the OCR lines
numbered after the env's elements, so ``click(12)`` may aim at a line of text.

:meth:`Perception.resolve` turns what the decision agent wrote into what the env can carry
out: an action on an OCR item's number becomes the same action at that box's centre, and
``select_text("...")`` becomes a drag over the OCR words that spell it (the paper's
text-span selection through OCR); text OCR does not find is left to the env, which selects
through the accessibility tree when an element shows it.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Drag, Pointer, Scroll, SelectText, Type
from agentlab.envs.base import Element, Observation
from agentlab.envs.marks import draw_marks
from agentlab.envs.ocr import OcrBox, find_text, ocr_problem, read_screen
from agentlab.errors import EnvironmentUnavailableError, InvalidActionError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextItem:
    """An OCR line listed as item ``number``."""

    number: int
    box: OcrBox

    def label(self) -> str:
        x, y, w, h = self.box.bbox
        return f'[{self.number}] text "{self.box.text}" at ({x}, {y}, {w}, {h})'

    def as_element(self) -> Element:
        x1, y1, x2, y2 = self.box.corners
        return Element(id=self.number, bbox=(x1, y1, x2, y2), role="text (OCR)", text=self.box.text,
                       resource_id=None, clickable=False, uid=f"ocr:{self.box.text}")


@dataclass
class Perception:
    """One screen as the decision agent sees it."""

    observation: Observation
    max_elements: int
    ocr: list[OcrBox] = field(default_factory=list)  #: words then lines (empty with OCR off)
    items: list[TextItem] = field(default_factory=list)  #: the listed OCR lines
    note: str = ""  #: why OCR is missing, when it is

    @property
    def elements(self) -> list[Element]:
        return self.observation.elements[: self.max_elements]

    def listing(self) -> str:
        """The prompt text: numbered elements, then numbered OCR lines."""
        lines = [e.label() for e in self.elements] or ["(no interactive elements)"]
        if len(self.observation.elements) > self.max_elements:
            lines.append(f"... and {len(self.observation.elements) - self.max_elements} more elements not listed")
        out = "Interactive elements:\n" + "\n".join(lines)
        if self.items:
            out += "\n\nText on screen (OCR):\n" + "\n".join(i.label() for i in self.items)
        elif self.note:
            out += f"\n\n(no OCR text: {self.note})"
        elif self.observation.text and not self.ocr:
            out += "\n\n" + self.observation.text
        return out

    def marked_screenshot(self) -> Image.Image | None:
        """Set-of-marks: the elements' and OCR lines' numbers drawn on the screenshot."""
        shot = self.observation.screenshot
        if shot is None:
            return None
        return draw_marks(shot, [*self.elements, *(i.as_element() for i in self.items)])

    def item(self, number: int | None) -> TextItem | None:
        return next((i for i in self.items if i.number == number), None) if number is not None else None

    def resolve(self, action: Action) -> tuple[Action, dict[str, Any] | None]:
        """The action the env can carry out, and what OCR target it was aimed at (None: unchanged)."""
        if isinstance(action, SelectText) and action.text and action.start is None and action.element is None and self.ocr:
            match = find_text(self.ocr, action.text)
            if match is None:
                return action, None  # the env may still find it in an element's text
            return (dataclasses.replace(action, start=match.start, end=match.end),
                    {"ocr": match.text, "bbox": list(match.bbox), "score": round(match.score, 3)})
        if isinstance(action, Pointer) and (item := self.item(action.element)) is not None:
            x, y = item.box.center
            return dataclasses.replace(action, element=None, x=x, y=y), self._target(item)
        if isinstance(action, Scroll) and (item := self.item(action.element)) is not None:
            x, y = item.box.center
            return dataclasses.replace(action, element=None, x=x, y=y), self._target(item)
        if isinstance(action, Drag):
            src, dst = self.item(action.source), self.item(action.target)
            if src is None and dst is None:
                return action, None
            changes: dict[str, Any] = {}
            if src is not None:
                changes.update(source=None, start=src.box.center)
            if dst is not None:
                changes.update(target=None, end=dst.box.center)
            return dataclasses.replace(action, **changes), {"ocr": [i.box.text for i in (src, dst) if i is not None]}
        if isinstance(action, Type) and self.item(action.element) is not None:
            raise InvalidActionError(f"[{action.element}] is text on screen, not a field: click it first, then type(\"...\")")
        return action, None

    @staticmethod
    def _target(item: TextItem) -> dict[str, Any]:
        return {"ocr": item.box.text, "bbox": list(item.box.bbox)}


def perceive(observation: Observation, *, max_elements: int, ocr: bool, max_ocr_lines: int) -> Perception:
    """Elements (and, with ``ocr``, the OCR boxes of the screenshot) of one observation.

    OCR that cannot run here (no tesseract) is a note in the listing, not an error: the agent
    carries on with the elements, as the ``ocr=False`` ablation does.
    """
    p = Perception(observation, max_elements)
    if not ocr or observation.screenshot is None:
        return p
    problem = ocr_problem()
    if problem:
        p.note = problem
        log.warning("PC-Agent without OCR text: %s", problem)
        return p
    try:
        p.ocr = read_screen(observation.screenshot)
    except EnvironmentUnavailableError as exc:
        p.note = exc.message
        return p
    first = max((e.id for e in observation.elements), default=0) + 1
    lines = [b for b in p.ocr if b.level == "line"][:max_ocr_lines]
    p.items = [TextItem(first + i, b) for i, b in enumerate(lines)]
    return p
