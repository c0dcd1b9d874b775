"""``agentlab desktop observe --ocr [--json]`` on a real Xvfb with the GTK demo app: the OCR
words land inside the accessibility elements that show them, and ``--json`` keeps the
``ocr: [{text, bbox: [x, y, width, height]}]`` contract other tools read.

The CLI runs in a fresh interpreter (pyautogui connects to the display at import time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.envs.ocr import ocr_problem

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(180)]


@pytest.fixture
def needs_ocr():
    if reason := ocr_problem():
        missing_system(f"no OCR here: {reason}")


def observe(xdisplay, *args: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    env = dict(os.environ, **xdisplay.env)
    return subprocess.run(
        [sys.executable, "-m", "agentlab.cli", "desktop", "observe", "--display", xdisplay.display,
         "--app", "demo_gtk", *args],
        env=env, capture_output=True, text=True, timeout=120,
    )


def _inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    """``inner`` (x, y, w, h) lies within ``outer`` (x1, y1, x2, y2)."""
    x, y, w, h = inner
    return outer[0] <= x and outer[1] <= y and x + w <= outer[2] and y + h <= outer[3]


def test_json_ocr_finds_greet_inside_its_button(xdisplay, demo_app, needs_a11y, needs_ocr, tmp_path) -> None:  # type: ignore[no-untyped-def]
    marks = tmp_path / "marks.png"
    r = observe(xdisplay, "--ocr", "--json", "--out", str(marks))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # exactly one JSON object on stdout
    assert doc["source"] == "a11y" and doc["screen"] == [1280, 800]
    assert doc["marked_screenshot"] == str(marks) and marks.is_file()
    button = next(e for e in doc["elements"] if e["role"] == "push button" and e["text"] == "Greet")
    assert isinstance(doc["ocr"], list) and doc["ocr"]
    for box in doc["ocr"]:
        assert isinstance(box["text"], str) and box["text"]
        assert len(box["bbox"]) == 4 and all(isinstance(v, int) for v in box["bbox"])
        assert box["bbox"][2] > 0 and box["bbox"][3] > 0 and box["level"] in ("word", "line")
    greet = [b for b in doc["ocr"] if b["level"] == "word" and b["text"] == "Greet"]
    assert greet, [b["text"] for b in doc["ocr"]]
    assert any(_inside(tuple(b["bbox"]), tuple(button["bbox"])) for b in greet), (greet, button["bbox"])
    # lines come with the words: the "Add one" button's label is one line
    assert any(b["level"] == "line" and b["text"] == "Add one" for b in doc["ocr"])


def test_text_output_lists_lines_and_words_after_the_elements(xdisplay, demo_app, needs_a11y, needs_ocr) -> None:  # type: ignore[no-untyped-def]
    r = observe(xdisplay, "--ocr")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert '"Greet"' in out.split("OCR:")[0]  # the element list
    ocr_part = out.split("OCR:", 1)[1]
    assert 'word "Greet" at (' in ocr_part and 'line "Add one" at (' in ocr_part


def test_json_without_ocr_has_elements_only(xdisplay, demo_app, needs_a11y) -> None:  # type: ignore[no-untyped-def]
    r = observe(xdisplay, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "ocr" not in doc and any(e["text"] == "Greet" for e in doc["elements"])


def test_ocr_without_tesseract_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # no tesseract on PATH (an empty folder); the check comes before any display is touched
    env = dict(os.environ, PATH=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "agentlab.cli", "desktop", "observe", "--ocr", "--json"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    # pytesseract missing is reported first where it is; here it is installed, so tesseract is named
    assert line.startswith("error: --ocr: ") and "is not installed" in line and "Traceback" not in r.stderr
