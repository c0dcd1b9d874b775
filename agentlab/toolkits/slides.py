"""The slides toolkit (SlideAgent): atomic operations on .pptx decks with python-pptx.

A slide is named by its title, its number (``"2"``), or ``"first"``/``"last"``; bullets are the
lines of the slide's body placeholder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, workspace_file

PPTX = Annotated[str, file_slot(".pptx")]
SlideRef = Annotated[str, Slot("slide")]
OtherSlide = Annotated[str, Slot("slide", differs=True)]
Text = Annotated[str, Slot("text")]
Words = Annotated[str, Slot("anchor")]


def _title(slide: Any) -> str:
    t = slide.shapes.title
    return t.text if t is not None else ""


def _body(slide: Any) -> Any:
    for ph in slide.placeholders:
        if ph.placeholder_format.idx != 0 and ph.has_text_frame:
            return ph.text_frame
    for sh in slide.shapes:
        if sh.has_text_frame and sh is not slide.shapes.title:
            return sh.text_frame
    return None


def _describe(path: Path) -> str:
    import pptx

    prs = pptx.Presentation(str(path))
    out = [f"{path.name}: {len(prs.slides)} slides"]
    for i, slide in enumerate(prs.slides, start=1):
        body = _body(slide)
        lines = [p.text for p in body.paragraphs if p.text] if body is not None else []
        out.append(f"  slide {i}: title {_title(slide)!r}" + (f"; lines {lines!r}" if lines else ""))
    return "\n".join(out)


kit = Toolkit("slides", "presentations (.pptx) with python-pptx", describe=_describe,
              examples=(("Change the title of slide 3 in talk.pptx to 'Results'.", "set_title('talk.pptx', '3', 'Results')\ndone()"), ('Remove the Appendix slide from deck.pptx.', "delete_slide('deck.pptx', 'Appendix')\ndone()"), ("Add 'Ship v2' as a bullet on the Goals slide of plan.pptx.", "add_bullet('plan.pptx', 'Goals', 'Ship v2')\ndone()"),))


def _open(file: str) -> Any:
    import pptx

    workspace_file(file)
    return pptx.Presentation(file)


def _index(prs: Any, slide: str) -> int:
    """A slide's 0-based index by title (case-insensitive), number, or first/last."""
    s = str(slide).strip()
    n = len(prs.slides)
    if s.casefold() in ("first", "the first"):
        return 0
    if s.casefold() in ("last", "the last"):
        return n - 1
    if re.fullmatch(r"\d+", s):
        if not 1 <= int(s) <= n:
            raise ToolError(f"there is no slide {s}; the deck has {n}")
        return int(s) - 1
    for i, sl in enumerate(prs.slides):
        if _title(sl).strip().casefold() == s.casefold():
            return i
    for i, sl in enumerate(prs.slides):
        if s.casefold() in _title(sl).casefold():
            return i
    titles = [_title(sl) for sl in prs.slides]
    raise ToolError(f"no slide {slide!r}; the titles are {', '.join(map(repr, titles))}")


def _lines(text: str) -> list[str]:
    return [t.strip() for t in re.split(r"\s*[|;\n]\s*", text) if t.strip()]


def _add(prs: Any, title: str, lines: str) -> Any:
    layout = prs.slide_layouts[1] if len(prs.slide_layouts) > 1 else prs.slide_layouts[0]
    slide = prs.slides.add_slide(layout)
    if slide.shapes.title is not None:
        slide.shapes.title.text = title
    body = _body(slide)
    items = _lines(lines)
    if body is not None and items:
        body.text = items[0]
        for line in items[1:]:
            body.add_paragraph().text = line
    return slide


def _move(prs: Any, old: int, new: int) -> None:
    ids = prs.slides._sldIdLst
    el = list(ids)[old]
    ids.remove(el)
    ids.insert(new, el)


