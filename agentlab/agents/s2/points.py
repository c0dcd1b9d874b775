"""A grounding model's answer read as a point on the screen, whatever shape the answer takes.

Why tolerant: grounding models each answer their own way -- ``(x, y)``, ``[x, y]``,
``<point>x y</point>``, ``click(x=.., y=..)``, UI-TARS' ``click(start_box='(x,y)')``, Qwen2.5-VL's
``{"point_2d": [x, y]}`` or a box ``{"bbox_2d": [x1, y1, x2, y2]}`` (its centre is the point) --
and a prompt asking for one shape does not change what a model was trained to write. Two
coordinate conventions are in use (:data:`Coords`): absolute pixels of the image the model was
sent, or a 0-1000 grid over it (``relative``; a pair of fractions ``0.42, 0.17`` is read as that
too). The point is mapped back onto the screen, whose size may differ from the sent image's
(it was downscaled, :mod:`agentlab.llm.screens`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from agentlab.errors import ActionParseError

#: how a grounding model gives its point: pixels of the sent image, or the 0-1000 grid
Coords = Literal["pixels", "relative"]
GRID = 1000

_NUM = r"-?\d+(?:\.\d+)?"
_GROUP = re.compile(rf"[\(\[]\s*({_NUM})\s*[,; ]\s*({_NUM})(?:\s*[,; ]\s*({_NUM})\s*[,; ]\s*({_NUM}))?\s*[\)\]]")
_POINT_TAG = re.compile(rf"<point>\s*\(?\s*({_NUM})\s*[, ]\s*({_NUM})\s*\)?\s*</point>", re.I)
_XY = re.compile(rf"\bx\s*[=:]\s*['\"]?({_NUM}).*?\by\s*[=:]\s*['\"]?({_NUM})", re.I | re.S)
_JSON = re.compile(r"\{[^{}]*\}")
_POINT_KEYS = ("point_2d", "point", "coordinate", "coordinates", "position", "click")
_BOX_KEYS = ("bbox_2d", "bbox", "box")


def _pair(values: list[Any]) -> tuple[float, float] | None:
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(values) == 2 and len(nums) == 2:
        return nums[0], nums[1]
    if len(values) == 4 and len(nums) == 4:  # a box: its centre
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    return None


def _from_json(obj: Any) -> tuple[float, float] | None:
    if isinstance(obj, list):
        if obj and isinstance(obj[0], dict):
            return _from_json(obj[0])
        return _pair(obj)
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("x"), (int, float)) and isinstance(obj.get("y"), (int, float)):
        return float(obj["x"]), float(obj["y"])
    for key in (*_POINT_KEYS, *_BOX_KEYS):
        value = obj.get(key)
        if isinstance(value, list) and (p := _pair(value)) is not None:
            return p
        if isinstance(value, str) and (p := _from_text(value)) is not None:
            return p
    return None


def _from_text(text: str) -> tuple[float, float] | None:
    for chunk in _JSON.findall(text):
        try:
            if (p := _from_json(json.loads(chunk))) is not None:
                return p
        except ValueError:
            continue
    if m := _POINT_TAG.search(text):
        return float(m.group(1)), float(m.group(2))
    if m := _XY.search(text):
        return float(m.group(1)), float(m.group(2))
    if m := _GROUP.search(text):
        nums = [float(g) for g in m.groups() if g is not None]
        return _pair(list(nums))
    nums = re.findall(_NUM, text)
    return (float(nums[0]), float(nums[1])) if len(nums) >= 2 else None


def read_point(reply: str) -> tuple[float, float]:
    """The point a reply gives, in the model's own coordinates; :class:`ActionParseError` when none."""
    point = _from_text(reply or "")
    if point is None:
        raise ActionParseError(f"no point (x, y) in the reply {' '.join((reply or '').split())[:120]!r}")
    return point


def to_screen(point: tuple[float, float], coords: Coords, sent: tuple[int, int],
              screen: tuple[int, int]) -> tuple[int, int]:
    """A model's point mapped onto the screen: pixels of the ``sent`` image scaled to ``screen``,
    or the 0-1000 grid (fractions 0-1 accepted) over it; off the image is a problem to feed back."""
    x, y = point
    sw, sh = screen
    if coords == "relative":
        scale = 1.0 if (x <= 1.0 and y <= 1.0 and not (x.is_integer() and y.is_integer())) else GRID
        if not (0 <= x <= scale and 0 <= y <= scale):
            raise ActionParseError(f"({x:g}, {y:g}) is off the 0-{GRID} grid")
        return min(int(x / scale * sw), sw - 1), min(int(y / scale * sh), sh - 1)
    iw, ih = sent
    if not (0 <= x < iw and 0 <= y < ih):
        raise ActionParseError(f"({x:g}, {y:g}) is off the {iw}x{ih} screenshot")
    return min(round(x * sw / iw), sw - 1), min(round(y * sh / ih), sh - 1)


def parse_point(reply: str, size: tuple[int, int], coords: Coords = "pixels",
                sent: tuple[int, int] | None = None) -> tuple[int, int]:
    """The reply's point on a ``size`` screen (``sent``: the size of the image the model saw, default ``size``)."""
    return to_screen(read_point(reply), coords, sent or size, size)
