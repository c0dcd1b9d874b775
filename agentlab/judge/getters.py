"""Getters: read one fact out of an episode's final state, for an evaluator to judge.

As in OSWorld, a task file names a getter (``{"type": "xlsx_cell", "path": ..., "cell": ...}``)
and a metric; the getter turns the final state (files in the workspace or the folder the
desktop app saved to, plus an optional live env) into a plain Python value. Getters are small
functions registered by name with :func:`getter`; paths are resolved inside the state's root
so a task file can never make the evaluator read outside it, and files are read through
:class:`~agentlab.safepath.SafeFolder`, so neither can the agent's programs: an output that is
a symbolic link (to ``/etc/hostname``, to a file outside, even to a file inside), a FIFO or a
hard link to an outside file is the agent's failure ("not a regular file"), never followed.

Office formats are read with openpyxl, python-docx and python-pptx, images with Pillow,
app settings from JSON or INI files. A getter that cannot read its input raises
:class:`GetterError` (the evaluator scores that check 0 and records the reason).
"""

from __future__ import annotations

import configparser
import inspect
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.errors import AgentlabError, DataError
from agentlab.safepath import SafeFolder, UnsafePathError, parts_of

Getter = Callable[..., Any]
GETTERS: dict[str, Getter] = {}


class GetterError(AgentlabError):
    """A getter could not extract its value from the final state (missing/corrupt file, bad key)."""


