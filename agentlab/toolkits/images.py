"""The images toolkit (ImageAgent): resize, crop, rotate, mirror, convert and adjust pictures with Pillow.

Every tool reads one image and writes the result to ``out`` (the same name overwrites it); the
output's format follows its extension.

Sizes are bounded: an image of more than :data:`MAX_PIXELS` pixels is neither read nor made (a
``scale(..., 1100, ...)`` of a photo once made a 122-megapixel picture; Pillow only warns, and
only when it reads one), and the result is written beside ``out`` and renamed over it, so an output
refused for its size (:data:`~agentlab.toolkits.base.MAX_OUTPUT_BYTES`) leaves ``out`` as it was.
"""

from __future__ import annotations

import errno
import warnings
from pathlib import Path
from typing import Annotated, Any

from agentlab.errors import AgentlabError
from agentlab.fileio import atomic_path
from agentlab.toolkits.base import MAX_OUTPUT_BYTES, Slot, Toolkit, ToolError, file_slot, workspace_file

#: the largest picture (width x height) a tool reads or writes: a 48-megapixel camera's photo
#: fits (8000 x 6000), and it costs at most 200 MB in memory as RGBA
MAX_PIXELS = 50_000_000

_EXT = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")
Image_ = Annotated[str, file_slot(*_EXT)]
Out = Annotated[str, file_slot(*_EXT, new=True)]
Pixels = Annotated[int, Slot("number")]
Factor = Annotated[float, Slot("number")]


def _describe(path: Path) -> str:
    from PIL import Image

    refused = f"over the {MAX_PIXELS} pixel limit: the tools refuse it"
    try:
        with warnings.catch_warnings():  # only the header is read; its size is reported below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                over = f" ({refused})" if im.width * im.height > MAX_PIXELS else ""
                return f"{path.name}: {im.width}x{im.height} {im.mode} {im.format}{over}"
    except Image.DecompressionBombError:  # Pillow's own guard, where it was lowered
        return f"{path.name}: {refused}"


def _check_pixels(width: int, height: int, what: str) -> None:
    if width < 1 or height < 1:
        raise ToolError(f"{what} would be {width}x{height} pixels; both sides must be at least 1")
    if width * height > MAX_PIXELS:
        raise ToolError(f"{what} would be {width}x{height} = {width * height} pixels, over the limit of "
                        f"{MAX_PIXELS} pixels; choose a smaller size")


kit = Toolkit("images", "pictures (.png, .jpg, .bmp, .webp, ...) with Pillow", describe=_describe,
              examples=(('Resize cover.png to 300x200 and save it as cover_small.png.', "resize('cover.png', 300, 200, 'cover_small.png')\ndone()"), ('Turn chart.jpg upside down.', "rotate('chart.jpg', 180, 'chart.jpg')\ndone()"), ('Save diagram.png as a JPEG called diagram.jpg.', "convert('diagram.png', 'diagram.jpg')\ndone()"),))


def _open(file: str) -> Any:
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow's own guard (it errors at twice this, warns above it)
    workspace_file(file, "image")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # refused just below
            im = Image.open(file)
    except Image.DecompressionBombError:
        raise ToolError(f"{file} is over the limit of {MAX_PIXELS} pixels; it cannot be read") from None
    try:
        _check_pixels(im.width, im.height, file)  # from the header, before the pixels are decoded
    except ToolError:
        im.close()
        raise
    im.load()
    return im


def _save(im: Any, out: str) -> str:
    """Write ``im`` to ``out`` through a temporary file beside it (:func:`atomic_path`): a write
    refused for its size (the tool program's file-size limit) or by a full disk leaves ``out`` as
    it was."""
    from PIL import Image

    _check_pixels(im.width, im.height, out)
    fmt = Path(out).suffix.lower()
    if fmt in (".jpg", ".jpeg") and im.mode not in ("RGB", "L"):
        im = im.convert("RGB")
    limit = f"the limit of {MAX_OUTPUT_BYTES // 2**20} MB"
    try:
        with atomic_path(out, suffix=fmt) as tmp:
            im.save(tmp, format=Image.registered_extensions().get(fmt))
            if tmp.stat().st_size > MAX_OUTPUT_BYTES:  # where no file-size limit applies (a direct call)
                raise ToolError(f"{out} would be larger than {limit}; it was not written")
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise ToolError(f"{out} would be larger than {limit}; it was not written") from None
        raise ToolError(f"{out} was not written ({exc.strerror or exc}); it is left as it was") from None
    except AgentlabError as exc:  # a full disk
        raise ToolError(exc.message) from None
    return f"{out}: {im.width}x{im.height} {im.mode}"


@kit.tool
def resize(file: Image_, width: Pixels, height: Pixels, out: Out) -> str:
    """Resize an image to width x height pixels."""
    _check_pixels(int(width), int(height), out)
    return _save(_open(file).resize((int(width), int(height))), out)


@kit.tool
def resize_to_width(file: Image_, width: Pixels, out: Out) -> str:
    """Resize an image to a width, keeping its proportions."""
    im = _open(file)
    h = max(1, round(im.height * int(width) / im.width))
    _check_pixels(int(width), h, out)
    return _save(im.resize((int(width), h)), out)


@kit.tool
def scale(file: Image_, percent: Factor, out: Out) -> str:
    """Scale an image by a percentage (200 doubles it, 50 halves it)."""
    im = _open(file)
    f = float(percent) / 100.0
    size = (max(1, round(im.width * f)), max(1, round(im.height * f)))
    _check_pixels(*size, out)  # before the pixels are made
    return _save(im.resize(size), out)


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
def rotate_clockwise(file: Image_, degrees: Pixels, out: Out) -> str:
    """Rotate an image clockwise (to the right) by 90, 180 or 270 degrees."""
    # its own tool, not rotate's 270: a request says "90 degrees clockwise", and a number slot
    # offers the numbers the request says, so 270 was never a value the model could give
    return rotate(file, (360 - int(degrees) % 360) % 360, out)


@kit.tool
def mirror(file: Image_, out: Out) -> str:
    """Mirror an image left to right (flip it horizontally), as seen in a mirror."""
    from PIL import Image

    return _save(_open(file).transpose(Image.Transpose.FLIP_LEFT_RIGHT), out)


@kit.tool
def flip_vertical(file: Image_, out: Out) -> str:
    """Flip an image top to bottom (a vertical flip: the top row becomes the bottom row)."""
    from PIL import Image

    return _save(_open(file).transpose(Image.Transpose.FLIP_TOP_BOTTOM), out)


@kit.tool
def invert(file: Image_, out: Out) -> str:
    """Invert an image's colours (a negative: black becomes white); transparency is kept."""
    from PIL import Image, ImageOps

    im = _open(file)
    if im.mode in ("RGBA", "LA"):
        *bands, alpha = im.split()
        inverted = ImageOps.invert(Image.merge("RGB" if im.mode == "RGBA" else "L", bands))
        inverted.putalpha(alpha)
        return _save(inverted, out)
    return _save(ImageOps.invert(im.convert("RGB") if im.mode not in ("RGB", "L") else im), out)


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
