"""The images toolkit (ImageAgent): resize, crop, rotate, convert and adjust pictures with Pillow.

Every tool reads one image and writes the result to ``out`` (the same name overwrites it); the
output's format follows its extension.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot

_EXT = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")
Image_ = Annotated[str, file_slot(*_EXT)]
Out = Annotated[str, file_slot(*_EXT, new=True)]
Pixels = Annotated[int, Slot("number")]
Factor = Annotated[float, Slot("number")]


def _describe(path: Path) -> str:
    from PIL import Image

    with Image.open(path) as im:
        return f"{path.name}: {im.width}x{im.height} {im.mode} {im.format}"


kit = Toolkit("images", "pictures (.png, .jpg, .bmp, .webp, ...) with Pillow", describe=_describe,
              examples=(('Resize cover.png to 300x200 and save it as cover_small.png.', "resize('cover.png', 300, 200, 'cover_small.png')\ndone()"), ('Turn chart.jpg upside down.', "rotate('chart.jpg', 180, 'chart.jpg')\ndone()"), ('Save diagram.png as a JPEG called diagram.jpg.', "convert('diagram.png', 'diagram.jpg')\ndone()"),))


def _open(file: str) -> Any:
    from PIL import Image

    if not Path(file).is_file():
        raise ToolError(f"no image {file!r} in the workspace")
    im = Image.open(file)
    im.load()
    return im


def _save(im: Any, out: str) -> str:
    fmt = Path(out).suffix.lower()
    if fmt in (".jpg", ".jpeg") and im.mode not in ("RGB", "L"):
        im = im.convert("RGB")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    im.save(out)
    return f"{out}: {im.width}x{im.height} {im.mode}"


@kit.tool
def resize(file: Image_, width: Pixels, height: Pixels, out: Out) -> str:
    """Resize an image to width x height pixels."""
    return _save(_open(file).resize((int(width), int(height))), out)


@kit.tool
def resize_to_width(file: Image_, width: Pixels, out: Out) -> str:
    """Resize an image to a width, keeping its proportions."""
    im = _open(file)
    h = max(1, round(im.height * int(width) / im.width))
    return _save(im.resize((int(width), h)), out)


@kit.tool
def scale(file: Image_, percent: Factor, out: Out) -> str:
    """Scale an image by a percentage (200 doubles it, 50 halves it)."""
    im = _open(file)
    f = float(percent) / 100.0
    return _save(im.resize((max(1, round(im.width * f)), max(1, round(im.height * f)))), out)


@kit.tool
def crop(file: Image_, left: Pixels, top: Pixels, right: Pixels, bottom: Pixels, out: Out) -> str:
    """Keep the box from (left, top) to (right, bottom) in pixels."""
    im = _open(file)
    if not (0 <= left < right <= im.width and 0 <= top < bottom <= im.height):
        raise ToolError(f"box ({left}, {top}, {right}, {bottom}) is outside the {im.width}x{im.height} image")
    return _save(im.crop((left, top, right, bottom)), out)


@kit.tool
def keep_top(file: Image_, pixels: Pixels, out: Out) -> str:
    """Keep the top band of an image, the given number of pixels high, at full width."""
    im = _open(file)
    return _save(im.crop((0, 0, im.width, min(int(pixels), im.height))), out)


@kit.tool
def rotate(file: Image_, degrees: Pixels, out: Out) -> str:
    """Rotate an image counter-clockwise by 90, 180 or 270 degrees (use 270 for 90 clockwise)."""
    from PIL import Image

    turns = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}
    if int(degrees) % 360 not in turns:
        raise ToolError("rotate by 90, 180 or 270 degrees")
    return _save(_open(file).transpose(turns[int(degrees) % 360]), out)


@kit.tool
def grayscale(file: Image_, out: Out) -> str:
    """Make an image black and white (greyscale)."""
    return _save(_open(file).convert("L"), out)


@kit.tool
def convert(file: Image_, out: Out) -> str:
    """Save an image in another format, given by the new file's extension (.png, .jpg, .webp ...)."""
    return _save(_open(file), out)


@kit.tool
def brightness(file: Image_, factor: Factor, out: Out) -> str:
    """Multiply every pixel value by a factor (0.5 halves the brightness, 2 doubles it)."""
    im = _open(file)
    return _save(im.point(lambda v: min(255, int(v * float(factor)))), out)
