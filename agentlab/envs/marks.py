"""Set-of-marks overlay: draw each element's number on a copy of the screenshot.

The model refers to elements by these numbers (``tap(5)``), so the labels must be legible
on any background: a filled tag with a contrasting outline at the element's top-left
corner, and a thin box around the element. Shared by the Android and desktop envs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from agentlab.envs.base import Element

#: Tag colours: clickable elements in orange, focus-only ones (text fields) in blue.
CLICKABLE_RGB = (255, 140, 0)
FOCUSABLE_RGB = (30, 110, 255)


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


def draw_marks(
    image: Image.Image,
    elements: Sequence[Element],
    *,
    font_size: int | None = None,
    boxes: bool = True,
    alpha: int = 200,
) -> Image.Image:
    """Return a new RGB image with numbered tags (and optional boxes) over ``image``."""
    base = image.convert("RGBA")
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    size = font_size or max(12, min(base.size) // 28)
    font = _font(size)
    for el in elements:
        rgb = CLICKABLE_RGB if el.clickable else FOCUSABLE_RGB
        x1, y1, x2, y2 = el.bbox
        if boxes:
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), outline=(*rgb, alpha), width=2)
        label = str(el.id)
        tb = draw.textbbox((0, 0), label, font=font)
        tw, th = tb[2] - tb[0], tb[3] - tb[1]
        pad = max(2, size // 5)
        # Keep the tag on screen even for elements touching the right/bottom edge.
        tx = min(max(x1, 0), base.size[0] - tw - 2 * pad)
        ty = min(max(y1, 0), base.size[1] - th - 2 * pad)
        draw.rectangle((tx, ty, tx + tw + 2 * pad, ty + th + 2 * pad), fill=(*rgb, alpha), outline=(0, 0, 0, 255))
        draw.text((tx + pad - tb[0], ty + pad - tb[1]), label, fill=(255, 255, 255, 255), font=font)
    return Image.alpha_composite(base, overlay).convert("RGB")
