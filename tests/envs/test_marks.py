"""Set-of-marks tags must not hide what an element says: a dense menu (as LibreOffice Calc's View
menu, where the old tags turned "New Headers" into "ew Headers") is marked, and tesseract reads
every item's label after marking as it did before. Also: every tag is on screen and tags do not
pile onto each other when there is room."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from agentlab.envs.base import Element
from agentlab.envs.marks import _font, draw_marks, tag_spots
from agentlab.envs.ocr import ocr_problem, read_words
from agentlab.envs.testing.system import missing_system

ITEMS = ["New Headers", "Grid and Helplines", "Formula Bar", "Status Bar", "Sidebar", "Freeze Cells",
         "Split Window", "Zoom", "Full Screen", "Comments"]


def _menu(x0: int = 40, y0: int = 30, width: int = 230, row_h: int = 24) -> tuple[Image.Image, list[Element]]:
    """A rendered menu: one item per row, text 8 px in from the left, each row one element."""
    img = Image.new("RGB", (400, y0 + row_h * len(ITEMS) + 30), (246, 245, 244))
    draw = ImageDraw.Draw(img)
    font = _font(15)
    draw.rectangle((x0 - 1, y0 - 1, x0 + width, y0 + row_h * len(ITEMS)), outline=(200, 200, 200))
    elements = []
    for i, text in enumerate(ITEMS):
        y = y0 + i * row_h
        draw.text((x0 + 8, y + 4), text, fill=(30, 30, 30), font=font)
        elements.append(Element(id=i + 1, bbox=(x0, y, x0 + width, y + row_h), role="menu item", text=text,
                                resource_id=None, clickable=True))
    return img, elements


def _read(img: Image.Image, el: Element) -> str:
    """The words tesseract reads inside the element's box (inside its 1-pixel outline: a line at
    a crop's edge is no letter, and sparse-text mode is for whole screens, not one line)."""
    x1, y1, x2, y2 = el.bbox
    return " ".join(w.text for w in read_words(img.crop((x1 + 2, y1 + 2, x2 - 2, y2 - 2)), scale=3, psm=7))


def test_ocr_reads_every_menu_item_after_marking_as_before() -> None:
    if problem := ocr_problem():
        missing_system(f"no OCR: {problem}")
    img, elements = _menu()
    marked = draw_marks(img, elements)
    before = {el.text: _read(img, el) for el in elements}
    assert before == {t: t for t in ITEMS}  # the rendering itself reads back (else the test says nothing)
    after = {el.text: _read(marked, el) for el in elements}
    assert after == before


def test_tags_stay_on_screen_and_apart_when_there_is_room() -> None:
    img, elements = _menu()
    corner = Element(id=99, bbox=(380, 0, 400, 20), role="button", text="", resource_id=None, clickable=True)
    spots = tag_spots(corner.bbox, 18, 14, img.size)
    assert all(0 <= x <= img.width - 18 and 0 <= y <= img.height - 14 for x, y in spots)
    marked = draw_marks(img, [*elements, corner])
    assert marked.size == img.size and marked.mode == "RGB"
    # the tag of each item is somewhere in orange: count orange tag pixels per row band
    px = marked.load()
    orange = [(x, y) for x in range(marked.width) for y in range(marked.height) if px[x, y][0] > 240
              and 120 < px[x, y][1] < 175 and px[x, y][2] < 60]
    assert len(orange) > 11 * 40  # eleven tags, each a filled rectangle


@pytest.mark.parametrize("n", [1, 5, 10])
def test_marking_never_changes_the_input_image(n: int) -> None:
    img, elements = _menu()
    copy = img.copy()
    draw_marks(img, elements[:n])
    assert img.tobytes() == copy.tobytes()