@kit.tool
def set_title(file: PPTX, slide: SlideRef, title: Text) -> str:
    """Change the title of a slide."""
    prs = _open(file)
    i = _index(prs, slide)
    shape = prs.slides[i].shapes.title
    if shape is None:
        raise ToolError(f"slide {i + 1} has no title placeholder")
    shape.text = title
    prs.save(file)
    return f"slide {i + 1} title: {title!r}"


@kit.tool
def add_slide(file: PPTX, title: Text, lines: Text = "") -> str:
    """Add a slide at the end with a title and body lines (several lines separated by ';')."""
    prs = _open(file)
    _add(prs, title, lines)
    prs.save(file)
    return f"added slide {len(prs.slides)}: {title!r}"


@kit.tool
def add_slide_after(file: PPTX, after: SlideRef, title: Text, lines: Text = "") -> str:
    """Add a slide right after another one, with a title and body lines separated by ';'."""
    prs = _open(file)
    i = _index(prs, after)
    _add(prs, title, lines)
    _move(prs, len(prs.slides) - 1, i + 1)
    prs.save(file)
    return f"added slide {i + 2}: {title!r}"


@kit.tool
def delete_slide(file: PPTX, slide: SlideRef) -> str:
    """Delete a slide (named by title, number, first or last)."""
    prs = _open(file)
    i = _index(prs, slide)
    ids = prs.slides._sldIdLst
    el = list(ids)[i]
    prs.part.drop_rel(el.rId)
    ids.remove(el)
    prs.save(file)
    return f"deleted slide {i + 1}; {len(prs.slides)} left"


@kit.tool
def move_slide(file: PPTX, slide: SlideRef, position: int) -> str:
    """Move a slide to a position (1 = first)."""
    prs = _open(file)
    _move(prs, _index(prs, slide), max(0, min(position - 1, len(prs.slides) - 1)))
    prs.save(file)
    return "order: " + ", ".join(repr(_title(s)) for s in prs.slides)


@kit.tool
def swap_slides(file: PPTX, first: SlideRef, second: OtherSlide) -> str:
    """Swap the places of two slides."""
    prs = _open(file)
    a, b = sorted((_index(prs, first), _index(prs, second)))
    if a == b:
        raise ToolError("both names point at the same slide")
    _move(prs, b, a)
    _move(prs, a + 1, b)
    prs.save(file)
    return "order: " + ", ".join(repr(_title(s)) for s in prs.slides)


@kit.tool
def add_bullet(file: PPTX, slide: SlideRef, text: Text) -> str:
    """Add a bullet line at the bottom of a slide's body."""
    prs = _open(file)
    i = _index(prs, slide)
    body = _body(prs.slides[i])
    if body is None:
        raise ToolError(f"slide {i + 1} has no body to add a line to")
    if len(body.paragraphs) == 1 and not body.paragraphs[0].text:
        body.paragraphs[0].text = text
    else:
        body.add_paragraph().text = text
    prs.save(file)
    return f"slide {i + 1}: added {text!r}"


@kit.tool
def remove_bullet(file: PPTX, slide: SlideRef, text: Words) -> str:
    """Remove the bullet line containing the given words from a slide."""
    prs = _open(file)
    i = _index(prs, slide)
    body = _body(prs.slides[i])
    for p in body.paragraphs if body is not None else []:
        if text.strip().casefold() in p.text.casefold():
            p._p.getparent().remove(p._p)
            prs.save(file)
            return f"slide {i + 1}: removed {p.text!r}"
    raise ToolError(f"slide {i + 1} has no line with {text!r}")


@kit.tool
def replace_text(file: PPTX, old: Words, new: Text) -> str:
    """Replace a word or phrase everywhere in the deck (titles and bodies)."""
    prs = _open(file)
    n = 0
    for slide in prs.slides:
        for shape in slide.shapes:
            if not shape.has_text_frame:
                continue
            for p in shape.text_frame.paragraphs:
                for r in p.runs:
                    if old in r.text:
                        n += r.text.count(old)
                        r.text = r.text.replace(old, new)
    prs.save(file)
    return f"replaced {n} occurrence(s) of {old!r}"