@dataclass
class FinalState:
    """What evaluators may look at once an episode ends.

    ``root`` is the folder holding the episode's files (a :class:`~agentlab.envs.workspace.Workspace`
    root, or the folder a desktop app saved into); ``env`` is the live environment when a
    getter needs it; ``values`` holds anything else the runner recorded (e.g. the last stdout).
    """

    root: Path
    env: Any | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def path(self, rel: str | Path) -> Path:
        """``rel`` inside ``root``, named without following links (an absolute path inside
        ``root`` is accepted); ``..`` or a path outside is a task-file error (:class:`DataError`).
        A name only: read the state's files with :meth:`read_bytes` / :meth:`read_text`."""
        return Path(self.root) / self.rel(rel)

    def rel(self, rel: str | Path) -> str:
        """``rel`` relative to ``root``, checked without touching the file system."""
        root = Path(self.root)
        p = Path(rel)
        if p.is_absolute():
            try:
                p = p.relative_to(root)
            except ValueError:
                raise DataError(f"getter path {str(rel)!r} leaves the state folder {root}") from None
        try:
            return "/".join(parts_of(p))
        except DataError:
            raise DataError(f"getter path {str(rel)!r} leaves the state folder {root}") from None

    @property
    def safe(self) -> SafeFolder:
        return SafeFolder(self.root)

    def read_bytes(self, rel: str | Path) -> bytes:
        """The bytes of the regular file ``rel``; missing, a link, a FIFO or a folder is a
        :class:`GetterError` saying what is there (the agent's failure)."""
        name = self.rel(rel)
        try:
            return self.safe.read_bytes(name)
        except FileNotFoundError:
            raise GetterError(f"{rel}: file not found in {self.root}") from None
        except UnsafePathError as exc:
            raise GetterError(exc.message) from None
        except OSError as exc:
            raise GetterError(f"{rel}: cannot be read ({exc.strerror or exc})") from None

    def read_text(self, rel: str | Path, errors: str = "strict") -> str:
        """:meth:`read_bytes` as UTF-8; undecodable bytes (``errors="strict"``) are a :class:`GetterError`."""
        try:
            return self.read_bytes(rel).decode("utf-8", errors=errors)
        except UnicodeDecodeError as exc:
            raise GetterError(f"{rel}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    def folder(self, rel: str | Path) -> str:
        """``rel`` checked to be a folder of the state (not a link to one): its relative name."""
        name = self.rel(rel)
        if self.safe.kind(name) != "dir":
            raise GetterError(f"{rel}: no such folder in {self.root}" + (
                " (a symbolic link, not followed)" if self.safe.kind(name) == "link" else ""))
        return name


def getter(name: str) -> Callable[[Getter], Getter]:
    """Register ``fn(state, **config) -> value`` under ``name``."""

    def deco(fn: Getter) -> Getter:
        if name in GETTERS:
            raise ValueError(f"getter {name!r} registered twice")
        GETTERS[name] = fn
        return fn

    return deco


def get_getter(name: str) -> Getter:
    try:
        return GETTERS[name]
    except KeyError:
        raise DataError(f"unknown getter type {name!r}; known: {', '.join(sorted(GETTERS))}") from None


def check_config(name: str, config: dict[str, Any]) -> list[str]:
    """Problems with a getter config (unknown type, missing or unexpected keys), one line each."""
    if name not in GETTERS:
        return [f"unknown getter type {name!r}; known: {', '.join(sorted(GETTERS))}"]
    sig = inspect.signature(GETTERS[name])
    params = list(sig.parameters.values())[1:]  # drop `state`
    names = {p.name for p in params}
    required = {p.name for p in params if p.default is inspect.Parameter.empty}
    problems = [f"getter {name!r}: missing key {k!r}" for k in sorted(required - set(config))]
    problems += [f"getter {name!r}: unexpected key {k!r} (takes {sorted(names)})" for k in sorted(set(config) - names)]
    return problems


def run_getter(state: FinalState, config: dict[str, Any]) -> Any:
    """Run the getter a config names (``{"type": name, **kwargs}``)."""
    cfg = dict(config)
    name = cfg.pop("type", None)
    if not isinstance(name, str):
        raise DataError(f"getter config {config!r} has no 'type'")
    return get_getter(name)(state, **cfg)


# -- plain values and files -----------------------------------------------------------------
@getter("literal")
def literal(state: FinalState, value: Any) -> Any:
    """The value itself: the usual ``expected`` side of a check."""
    return value


@getter("state_value")
def state_value(state: FinalState, key: str) -> Any:
    """Something the runner recorded in ``state.values`` (e.g. ``"stdout"``)."""
    if key not in state.values:
        raise GetterError(f"the episode recorded no value {key!r}")
    return state.values[key]


@getter("file_exists")
def file_exists(state: FinalState, path: str) -> bool:
    return state.safe.is_file(state.rel(path))


@getter("file_text")
def file_text(state: FinalState, path: str, strip: bool = True) -> str:
    text = state.read_text(path, errors="replace")
    return text.strip() if strip else text


@getter("file_lines")
def file_lines(state: FinalState, path: str, skip_empty: bool = True) -> list[str]:
    lines = [ln.rstrip("\r") for ln in file_text(state, path, strip=False).split("\n")]
    return [ln for ln in lines if ln.strip()] if skip_empty else lines


# -- spreadsheets ---------------------------------------------------------------------------
def _workbook(state: FinalState, path: str, formulas: bool):
    import openpyxl

    data = state.read_bytes(path)
    try:
        return openpyxl.load_workbook(io.BytesIO(data), data_only=not formulas, read_only=False)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException ...
        raise GetterError(f"{path}: not a readable .xlsx ({type(exc).__name__}: {exc})") from None


def _sheet(wb: Any, path: str, sheet: str | None):
    if sheet is None:
        return wb.worksheets[0]
    if sheet not in wb.sheetnames:
        raise GetterError(f"{path}: no sheet {sheet!r} (sheets: {wb.sheetnames})")
    return wb[sheet]


@getter("xlsx_cell")
def xlsx_cell(state: FinalState, path: str, cell: str, sheet: str | None = None, formulas: bool = False) -> Any:
    """One cell's value. ``formulas=False`` gives the value last computed by the app that saved
    the file (openpyxl itself never computes formulas, so a file it wrote holds None there)."""
    wb = _workbook(state, path, formulas)
    try:
        return _sheet(wb, path, sheet)[cell].value
    except (ValueError, AttributeError) as exc:
        raise GetterError(f"{path}: bad cell reference {cell!r} ({exc})") from None


@getter("xlsx_range")
def xlsx_range(state: FinalState, path: str, range: str, sheet: str | None = None, formulas: bool = False) -> list[list[Any]]:
    """A rectangle of values, row by row (``"A1:C3"``)."""
    ws = _sheet(_workbook(state, path, formulas), path, sheet)
    try:
        rows = ws[range]
    except ValueError as exc:
        raise GetterError(f"{path}: bad range {range!r} ({exc})") from None
    if not isinstance(rows, tuple):  # a single cell
        return [[rows.value]]
    if rows and not isinstance(rows[0], tuple):  # a whole row or column ("3", "B")
        return [[c.value for c in rows]]
    return [[c.value for c in row] for row in rows]


@getter("xlsx_sheet_names")
def xlsx_sheet_names(state: FinalState, path: str) -> list[str]:
    return list(_workbook(state, path, True).sheetnames)


# -- documents ------------------------------------------------------------------------------
def _document(state: FinalState, path: str):
    import docx

    data = state.read_bytes(path)
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as exc:
        raise GetterError(f"{path}: not a readable .docx ({type(exc).__name__}: {exc})") from None


@getter("docx_paragraphs")
def docx_paragraphs(state: FinalState, path: str, skip_empty: bool = True) -> list[str]:
    paras = [p.text for p in _document(state, path).paragraphs]
    return [t for t in paras if t.strip()] if skip_empty else paras


@getter("docx_text")
def docx_text(state: FinalState, path: str) -> str:
    return "\n".join(docx_paragraphs(state, path))


def _all_runs(paragraph: Any, attr: str) -> bool | None:
    """True/False when every text run agrees (directly or through its character style or the
    paragraph style); None when the paragraph has no text."""
    runs = [r for r in paragraph.runs if r.text.strip()]
    if not runs:
        return None
    style_font = paragraph.style.font if paragraph.style is not None else None
    style_value = getattr(style_font, attr, None) if style_font is not None else None
    values = []
    for r in runs:
        v = getattr(r.font, attr)
        if v is None and r.style is not None:
            v = getattr(r.style.font, attr, None)
        values.append(bool(v if v is not None else style_value))
    return all(values)


@getter("docx_paragraph_style")
def docx_paragraph_style(state: FinalState, path: str, index: int | None = None, contains: str | None = None) -> dict[str, Any]:
    """Style facts of one paragraph, picked by ``index`` among non-empty paragraphs or by the
    first one ``contains`` a substring: style name, bold/italic/underline (every run),
    alignment name, line spacing and font size (points) where set."""
    paras = [p for p in _document(state, path).paragraphs if p.text.strip()]
    if (index is None) == (contains is None):
        raise DataError("docx_paragraph_style needs exactly one of 'index' or 'contains'")
    if contains is not None:
        found = [p for p in paras if contains in p.text]
        if not found:
            raise GetterError(f"{path}: no paragraph contains {contains!r}")
        para = found[0]
    else:
        assert index is not None
        if not -len(paras) <= index < len(paras):
            raise GetterError(f"{path}: no paragraph {index} (it has {len(paras)} non-empty)")
        para = paras[index]
    fmt = para.paragraph_format
    sizes = {r.font.size.pt for r in para.runs if r.font.size is not None}
    return {
        "text": para.text,
        "style": para.style.name if para.style is not None else None,
        "bold": _all_runs(para, "bold"),
        "italic": _all_runs(para, "italic"),
        "underline": _all_runs(para, "underline"),
        "alignment": fmt.alignment.name.lower() if fmt.alignment is not None else None,
        "line_spacing": fmt.line_spacing if isinstance(fmt.line_spacing, (int, float)) else None,
        "font_size": sizes.pop() if len(sizes) == 1 else None,
    }


# -- presentations --------------------------------------------------------------------------
def _presentation(state: FinalState, path: str):
    import pptx

    data = state.read_bytes(path)
    try:
        return pptx.Presentation(io.BytesIO(data))
    except Exception as exc:
        raise GetterError(f"{path}: not a readable .pptx ({type(exc).__name__}: {exc})") from None


@getter("pptx_slide_texts")
def pptx_slide_texts(state: FinalState, path: str) -> list[str]:
    """Each slide's text: its text frames in shape order, one line per paragraph."""
    out = []
    for slide in _presentation(state, path).slides:
        lines = []
        for shape in slide.shapes:
            if shape.has_text_frame:
                lines += [p.text for p in shape.text_frame.paragraphs if p.text.strip()]
        out.append("\n".join(lines))
    return out


@getter("pptx_slide_count")
def pptx_slide_count(state: FinalState, path: str) -> int:
    return len(_presentation(state, path).slides)


@getter("pptx_slide_title")
def pptx_slide_title(state: FinalState, path: str, index: int) -> str | None:
    slides = list(_presentation(state, path).slides)
    if not -len(slides) <= index < len(slides):
        raise GetterError(f"{path}: no slide {index} (it has {len(slides)})")
    title = slides[index].shapes.title
    return title.text if title is not None else None


# -- images ---------------------------------------------------------------------------------
@getter("image_properties")
def image_properties(state: FinalState, path: str) -> dict[str, Any]:
    """Width, height, mode, format and mean colour (per RGB channel, 0-255) of an image."""
    from PIL import Image, ImageStat, UnidentifiedImageError

    data = state.read_bytes(path)
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            fmt, mode, size = im.format, im.mode, im.size
            mean = ImageStat.Stat(im.convert("RGB")).mean
    except (UnidentifiedImageError, OSError) as exc:
        raise GetterError(f"{path}: not a readable image ({exc})") from None
    return {"width": size[0], "height": size[1], "mode": mode, "format": fmt, "mean_rgb": [round(v, 2) for v in mean]}


@getter("screenshot_properties")
def screenshot_properties(state: FinalState) -> dict[str, Any]:
    """The live env's current screenshot, described like :func:`image_properties`."""
    from PIL import ImageStat

    if state.env is None:
        raise GetterError("no live environment to take a screenshot from")
    im = state.env.screenshot()
    return {"width": im.width, "height": im.height, "mode": im.mode, "format": None,
            "mean_rgb": [round(v, 2) for v in ImageStat.Stat(im.convert("RGB")).mean]}


# -- application settings -------------------------------------------------------------------
_MISSING = object()


@getter("json_setting")
def json_setting(state: FinalState, path: str, key: str, default: Any = _MISSING) -> Any:
    """A value from a JSON settings file; ``key`` is dotted (``"editor.fontSize"``, list
    indices as numbers, keys that contain dots work too). A missing key gives ``default``
    when one is set, else an error."""
    text = state.read_text(path)
    try:
        obj: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GetterError(f"{path}: not valid JSON ({exc})") from None
    found = _lookup(obj, key.split("."))
    if found is _MISSING:
        if default is not _MISSING:
            return default
        raise GetterError(f"{path}: no key {key!r}")
    return found


def _lookup(obj: Any, parts: list[str]) -> Any:
    """Follow dotted ``parts``; a dict key may itself contain dots (VS Code's ``files.autoSave``),
    so the longest matching prefix is tried first."""
    if not parts:
        return obj
    if isinstance(obj, dict):
        for n in range(len(parts), 0, -1):
            k = ".".join(parts[:n])
            if k in obj:
                found = _lookup(obj[k], parts[n:])
                if found is not _MISSING:
                    return found
        return _MISSING
    if isinstance(obj, list) and parts[0].lstrip("-").isdigit() and -len(obj) <= int(parts[0]) < len(obj):
        return _lookup(obj[int(parts[0])], parts[1:])
    return _MISSING


@getter("ini_setting")
def ini_setting(state: FinalState, path: str, section: str, key: str, default: Any = _MISSING) -> str | Any:
    """A value from an INI file (as text, like the app would read it)."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(state.read_text(path))
    except configparser.Error as exc:
        raise GetterError(f"{path}: not a valid INI file ({exc.__class__.__name__})") from None
    if not parser.has_option(section, key):
        if default is not _MISSING:
            return default
        raise GetterError(f"{path}: no [{section}] {key}")
    return parser.get(section, key)
