"""A forged run folder (issue #37, case 10): the viewer and the report treat a run folder as data.

A copy of the real viz run folder gets a script planted in every field that reaches a page (a
plan's steps, error texts, a task id, agent names, an instruction), rows and records pointing out
of the folder (an absolute trajectory, a ``../`` and an absolute screenshot), and symbolic links
to a folder outside (a screenshot, a plan step's trajectory folder). The site must escape every
field, copy nothing from outside (the marker planted there is nowhere in the site), show a
placeholder instead, and still render; the Markdown report must carry no raw HTML.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from agentlab.fileio import read_jsonl, write_jsonl
from agentlab.viz.chromium import dump_dom, find_chromium
from agentlab.viz.report import write_report
from agentlab.viz.site import write_site

from .conftest import CODE, FAILED, PHONE, PLAN

#: runs if a page ever inserts it unescaped (Chromium then shows <body data-pwned=...>)
PAYLOAD = ("<script>document.body.setAttribute('data-pwned','1')</script>"
           "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"><!--")
MARKER = "MARKER-OUTSIDE-7f3a"
SECRET_SIZE = (123, 77)  #: the outside picture's size: no picture of the site may have it


def _edit_jsonl(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    rows = read_jsonl(path)
    write_jsonl(path, [edit(i, r) for i, r in enumerate(rows)])


def _edit_json(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def forged(exec_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("forged")
    run = top / "run"
    shutil.copytree(exec_run, run, symlinks=True)
    # outside the run folder: a picture, a text file and a whole episode, each holding the marker
    outside = top / "outside"
    outside.mkdir()
    Image.new("RGB", SECRET_SIZE, (7, 200, 9)).save(outside / "secret.png")
    (outside / "secret.txt").write_text(MARKER)
    shutil.copytree(run / "episodes" / CODE, outside / "episode")
    _edit_jsonl(outside / "episode" / "traj.jsonl", lambda i, r: {**r, "thought": MARKER, "observation": MARKER})
    _edit_json(outside / "episode" / "meta.json", lambda m: m.update(task=MARKER))

    # fields that reach a page
    def row(i: int, r: dict) -> dict:  # type: ignore[type-arg]
        if r["id"] == FAILED:
            return {**r, "error": PAYLOAD, "agents": [PAYLOAD], "trajectory": str(outside / "episode")}
        if r["id"] == CODE:
            return {**r, "id": PAYLOAD + CODE, "agent_error": PAYLOAD, "domain": PAYLOAD}
        if r["id"] == PLAN:
            return {**r, "trajectory": "../outside/episode/../../run/" + r["trajectory"]}  # leaves and comes back: fine
        return r

    _edit_jsonl(run / "results.jsonl", row)
    plan = run / "episodes" / PLAN / "plan.json"
    _edit_json(plan, lambda p: [o.update(steps=PAYLOAD, agent=PAYLOAD, index=PAYLOAD, summary=PAYLOAD)
                                for o in p["step_outcomes"]] and None)
    _edit_json(run / "episodes" / CODE / "meta.json", lambda m: m.update(agent=PAYLOAD, error=PAYLOAD, task=PAYLOAD))
    _edit_jsonl(run / "episodes" / CODE / "traj.jsonl",
                lambda i, r: {**r, "error": PAYLOAD, "thought": PAYLOAD, "reward": PAYLOAD,
                              "info": {**r.get("info", {}), "roles": [{"role": PAYLOAD, "text": PAYLOAD}]}})
    _edit_jsonl(run / "episodes" / PLAN / "step-1-SheetAgent" / "traj.jsonl", lambda i, r: {**r, "step": PAYLOAD})
    # paths out of the run folder: ../, absolute, and links
    phone = run / "episodes" / PHONE

    def shots(i: int, r: dict) -> dict:  # type: ignore[type-arg]
        if i == 0:
            return {**r, "som": "../../../outside/secret.png", "screenshot": "../../etc/hostname"}
        if i == 1:
            return {**r, "som": str(outside / "secret.png"), "screenshot": None}
        return r

    _edit_jsonl(phone / "traj.jsonl", shots)
    for name in ("step_002.png", "step_002_som.png"):
        (phone / name).unlink()
        (phone / name).symlink_to(outside / "secret.png")
    (run / "episodes" / PLAN / "step-3-EvilAgent").symlink_to(outside / "episode", target_is_directory=True)
    (run / "episodes" / "linked-out").symlink_to(outside / "episode", target_is_directory=True)
    return run


@pytest.fixture(scope="module")
def site(forged: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("forged-site")
    write_site(forged, out)
    return out


def _pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text() for p in site.rglob("*.html")}


def test_no_field_of_a_forged_run_reaches_a_page_unescaped(site: Path) -> None:
    pages = _pages(site)
    assert len(pages) >= 5
    for name, text in pages.items():
        assert "<script>document" not in text and "onerror=" not in text.replace("onerror=&quot;", ""), name
        assert "<!--" not in text, name
    plan = next(t for n, t in pages.items() if PLAN in n)
    assert plan.count("&lt;script&gt;document.body") >= 4  # steps, agent, index and summary of each outcome: shown as text
    code = next(t for n, t in pages.items() if CODE in n and n.startswith("episodes/"))
    assert "&lt;script&gt;" in code and "unreadable" not in code  # every record shown, its fields as text
    # a record whose step is not a number: that trajectory is said to be unreadable, the page goes on
    assert "trajectory unreadable" in plan and "not a step record (its step is str" in plan and "Verdict" in plan


def test_nothing_outside_the_run_folder_is_followed_or_copied(site: Path) -> None:
    for f in site.rglob("*"):
        if f.is_file():
            assert MARKER.encode() not in f.read_bytes(), f
            if f.suffix == ".png":
                assert Image.open(f).size != SECRET_SIZE, f"{f} is the picture from outside the run folder"
        assert not f.is_symlink(), f
    pages = _pages(site)
    phone = pages[f"episodes/{PHONE}.html"]
    assert phone.count("leads outside the run folder; not followed") == 3  # ../, absolute and the link
    failed = pages[f"episodes/{FAILED}.html"]
    assert "the row&#x27;s trajectory path" in failed and "leads outside the run folder" in failed
    assert "agentlab-step" not in failed or MARKER not in failed  # its own folder (episodes/<id>) is shown instead
    plan = pages[f"episodes/{PLAN}.html"]
    assert "trajectory step-3-EvilAgent leads outside the run folder" in plan
    assert "step 2 · WordAgent" in plan  # the plan's real steps are still there
    linked = [t for n, t in pages.items() if "linked-out" in n]
    assert all(MARKER not in t for t in linked)


def test_the_inspector_and_plotly_json_escape_a_forged_trajectory(forged: Path) -> None:
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.viz.trajectory import static_html

    traj = load_trajectory(forged / "episodes" / CODE)
    text = static_html(traj)
    assert "<script>document" not in text and "<!--" not in text
    phone = load_trajectory(forged / "episodes" / PHONE)
    assert phone.image(0, som=True) is None and phone.image(1, som=True) is None  # ../ and absolute: never opened


def test_the_markdown_report_carries_no_raw_html(forged: Path, tmp_path: Path) -> None:
    md, page = write_report([forged], tmp_path / "report")
    text = md.read_text()
    assert "<script" not in text and "<img" not in text and "<!--" not in text
    assert "&lt;script>document.body" in text  # the error text is kept, as text
    assert "<script" not in page.read_text()


@pytest.mark.skipif(find_chromium() is None, reason="no chromium installed (scripts/sysdeps.sh installs it)")
def test_chromium_runs_no_planted_script_and_the_pages_render(site: Path) -> None:
    for name in (f"episodes/{PLAN}.html", f"episodes/{FAILED}.html", "index.html"):
        dom = dump_dom(site / name)
        assert "data-pwned=" not in dom.replace("setAttribute('data-pwned'", ""), name
        assert "<table" in dom and "ExecutionAcc" in dom if name == "index.html" else "Verdict" in dom, name
    assert os.path.getsize(site / "index.html") > 1000


def test_a_team_folder_linked_out_of_its_episode_is_not_read(forged: Path, tmp_path: Path) -> None:
    from agentlab.errors import DataError
    from agentlab.viz.team import team_messages

    episode = tmp_path / "episode"
    episode.mkdir()
    (episode / "team").symlink_to(forged.parent / "outside" / "episode", target_is_directory=True)
    with pytest.raises(DataError, match="team/ leads outside the episode folder"):
        team_messages(episode)
