"""Setup writers: the steps of a task file's ``setup`` that write its start state.

Each is a small registered function ``fn(path, **config)`` found by its ``type``; a task file
naming an unknown one is refused when it loads (:meth:`agentlab.tasks.spec.ExecTask.problems`).
"""

from __future__ import annotations

import configparser
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Writer = Callable[..., None]
WRITERS: dict[str, Writer] = {}


def writer(name: str) -> Callable[[Writer], Writer]:
    """Register a setup step ``fn(path: Path, **config)`` under ``name``."""

    def deco(fn: Writer) -> Writer:
        WRITERS[name] = fn
        return fn

    return deco


@writer("write_text")
def _write_text(path: Path, content: str) -> None:
    path.write_text(content, encoding="utf-8")


@writer("write_json")
def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


@writer("write_ini")
def _write_ini(path: Path, sections: dict[str, dict[str, str]]) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict({s: {k: str(v) for k, v in kv.items()} for s, kv in sections.items()})
    with open(path, "w", encoding="utf-8") as fh:
        parser.write(fh)


@writer("write_xlsx")
def _write_xlsx(path: Path, sheets: dict[str, list[list[Any]]]) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    wb.save(path)


@writer("write_docx")
def _write_docx(path: Path, paragraphs: list[str | dict[str, Any]]) -> None:
    """Paragraphs are text, or ``{"text", "style", "bold", "italic"}``."""
    import docx

    doc = docx.Document()
    for p in paragraphs:
        spec = {"text": p} if isinstance(p, str) else p
        para = doc.add_paragraph(style=spec.get("style"))
        run = para.add_run(spec["text"])
        run.bold = bool(spec["bold"]) if "bold" in spec else None
        run.italic = bool(spec["italic"]) if "italic" in spec else None
    doc.save(str(path))


@writer("write_pptx")
def _write_pptx(path: Path, slides: list[dict[str, Any]]) -> None:
    """Slides are ``{"title": ..., "lines": [...]}`` on the title-and-content layout."""
    import pptx

    prs = pptx.Presentation()
    for s in slides:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = s.get("title", "")
        body = slide.placeholders[1].text_frame
        lines = list(s.get("lines", []))
        body.text = lines[0] if lines else ""
        for line in lines[1:]:
            body.add_paragraph().text = line
    prs.save(str(path))


@writer("write_image")
def _write_image(path: Path, width: int, height: int, colour: list[int], mode: str = "RGB",
                 second_colour: list[int] | None = None, split: str = "left-right") -> None:
    """One colour, or two halves (``second_colour`` fills the right half, or the bottom half with
    ``split="top-bottom"``): a flip or a rotation shows in a pixel."""
    from PIL import Image

    im = Image.new("RGB", (width, height), tuple(colour))
    if second_colour is not None:
        box = (width // 2, 0, width, height) if split == "left-right" else (0, height // 2, width, height)
        im.paste(tuple(second_colour), box)
    im.convert(mode).save(path)
