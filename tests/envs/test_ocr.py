"""``agentlab.envs.ocr`` without a screen: boxes and their dict form, grouping words into lines,
finding a phrase (exact, fuzzy, absent), the prompt text; and one real tesseract read of a
rendered picture (skipped, with the reason, where tesseract is missing)."""

from __future__ import annotations

import pytest

from agentlab.envs.testing.system import missing_system
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont

from agentlab.envs.ocr import OcrBox, find_text, group_lines, ocr_lines_text, ocr_problem, read_screen


def row(texts: list[str], *, x: int = 10, y: int = 20, h: int = 10, gap: int = 6, char_w: int = 7) -> list[OcrBox]:
    """Words laid out left to right on one row, like tesseract reports them."""
    out = []
    for t in texts:
        w = max(1, len(t) * char_w)
        out.append(OcrBox(t, (x, y, w, h), 90.0))
        x += w + gap
    return out


def union(boxes: list[OcrBox]) -> tuple[int, int, int, int]:
    x1 = min(b.bbox[0] for b in boxes)
    y1 = min(b.bbox[1] for b in boxes)
    x2 = max(b.bbox[0] + b.bbox[2] for b in boxes)
    y2 = max(b.bbox[1] + b.bbox[3] for b in boxes)
    return x1, y1, x2 - x1, y2 - y1


# ---------------------------------------------------------------- the box and its dict form
def test_box_geometry_and_dict_form() -> None:
    b = OcrBox("Total", (100, 40, 30, 12), 91.26)
    assert b.center == (115, 46) and b.corners == (100, 40, 130, 52)
    assert b.to_dict() == {"text": "Total", "bbox": [100, 40, 30, 12], "conf": 91.3, "level": "word"}
    # the dict form is [x, y, width, height], not corners
    assert b.to_dict()["bbox"][2:] == [30, 12]


@given(
    text=st.text(min_size=1, max_size=20),
    bbox=st.tuples(*[st.integers(0, 5000)] * 2, *[st.integers(1, 2000)] * 2),
    conf=st.floats(0, 100, allow_nan=False).map(lambda c: round(c, 1)),
    level=st.sampled_from(["word", "line"]),
)
def test_dict_round_trip(text: str, bbox: tuple[int, int, int, int], conf: float, level: str) -> None:
    b = OcrBox(text, bbox, conf, level)  # type: ignore[arg-type]
    d = b.to_dict()
    assert d["bbox"] == list(bbox) and all(isinstance(v, int) for v in d["bbox"])
    assert OcrBox.from_dict(d) == b


# ---------------------------------------------------------------- grouping words into lines
def test_words_on_one_row_with_small_gaps_make_one_line() -> None:
    words = row(["Total", "revenue:", "42"])
    (line,) = group_lines(words)
    assert line.level == "line" and line.text == "Total revenue: 42"
    assert line.bbox == union(words) and line.conf == pytest.approx(90.0)


def test_a_wide_gap_or_another_row_starts_a_new_line() -> None:
    left = row(["Count:", "0"], x=70, y=28, h=9)
    right = row(["Add", "one"], x=211, y=26, h=11)  # same row, far to the right (the demo app)
    below = row(["Dark", "mode"], x=41, y=141, h=11)
    lines = group_lines(below + right + left)  # input order does not matter
    assert [l.text for l in lines] == ["Add one", "Count: 0", "Dark mode"]  # top to bottom, then left
    assert lines[0].bbox == union(right) and lines[2].bbox == union(below)


def test_a_slightly_lower_word_stays_on_its_line() -> None:
    words = [OcrBox("Add", (211, 26, 23, 11), 96.0), OcrBox("one", (241, 30, 22, 7), 96.0)]  # as read on screen
    assert [l.text for l in group_lines(words)] == ["Add one"]


words_st = st.lists(st.text("abcdefghij", min_size=1, max_size=8), min_size=1, max_size=6)


@settings(max_examples=60)
@given(rows=st.lists(st.tuples(words_st, st.integers(0, 2)), min_size=1, max_size=5))
def test_every_word_lands_in_exactly_one_line(rows: list[tuple[list[str], int]]) -> None:
    words: list[OcrBox] = []
    for i, (texts, extra_gap) in enumerate(rows):
        words += row(texts, y=20 + 40 * i, gap=4 + extra_gap)
    lines = group_lines(words)
    assert len(lines) == len(rows)
    assert sorted(t for l in lines for t in l.text.split(" ")) == sorted(w.text for w in words)
    for w in words:
        x, y, ww, hh = w.bbox
        holders = [l for l in lines if l.bbox[0] <= x and x + ww <= l.bbox[0] + l.bbox[2]
                   and l.bbox[1] <= y and y + hh <= l.bbox[1] + l.bbox[3]]
        assert len(holders) == 1
    assert [l.bbox[1] for l in lines] == sorted(l.bbox[1] for l in lines)


