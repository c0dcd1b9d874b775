"""Set-of-marks overlay: draw each element's number on a copy of the screenshot.

The model refers to elements by these numbers (``tap(5)``), and a vision model must still read
what it would click: a tag drawn over an element's own text hides it (on a dense LibreOffice
Calc menu a tag at each item's top-left corner turned "New Headers" into "ew Headers"). So
each element gets a thin outline and a small numbered tag placed *where there is no text*:
several spots around and at the corners of the box are tried, and the tag goes where it covers
the fewest "ink" pixels of the screenshot (edges: letters, icons, borders) and the fewest
tags already placed. On a flat area next to or above the element the tag costs nothing, so
an element's label stays readable (tested with OCR, ``tests/envs/test_marks.py``). Shared by
the Android and desktop envs, PC-Agent's perception and the trajectory viewer's screenshots.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from agentlab.envs.base import Element

#: Tag colours: clickable elements in orange, focus-only ones (text fields) in blue.
CLICKABLE_RGB = (255, 140, 0)
FOCUSABLE_RGB = (30, 110, 255)
#: a screenshot pixel whose edge strength is above this counts as ink (text, icon, border)
_INK_EDGE = 40
#: what covering another tag costs per pixel, against one pixel of ink
_TAG_OVERLAP_COST = 3


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


class _Ink:
    """How much of the screenshot's text and drawing a rectangle covers (an integral image of its edges)."""

    def __init__(self, image: Image.Image) -> None:
        edges = np.asarray(image.convert("L").filter(ImageFilter.FIND_EDGES), dtype=np.int32) > _INK_EDGE
        self.w, self.h = image.size
        self.sums = np.zeros((self.h + 1, self.w + 1), dtype=np.int64)
        self.sums[1:, 1:] = edges.cumsum(0).cumsum(1)

    def __call__(self, box: tuple[int, int, int, int]) -> int:
        x1, y1, x2, y2 = (max(0, min(v, lim)) for v, lim in zip(box, (self.w, self.h, self.w, self.h)))
        if x2 <= x1 or y2 <= y1:
            return 0
        s = self.sums
        return int(s[y2, x2] - s[y1, x2] - s[y2, x1] + s[y1, x1])


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0


def tag_spots(bbox: tuple[int, int, int, int], tw: int, th: int, screen: tuple[int, int]) -> list[tuple[int, int]]:
    """Top-left corners a ``tw`` x ``th`` tag may take for an element at ``bbox``, best first when
    all are equally free: just outside the top-left corner, outside the left edge, at the inner
    top-right corner, outside the top-right, outside the right edge, under the bottom-left corner,
    and last the inner top-left corner (where text usually starts). Kept on the screen."""
    x1, y1, x2, y2 = bbox
    spots = [(x1, y1 - th), (x1 - tw, y1), (x2 - tw, y1), (x2 - tw, y1 - th), (x2, y1), (x1, y2), (x1, y1)]
    w, h = screen
    out: list[tuple[int, int]] = []
    for x, y in spots:
        p = (min(max(x, 0), max(w - tw, 0)), min(max(y, 0), max(h - th, 0)))
        if p not in out:
            out.append(p)
    return out


def draw_marks(
    image: Image.Image,
    elements: Sequence[Element],
    *,
    font_size: int | None = None,
    boxes: bool = True,
    alpha: int = 220,
) -> Image.Image:
    """Return a new RGB image with a thin box and a numbered tag per element over ``image``,
    each tag where it hides the least text (see the module docstring)."""
    base = image.convert("RGBA")
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    size = font_size or max(11, min(16, min(base.size) // 60))
    font = _font(size)
    ink = _Ink(image)
    placed: list[tuple[int, int, int, int]] = []
    for el in elements:
        rgb = CLICKABLE_RGB if el.clickable else FOCUSABLE_RGB
        x1, y1, x2, y2 = el.bbox
        if boxes:
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), outline=(*rgb, alpha), width=1)
        label = str(el.id)
        tb = draw.textbbox((0, 0), label, font=font)
        pad = 2
        tw, th = int(tb[2] - tb[0]) + 2 * pad, int(tb[3] - tb[1]) + 2 * pad

        def cost(spot: tuple[int, int]) -> int:
            rect = (spot[0], spot[1], spot[0] + tw, spot[1] + th)
            return ink(rect) + _TAG_OVERLAP_COST * sum(_overlap(rect, p) for p in placed)

        spots = tag_spots(el.bbox, tw, th, base.size)
        tx, ty = min(spots, key=cost)  # min() keeps the first of equal costs: the preference order
        placed.append((tx, ty, tx + tw, ty + th))
        draw.rectangle((tx, ty, tx + tw - 1, ty + th - 1), fill=(*rgb, alpha), outline=(0, 0, 0, 255))
        draw.text((tx + pad - tb[0], ty + pad - tb[1]), label, fill=(255, 255, 255, 255), font=font)
    return Image.alpha_composite(base, overlay).convert("RGB")
