"""Code agents whose job needs an outside resource: Searcher (a web search endpoint) against a
loopback stand-in, GoogleDrive (a folder standing in for the Drive), and both refusing clearly
when none is configured. VisionAgent reads text off an image with the tesseract OCR engine."""

from __future__ import annotations

import shutil

import pytest

from agentlab.envs.testing.search_stub import SearchStub
from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import ExecTask

from .conftest import py

CORPUS = [
    {"title": "Frobnicator 3000 launch", "url": "http://example.test/frob", "snippet": "The Frobnicator 3000 was released in 2031."},
    {"title": "Gardening tips", "url": "http://example.test/garden", "snippet": "Water tomatoes in the morning."},
]


def answer_task(instruction: str, expected: str, setup: list | None = None) -> ExecTask:
    return ExecTask.model_validate({
        "id": "resource-task", "instruction": instruction, "domain": "general", "setup": setup or [],
        "outputs": ["answer.txt"],
        "evaluator": {"func": "exact_match", "result": {"type": "file_text", "path": "answer.txt"},
                      "expected": {"type": "literal", "value": expected}},
    })


def test_searcher_without_an_endpoint_says_it_cannot_run(tmp_path, pool, scripted, monkeypatch) -> None:
    monkeypatch.delenv("AGENTLAB_SEARCH_URL", raising=False)
    llm = scripted([])
    row = run_task(answer_task("When was the Frobnicator 3000 released?", "2031"), pool=pool, llm=llm,
                   out_dir=tmp_path, options=ExecOptions(), agent="Searcher")
    assert row["success"] is False and not llm.prompts
    assert "Searcher needs a web search endpoint and none is configured; set AGENTLAB_SEARCH_URL" in row["error"]


def test_searcher_queries_a_loopback_search_endpoint(tmp_path, pool, scripted, monkeypatch) -> None:
    program = (
        "import json, os, re, urllib.parse, urllib.request\n"
        "url = os.environ['SEARCH_URL'] + '?' + urllib.parse.urlencode({'q': 'Frobnicator 3000'})\n"
        "hits = json.load(urllib.request.urlopen(url, timeout=10))['results']\n"
        "open('answer.txt', 'w').write(re.search(r'in (\\d{4})', hits[0]['snippet']).group(1))\n"
    )
    with SearchStub(CORPUS) as stub:
        monkeypatch.setenv("AGENTLAB_SEARCH_URL", stub.url)
        llm = scripted([py(program, "DONE")])
        row = run_task(answer_task("When was the Frobnicator 3000 released? Write the year to answer.txt.", "2031"),
                       pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(), agent="Searcher")
        assert stub.queries == ["Frobnicator 3000"]
    assert (row["success"], row["error"], row["agents"]) == (True, None, ["Searcher"])
    assert "SEARCH_URL" in llm.prompts[0][0].content and "Web search:" in llm.prompts[0][0].content


def test_google_drive_agent_writes_into_its_drive_folder_only(tmp_path, pool, scripted, monkeypatch) -> None:
    drive = tmp_path / "drive"
    (drive / "Reports").mkdir(parents=True)
    monkeypatch.setenv("AGENTLAB_DRIVE_FOLDER", str(drive))
    program = (
        "import os, shutil\n"
        "shutil.copy('q3.txt', os.path.join(os.environ['DRIVE_FOLDER'], 'Reports', 'q3.txt'))\n"
        "open('answer.txt', 'w').write('uploaded')\n"
    )
    task = answer_task("Upload q3.txt to the Reports folder of my Drive, then write uploaded to answer.txt.", "uploaded",
                       setup=[{"type": "write_text", "path": "q3.txt", "content": "revenue up"}])
    llm = scripted([py(program, "DONE")])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "run", options=ExecOptions(), agent="GoogleDrive")
    assert (row["success"], row["error"]) == (True, None)
    assert (drive / "Reports" / "q3.txt").read_text() == "revenue up"
    assert "Google Drive: your Drive is the folder named by the environment variable DRIVE_FOLDER" in llm.prompts[0][0].content
    monkeypatch.setenv("AGENTLAB_DRIVE_FOLDER", str(tmp_path / "missing"))
    row = run_task(task, pool=pool, llm=scripted([]), out_dir=tmp_path / "run2", options=ExecOptions(), agent="GoogleDrive")
    assert "GoogleDrive needs a Drive folder and" in row["error"] and "does not exist" in row["error"]


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract OCR is not installed (scripts/sysdeps.sh installs it)")
def test_vision_agent_reads_an_image_with_ocr(tmp_path, pool, scripted) -> None:
    from PIL import Image, ImageDraw, ImageFont

    program = (
        "import pytesseract\nfrom PIL import Image\n"
        "text = pytesseract.image_to_string(Image.open('receipt.png'))\n"
        "total = [ln for ln in text.splitlines() if 'TOTAL' in ln.upper()][0].split()[-1]\n"
        "open('answer.txt', 'w').write(total)\n"
    )
    task = answer_task("What is the total on receipt.png? Write just the number to answer.txt.", "42.50")
    row_dir = tmp_path / "run"

    class WithReceipt(ExecTask):  # the image is drawn here: no task-file writer renders text yet
        def prepare(self, root):  # type: ignore[override]
            img = Image.new("RGB", (600, 200), "white")
            try:
                font = ImageFont.truetype("DejaVuSans.ttf", 40)
            except OSError:  # no DejaVu here: Pillow's own scalable font
                font = ImageFont.load_default(40)
            ImageDraw.Draw(img).text((20, 30), "Coffee 2.50\nTOTAL 42.50", fill="black", font=font)
            img.save(f"{root}/receipt.png")

    llm = scripted([py(program, "DONE")])
    row = run_task(WithReceipt.model_validate(task.model_dump()), pool=pool, llm=llm, out_dir=row_dir,
                   options=ExecOptions(), agent="VisionAgent")
    assert (row["success"], row["error"]) == (True, None), row
    assert "pytesseract" in llm.prompts[0][0].content
