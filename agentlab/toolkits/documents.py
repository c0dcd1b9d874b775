"""The document toolkit (WordAgent): atomic operations on .docx files with python-docx.

A paragraph is named by words it contains (``"parking"``, ``"deadline"``), or ``"title"`` for the
first paragraph that has text: what a request says about it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, workspace_file

DOCX = Annotated[str, file_slot(".docx")]
Para = Annotated[str, Slot("anchor")]
OtherPara = Annotated[str, Slot("anchor", differs=True)]
Text = Annotated[str, Slot("text")]
Words = Annotated[str, Slot("anchor")]
Size = Annotated[float, Slot("number")]
Align = Annotated[str, Slot("choice", choices=("left", "center", "right", "justify"))]
Style = Annotated[str, Slot("choice", choices=("Title", "Heading 1", "Heading 2", "Heading 3", "Normal", "Quote",
                                                 "List Bullet", "List Number"))]


def _describe(path: Path) -> str:
    import docx

    doc = docx.Document(str(path))
    out = [f"{path.name}: {len(doc.paragraphs)} paragraphs"]
    for i, p in enumerate(doc.paragraphs[:14], start=1):
        text = p.text if len(p.text) <= 90 else p.text[:87] + "..."
        out.append(f"  {i}. [{p.style.name if p.style is not None else ''}] {text!r}")
    if len(doc.paragraphs) > 14:
        out.append(f"  ... {len(doc.paragraphs) - 14} more paragraphs")
    return "\n".join(out)


kit = Toolkit("documents", "text documents (.docx) with python-docx", describe=_describe,
              examples=(("Make the heading 'Our Services' in flyer.docx bold.", "set_font('flyer.docx', 'Our Services', True, False, False)\ndone()"), ("Replace every 'Ltd' with 'Limited' in contract.docx.", "replace_text('contract.docx', 'Ltd', 'Limited')\ndone()"), ('Delete the paragraph about the fire drill from memo.docx.', "delete_paragraph('memo.docx', 'fire drill')\ndone()"),))


def _open(file: str) -> Any:
    import docx

    workspace_file(file)
    return docx.Document(file)


def _find(doc: Any, words: str) -> Any:
    """The first paragraph containing ``words`` (case-insensitive); ``title``/``first``: the first with text."""
    want = words.strip().casefold()
    for p in doc.paragraphs:
        if want and want in p.text.casefold():
            return p
    if want in ("title", "the title", "first", "heading"):
        for p in doc.paragraphs:
            if p.text.strip():
                return p
    raise ToolError(f"no paragraph contains {words!r}")


def _set_text(p: Any, text: str) -> None:
    """Replace a paragraph's text, keeping the first run's formatting."""
    runs = list(p.runs)
    if not runs:
        p.add_run(text)
        return
    runs[0].text = text
    for r in runs[1:]:
        r._element.getparent().remove(r._element)


@kit.tool
def replace_text(file: DOCX, old: Words, new: Text) -> str:
    """Replace every occurrence of a word or phrase (any case; the capital of the first letter is kept)."""
    doc = _open(file)
    pattern = re.compile(re.escape(old), re.IGNORECASE)

    def keep_case(m: re.Match[str]) -> str:
        found = m.group(0)
        return new[:1].upper() + new[1:] if found[:1].isupper() else new

    n = 0
    for p in doc.paragraphs:
        for r in p.runs:
            if pattern.search(r.text):
                n += len(pattern.findall(r.text))
                r.text = pattern.sub(keep_case, r.text)
    doc.save(file)
    return f"replaced {n} occurrence(s) of {old!r}"


@kit.tool
def set_paragraph_text(file: DOCX, paragraph: Para, text: Text) -> str:
    """Replace the whole text of the paragraph containing the given words."""
    doc = _open(file)
    _set_text(_find(doc, paragraph), text)
    doc.save(file)
    return f"paragraph now reads {text!r}"


@kit.tool
def delete_paragraph(file: DOCX, paragraph: Para) -> str:
    """Delete the paragraph containing the given words."""
    doc = _open(file)
    p = _find(doc, paragraph)
    p._element.getparent().remove(p._element)
    doc.save(file)
    return f"deleted the paragraph with {paragraph!r}"


@kit.tool
def insert_paragraph_after(file: DOCX, paragraph: Para, text: Text) -> str:
    """Add a new paragraph with the text right after the paragraph containing the given words."""
    import copy

    doc = _open(file)
    p = _find(doc, paragraph)
    new = copy.deepcopy(p._element)
    p._element.addnext(new)
    from docx.text.paragraph import Paragraph

    _set_text(Paragraph(new, p._parent), text)
    doc.save(file)
    return f"added {text!r} after the paragraph with {paragraph!r}"


@kit.tool
def append_paragraph(file: DOCX, text: Text) -> str:
    """Add a paragraph at the end of the document."""
    doc = _open(file)
    doc.add_paragraph(text)
    doc.save(file)
    return f"added {text!r} at the end"


@kit.tool
def swap_paragraphs(file: DOCX, first: Para, second: OtherPara) -> str:
    """Swap two paragraphs, each named by words it contains."""
    doc = _open(file)
    a, b = _find(doc, first), _find(doc, second)
    if a._element is b._element:
        raise ToolError("both names point at the same paragraph")
    ea, eb = a._element, b._element
    marker = ea.makeelement(ea.tag, {})
    ea.addprevious(marker)
    eb.addprevious(ea)
    marker.addprevious(eb)
    marker.getparent().remove(marker)
    doc.save(file)
    return f"swapped the paragraphs with {first!r} and {second!r}"


@kit.tool
def remove_empty_paragraphs(file: DOCX) -> str:
    """Delete every paragraph that has no text."""
    doc = _open(file)
    empty = [p for p in doc.paragraphs if not p.text.strip()]
    for p in empty:
        p._element.getparent().remove(p._element)
    doc.save(file)
    return f"removed {len(empty)} empty paragraph(s)"


@kit.tool
def set_style(file: DOCX, paragraph: Para, style: Style) -> str:
    """Give the paragraph containing the given words a paragraph style (e.g. Heading 2)."""
    doc = _open(file)
    _find(doc, paragraph).style = doc.styles[style]
    doc.save(file)
    return f"paragraph with {paragraph!r} is now {style}"


@kit.tool
def set_font(file: DOCX, paragraph: Para, bold: bool = False, italic: bool = False, underline: bool = False) -> str:
    """Make the paragraph containing the given words bold, italic and/or underlined."""
    doc = _open(file)
    p = _find(doc, paragraph)
    for r in p.runs:
        r.bold = True if bold else r.bold
        r.italic = True if italic else r.italic
        r.underline = True if underline else r.underline
    doc.save(file)
    return f"paragraph with {paragraph!r}: bold={bold} italic={italic} underline={underline}"


@kit.tool
def set_font_size(file: DOCX, paragraph: Para, points: Size) -> str:
    """Set the font size (in points) of the paragraph containing the given words."""
    from docx.shared import Pt

    doc = _open(file)
    for r in _find(doc, paragraph).runs:
        r.font.size = Pt(points)
    doc.save(file)
    return f"paragraph with {paragraph!r} at {points:g} pt"


@kit.tool
def set_alignment(file: DOCX, paragraph: Para, align: Align) -> str:
    """Align the paragraph containing the given words left, center, right or justify."""
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    doc = _open(file)
    _find(doc, paragraph).alignment = getattr(WD_ALIGN_PARAGRAPH, align.upper() if align != "justify" else "JUSTIFY")
    doc.save(file)
    return f"paragraph with {paragraph!r} aligned {align}"
