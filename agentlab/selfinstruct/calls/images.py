"""Synthesized ImageAgent pairs: one or two random pictures (size, colours, format) and a request
to resize, scale, crop, rotate, mirror, invert, convert or adjust one, with every number written in the request."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import pick, polite

STEMS = ("photo", "logo", "banner", "chart", "icon", "cover", "scan", "diagram", "avatar", "poster", "map", "header")
EXTS = (".png", ".jpg", ".bmp", ".webp")


@dataclass
class Pic:
    file: str
    width: int
    height: int


def _pic(rng: random.Random, root: Path) -> Pic:
    from PIL import Image, ImageDraw

    w, h = rng.randrange(80, 480, 20), rng.randrange(60, 360, 20)
    name = f"{pick(rng, STEMS)}{pick(rng, ('', '_1', '_big', '2024'))}{pick(rng, EXTS)}"
    im = Image.new("RGB", (w, h), tuple(rng.randrange(40, 220) for _ in range(3)))
    draw = ImageDraw.Draw(im)
    draw.rectangle((w // 4, h // 4, w // 2, h // 2), fill=tuple(rng.randrange(256) for _ in range(3)))
    im.save(root / name)
    if rng.random() < 0.4:  # a second picture the request does not name
        other = f"{pick(rng, [s for s in STEMS if not name.startswith(s)])}{pick(rng, EXTS)}"
        Image.new("RGB", (64, 48), (10, 120, 200)).save(root / other)
    return Pic(name, w, h)


def _size(path: Path) -> tuple[int, int, str]:
    from PIL import Image

    with Image.open(path) as im:
        return im.width, im.height, im.mode


def _mean(path: Path) -> float:
    from PIL import Image, ImageStat

    with Image.open(path) as im:
        return float(sum(ImageStat.Stat(im.convert("RGB")).mean) / 3)


def _out(rng: random.Random, p: Pic, suffix: str) -> tuple[str, str]:
    """(the output file, how the request says it): the same file or a new name."""
    if rng.random() < 0.4:
        return p.file, pick(rng, ("", " (overwrite it)", " in place"))
    stem, ext = Path(p.file).stem, Path(p.file).suffix
    new = f"{stem}_{suffix}{ext}"
    return new, pick(rng, (f" and save it as {new}", f", saving the result to {new}", f" into {new}"))


def resize(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    w, h = rng.randrange(40, 400, 10), rng.randrange(40, 300, 10)
    out, said = _out(rng, p, "small" if w < p.width else "big")
    s = pick(rng, [f"Resize {p.file} to {w}x{h}{said}", f"Make {p.file} {w} by {h} pixels{said}",
                   f"Change the size of {p.file} to {w} wide and {h} high{said}"])

    def check(r: Path) -> str | None:
        got = _size(r / out)
        return None if got[:2] == (w, h) else f"size {got}"

    return Draft(polite(rng, s), (("resize", (p.file, w, h, out)),), check, "images.resize")


def resize_to_width(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    w = rng.randrange(40, 400, 10)
    out, said = _out(rng, p, f"w{w}")
    s = pick(rng, [f"Resize {p.file} to {w} pixels wide, keeping the aspect ratio{said}",
                   f"Make {p.file} {w} px wide and keep its proportions{said}",
                   f"Scale {p.file} down to a width of {w}{said}"])

    def check(r: Path) -> str | None:
        got = _size(r / out)
        return None if got[0] == w else f"size {got}"

    return Draft(polite(rng, s), (("resize_to_width", (p.file, w, out)),), check, "images.resize_to_width")


def scale(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    pct = pick(rng, (25, 50, 75, 150, 200, 300))
    out, said = _out(rng, p, "scaled")
    s = pick(rng, [f"Scale {p.file} to {pct}%{said}", f"Make {p.file} {pct} percent of its size{said}",
                   f"Shrink {p.file} to {pct}%{said}" if pct < 100 else f"Enlarge {p.file} to {pct}%{said}"])
    want = (max(1, round(p.width * pct / 100)), max(1, round(p.height * pct / 100)))

    def check(r: Path) -> str | None:
        got = _size(r / out)
        return None if got[:2] == want else f"size {got}"

    return Draft(polite(rng, s), (("scale", (p.file, float(pct), out)),), check, "images.scale")


def crop(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    left, top = rng.randrange(0, p.width // 2, 10), rng.randrange(0, p.height // 2, 10)
    right, bottom = rng.randrange(left + 20, p.width + 1, 10), rng.randrange(top + 20, p.height + 1, 10)
    out, said = _out(rng, p, "crop")
    s = pick(rng, [f"Crop {p.file} to the box from ({left}, {top}) to ({right}, {bottom}){said}",
                   f"Cut {p.file} down to left {left}, top {top}, right {right}, bottom {bottom}{said}",
                   f"Keep only the region {left},{top} to {right},{bottom} of {p.file}{said}"])

    def check(r: Path) -> str | None:
        got = _size(r / out)
        return None if got[:2] == (right - left, bottom - top) else f"size {got}"

    return Draft(polite(rng, s), (("crop", (p.file, left, top, right, bottom, out)),), check, "images.crop")


def keep_top(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    px = rng.randrange(10, p.height, 10)
    out, said = _out(rng, p, "top")
    s = pick(rng, [f"Keep only the top {px} pixels of {p.file}{said}", f"Crop {p.file} to its top {px} px band{said}",
                   f"Cut everything below the first {px} pixel rows of {p.file}{said}"])

    def check(r: Path) -> str | None:
        got = _size(r / out)
        return None if got[:2] == (p.width, px) else f"size {got}"

    return Draft(polite(rng, s), (("keep_top", (p.file, px, out)),), check, "images.keep_top")


def rotate(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    said_turn, deg = pick(rng, [("90 degrees counter-clockwise", 90), ("90 degrees to the left", 90),
                                ("by 90 degrees anticlockwise", 90), ("a quarter turn left (90 degrees)", 90),
                                ("upside down (180 degrees)", 180), ("by 180 degrees", 180), ("270 degrees counter-clockwise", 270)])
    out, said = _out(rng, p, "rotated")
    s = pick(rng, [f"Rotate {p.file} {said_turn}{said}", f"Turn {p.file} {said_turn}{said}"])
    want = (p.width, p.height) if deg == 180 else (p.height, p.width)

    def check(r: Path) -> str | None:
        got = _size(r / out)
        return None if got[:2] == want else f"size {got}"

    return Draft(polite(rng, s), (("rotate", (p.file, deg, out)),), check, "images.rotate")


def rotate_clockwise(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    said_turn, deg = pick(rng, [("90 degrees clockwise", 90), ("by 90 degrees to the right", 90),
                                ("a quarter turn clockwise (90 degrees)", 90), ("270 degrees clockwise", 270),
                                ("180 degrees clockwise", 180)])
    out, said = _out(rng, p, "rotated")
    s = pick(rng, [f"Rotate {p.file} {said_turn}{said}", f"Turn {p.file} {said_turn}{said}",
                   f"{p.file} is on its side: rotate it {said_turn}{said}"])
    ccw = {90: "ROTATE_270", 180: "ROTATE_180", 270: "ROTATE_90"}[deg]
    return Draft(polite(rng, s), (("rotate_clockwise", (p.file, deg, out)),), _pixel_check(out, root / p.file, ccw),
                 "images.rotate_clockwise")


def invert(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    out, said = _out(rng, p, "inverted")
    s = pick(rng, [f"Invert the colours of {p.file}{said}", f"Make a negative of {p.file}{said}",
                   f"Invert {p.file}{said}", f"{p.file} is a scanned negative; invert its colors{said}",
                   f"Turn {p.file} into its colour negative{said}"])
    before = _mean(root / p.file)

    def check(r: Path) -> str | None:  # a negative's mean is 255 minus the original's
        after = _mean(r / out)
        return None if abs(after - (255 - before)) < 4 else f"mean {before:.1f} -> {after:.1f}"

    return Draft(polite(rng, s), (("invert", (p.file, out)),), check, "images.invert")


def _pixel_check(out: str, source: Path, transpose: str):
    """A check that ``out`` is ``source`` transposed (``FLIP_LEFT_RIGHT``, ``FLIP_TOP_BOTTOM``, ``ROTATE_270``):
    nearer to the flipped picture than to the original (a JPEG or WebP output is lossy, so no
    pixel-exact comparison)."""
    from PIL import Image

    with Image.open(source) as im:
        before = im.convert("RGB")
    want = before.transpose(getattr(Image.Transpose, transpose))

    def check(r: Path) -> str | None:
        with Image.open(r / out) as im:
            got = im.convert("RGB")
        if got.size != want.size:
            return f"size {got.size}"
        near, far = _mean_diff(got, want), _mean_diff(got, before)
        return None if near < far and near < 4 else f"pixels {near:.1f} from flipped, {far:.1f} from the original"

    return check


def _mean_diff(a, b) -> float:
    from PIL import ImageChops, ImageStat

    return float(sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3)


def mirror(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    out, said = _out(rng, p, "mirrored")
    s = pick(rng, [f"Mirror {p.file} left to right{said}", f"Flip {p.file} horizontally{said}",
                   f"Make a mirror image of {p.file}{said}", f"Flip {p.file} so it faces the other way{said}",
                   f"Reverse {p.file} left-right{said}"])
    return Draft(polite(rng, s), (("mirror", (p.file, out)),), _pixel_check(out, root / p.file, "FLIP_LEFT_RIGHT"),
                 "images.mirror")


def flip_vertical(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    out, said = _out(rng, p, "flipped")
    s = pick(rng, [f"Flip {p.file} vertically{said}", f"Flip {p.file} top to bottom{said}",
                   f"Mirror {p.file} upside down, top becomes bottom{said}", f"Do a vertical flip of {p.file}{said}"])
    return Draft(polite(rng, s), (("flip_vertical", (p.file, out)),),
                 _pixel_check(out, root / p.file, "FLIP_TOP_BOTTOM"), "images.flip_vertical")


def grayscale(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    out, said = _out(rng, p, "gray")
    s = pick(rng, [f"Make {p.file} black and white{said}", f"Convert {p.file} to grayscale{said}",
                   f"Turn {p.file} into a greyscale image{said}", f"Remove the colour from {p.file}{said}"])

    def check(r: Path) -> str | None:  # grey pixels (a WebP or JPEG may store them as RGB)
        from PIL import Image, ImageStat

        with Image.open(r / out) as im:
            red, green, blue = ImageStat.Stat(im.convert("RGB")).mean
        return None if abs(red - green) < 1.5 and abs(green - blue) < 1.5 else f"colour means {red:.0f}/{green:.0f}/{blue:.0f}"

    return Draft(polite(rng, s), (("grayscale", (p.file, out)),), check, "images.grayscale")


def convert(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    ext = pick(rng, [e for e in EXTS if e != Path(p.file).suffix])
    out = f"{Path(p.file).stem}{ext}"
    fmt = {".png": "PNG", ".jpg": "JPEG", ".bmp": "BMP", ".webp": "WebP"}[ext]
    s = pick(rng, [f"Convert {p.file} to {fmt} as {out}", f"Save {p.file} as a {fmt} file called {out}",
                   f"I need {p.file} in {fmt} format: {out}", f"Export {p.file} to {out}"])

    def check(r: Path) -> str | None:
        from PIL import Image

        if not (r / out).is_file():
            return "no output"
        with Image.open(r / out) as im:
            return None if (im.format or "").upper() == fmt.upper() else f"format {im.format}"

    return Draft(polite(rng, s), (("convert", (p.file, out)),), check, "images.convert")


def brightness(rng: random.Random, root: Path) -> Draft:
    p = _pic(rng, root)
    factor = pick(rng, (0.5, 0.8, 1.2, 1.5, 2))
    out, said = _out(rng, p, "bright" if factor > 1 else "dark")
    s = pick(rng, [f"Multiply the brightness of {p.file} by {factor:g}{said}",
                   f"{'Brighten' if factor > 1 else 'Darken'} {p.file} by a factor of {factor:g}{said}",
                   f"Change the brightness of {p.file} with factor {factor:g}{said}"])

    before = _mean(root / p.file)

    def check(r: Path) -> str | None:
        after = _mean(r / out)
        ok = after > before + 1 if factor > 1 else after < before - 1
        return None if ok else f"mean {before:.1f} -> {after:.1f}"

    return Draft(polite(rng, s), (("brightness", (p.file, float(factor), out)),), check, "images.brightness")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    resize, resize_to_width, scale, crop, keep_top, rotate, rotate_clockwise, mirror, flip_vertical, invert, grayscale,
    convert, brightness)}