# ---------------------------------------------------------------- finding a phrase
SCREEN = (row(["Quarterly", "report"], y=10)
          + row(["Total:", "42", "units"], y=50)
          + row(["Greet"], x=220, y=90))


def test_find_text_exact_ignores_case_and_punctuation() -> None:
    m = find_text(SCREEN, "total: 42")
    assert m is not None and m.score == 1.0 and m.text == "Total: 42"
    assert m.bbox == union(SCREEN[2:4]) and m.words == tuple(SCREEN[2:4])
    assert find_text(SCREEN, "GREET!") is not None and find_text(SCREEN, "GREET!").text == "Greet"  # type: ignore[union-attr]


def test_find_text_drag_points_lie_inside_the_first_and_last_word() -> None:
    m = find_text(SCREEN, "quarterly report")
    assert m is not None
    (x1, y1, w1, h1), (x2, y2, w2, h2) = SCREEN[0].bbox, SCREEN[1].bbox
    assert x1 <= m.start[0] < x1 + w1 and y1 <= m.start[1] < y1 + h1
    assert x2 < m.end[0] <= x2 + w2 and y2 <= m.end[1] < y2 + h2
    assert m.start[0] < m.end[0]


def test_find_text_fuzzy_match_reports_its_score() -> None:
    m = find_text(SCREEN, "Totl")  # a misspelling: best run is "Total:"
    assert m is not None and m.text == "Total:" and 0.6 <= m.score < 1.0


def test_find_text_none_when_nothing_is_close() -> None:
    assert find_text(SCREEN, "zebra crossing") is None
    assert find_text(SCREEN, "   ") is None and find_text(SCREEN, "!!!") is None
    assert find_text([], "anything") is None
    # a stricter threshold turns a fuzzy match away
    assert find_text(SCREEN, "Totl", min_score=0.95) is None


def test_find_text_reads_words_not_lines() -> None:
    lines = group_lines(SCREEN)
    assert find_text(lines, "Greet") is None  # only line boxes: nothing to match word by word
    assert find_text(SCREEN + lines, "Greet") is not None  # read_screen's words + lines work


@settings(max_examples=60)
@given(texts=st.lists(st.text("klmnopqrst", min_size=1, max_size=6), min_size=1, max_size=7, unique=True),
       data=st.data())
def test_any_run_of_words_is_found_exactly(texts: list[str], data: st.DataObject) -> None:
    words = row(texts, y=30) + row(["other", "line"], y=80)
    i = data.draw(st.integers(0, len(texts) - 1))
    j = data.draw(st.integers(i + 1, len(texts)))
    m = find_text(words, " ".join(texts[i:j]).upper())
    assert m is not None and m.score == 1.0
    assert m.words == tuple(words[i:j]) and m.bbox == union(words[i:j])


# ---------------------------------------------------------------- prompt text
def test_lines_as_prompt_text() -> None:
    boxes = SCREEN + group_lines(SCREEN)
    text = ocr_lines_text(boxes)
    assert text.splitlines() == [
        '"Quarterly report" at (10, 10, 111, 10)',
        '"Total: 42 units" at (10, 50, 103, 10)',
        '"Greet" at (220, 90, 35, 10)',
    ]
    assert len(ocr_lines_text(boxes, limit=2).splitlines()) == 2
    assert ocr_lines_text(SCREEN) == "(no text recognised on screen)"  # words only, no lines


# ---------------------------------------------------------------- a real read
def test_tesseract_reads_a_rendered_phrase_where_it_was_drawn() -> None:
    if reason := ocr_problem():
        missing_system(f"no OCR here: {reason}")
    img = Image.new("RGB", (520, 120), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=26)
    draw.text((30, 20), "Quarterly report", fill="black", font=font)
    draw.text((40, 70), "Total revenue 42", fill="black", font=font)
    drawn = draw.textbbox((40, 70), "Total revenue 42", font=font)
    boxes = read_screen(img)
    assert {"word", "line"} <= {b.level for b in boxes}
    m = find_text(boxes, "revenue")
    assert m is not None and m.score == 1.0
    x, y, w, h = m.bbox
    assert drawn[0] - 3 <= x and x + w <= drawn[2] + 3 and drawn[1] - 3 <= y and y + h <= drawn[3] + 3
    assert any(b.level == "line" and b.text == "Total revenue 42" for b in boxes)
