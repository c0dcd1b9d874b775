"""What Agent S2's roles see of one screen: the observation, its OCR read once, and the text form.

A model that takes images gets the screenshot (attached by :class:`~agentlab.agents.asker.RoleAsker`);
a text-only model gets :meth:`Screen.text`: the accessibility elements and, with ``ocr``, the
lines tesseract reads. OCR of a 1280x800 screen takes ~2 s, so a screen is read at most once,
whether the worker's observation or the textual expert asked first.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from agentlab.envs.base import Observation
from agentlab.envs.ocr import OcrBox, ocr_lines_text, ocr_problem, read_screen
from agentlab.errors import EnvironmentUnavailableError

log = logging.getLogger(__name__)

MAX_TREE_TEXT = 2000  #: characters of the accessibility tree's free text shown


@dataclass
class Screen:
    """One observation as the roles see it."""

    obs: Observation
    _ocr: list[OcrBox] | None = field(default=None, repr=False)

    def ocr(self) -> list[OcrBox]:
        """Words and lines on the screenshot (read on first use); raises when OCR cannot run."""
        if self._ocr is None:
            if self.obs.screenshot is None:
                raise EnvironmentUnavailableError("this screen has no screenshot to read")
            self._ocr = read_screen(self.obs.screenshot)
        return self._ocr

    @property
    def size(self) -> tuple[int, int]:
        return self.obs.screenshot.size if self.obs.screenshot is not None else (0, 0)

    def text(self, max_elements: int, with_ocr: bool) -> str:
        """The text observation: elements, the tree's free text, and OCR lines when asked for."""
        w, h = self.size
        lines = [f"Screen {w}x{h}. Elements (role \"name\"):"]
        els = self.obs.elements[:max_elements]
        lines += [e.label() for e in els] or ["(no labelled elements)"]
        if len(self.obs.elements) > max_elements:
            lines.append(f"... and {len(self.obs.elements) - max_elements} more")
        if self.obs.text:
            lines.append(self.obs.text.strip()[:MAX_TREE_TEXT])
        if with_ocr:
            problem = ocr_problem()
            if problem is None:
                lines += ["Text read on screen (OCR):", ocr_lines_text(self.ocr())]
            else:
                log.warning("no OCR text in the observation: %s", problem)
        return "\n".join(lines)
