"""``agentlab view``: the static site of a run, looked at the way a person does, in headless Chromium.

The run folders come from the real episode runner (tests/viz/conftest.py): a code agent in a
sandboxed workspace, a phone agent on the protocol-level fake device, a failed task, a two-agent
gold plan, a COLA team; a desktop episode is recorded on the GTK demo app under Xvfb.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image

from agentlab.cli import main
from agentlab.fileio import read_jsonl
from agentlab.viz.chromium import dump_dom, find_chromium, screenshot
from agentlab.viz.site import write_site
from agentlab.viz.trajectory import ACTION_RGB

from .conftest import CODE, FAILED, PHONE, PLAN

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no chromium installed (scripts/sysdeps.sh installs it)")


def _page(site: Path, episode: str) -> Path:
    return site / "episodes" / f"{episode}.html"


def _marker_pixels(img: Image.Image, tol: int = 40) -> int:
    """Pixels of the colour actions are drawn in (the click ring, the target box, arrows)."""
    rgb = img.convert("RGB")
    return sum(n for n, (r, g, b) in rgb.getcolors(1 << 24) or []
               if abs(r - ACTION_RGB[0]) < tol and abs(g - ACTION_RGB[1]) < tol and abs(b - ACTION_RGB[2]) < tol)


def _not_blank(png: Path) -> None:
    """A rendered page, not an empty one: many colours and real contrast."""
    from PIL import ImageStat

    img = Image.open(png).convert("L")
    assert ImageStat.Stat(img).stddev[0] > 20, "the page looks blank"
    assert len(img.resize((64, 128)).getcolors(1 << 16) or []) > 20


def _nothing_fetched(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert not re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text), page  # no CDN, no server
        assert "<link" not in text  # style is inline


@pytest.fixture(scope="module")
def site(exec_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    index = write_site(exec_run, out)
    assert index == out / "index.html"
    return out


@needs_chromium
def test_the_index_lists_every_episode_and_sorts_and_filters(site: Path, exec_run: Path, tmp_path: Path) -> None:
    dom = dump_dom(site / "index.html")
    ids = [r["id"] for r in read_jsonl(exec_run / "results.jsonl")]
    assert set(ids) == {CODE, PHONE, FAILED, PLAN}
    for i in ids:
        assert f'href="episodes/{i}.html"' in dom and (site / "episodes" / f"{i}.html").is_file()
    assert dom.count("<tr data-domain=") == 4
    for name in ("domain", "status", "agent", "router"):  # the filters, filled from the rows
        assert f'<select name="{name}">' in dom
    assert '<option value="ClockAgent">' in dom and '<option value="failed">' in dom
    assert 'id="shown">4<' in dom  # the script ran: all rows shown
    _nothing_fetched(site)
    shot = screenshot(site / "index.html", tmp_path / "index.png", width=1200, height=500)
    _not_blank(shot)


@needs_chromium
def test_a_phone_episode_shows_each_screenshot_with_a_visible_tap_marker(site: Path, tmp_path: Path) -> None:
    page = _page(site, PHONE)
    dom = dump_dom(page)
    assert dom.count('class="agentlab-step"') >= 2  # tap(2), tap(2), then the final screen
    assert "tap element 2" in dom and "click(2)" in dom  # the action and the model's typed call
    images = sorted((site / "episodes" / PHONE).glob("*.png"))
    assert len(images) >= 2 and _marker_pixels(Image.open(images[0])) > 200  # the ring and the box drawn on the screenshot
    shot = screenshot(page, tmp_path / "phone.png", width=1200, height=1400)
    _not_blank(shot)
    assert _marker_pixels(Image.open(shot)) > 100  # and visible in the rendered page


@needs_chromium
def test_a_code_episode_shows_its_programs_exit_codes_output_and_the_verdict(site: Path, tmp_path: Path) -> None:
    dom = dump_dom(_page(site, CODE))
    assert "exit code 0" in dom and "import csv, collections, openpyxl" in dom  # the program, whole
    assert re.search(r"<b>stdout</b></p><pre>sales\.csv", dom)  # what `ls` printed
    assert "Verdict: " in dom and "success" in dom and "292.5" in dom  # expected and found of each check
    failed = dump_dom(_page(site, FAILED))
    assert "failure" in failed and "errors.txt: file not found" in failed  # why it failed, from the row's verdict
    _not_blank(screenshot(_page(site, CODE), tmp_path / "code.png", width=1200, height=1400))


def test_a_plan_episode_shows_each_agents_steps_and_the_hubs_handoffs(site: Path) -> None:
    text = _page(site, PLAN).read_text()
    assert "Plan and the hub's hand-offs" in text and "wrote total.txt" in text  # plan.json's outcomes
    assert text.index("step 1 · SheetAgent") < text.index("step 2 · WordAgent")
    assert '<details class="role"><summary><b>hub</b>' in text  # the hand-off message, collapsible
    assert "1. SheetAgent (done): wrote total.txt" in text
    assert "Total: 200.5" in text  # the verdict's found value


@pytest.mark.slow
def test_a_cola_episode_shows_the_team_messages_and_the_rolled_back_attempt(cola_run: Path, tmp_path: Path) -> None:
    write_site(cola_run, tmp_path / "site")
    text = next((tmp_path / "site" / "episodes").glob("*.html")).read_text()
    assert "team: planner, scheduler, reviewer, person" in text
    assert "attempt 1 (rolled back)" in text
    assert text.index("attempt 1 (rolled back)") < text.index("step 1 · SheetAgent</h2>")  # the kept attempt comes after
    for role in ("planner", "scheduler", "reviewer", "decision"):
        assert f"<summary><b>{role}</b>" in text
    assert "verdict: no" in text and "verdict: yes" in text


@pytest.mark.xvfb
@needs_chromium
def test_a_desktop_episode_shows_clicks_and_typed_text(xdisplay, demo_app, needs_a11y, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from agentlab.agents import record_demo
    from agentlab.envs.desktop import DesktopEnv
    from agentlab.experiments.scripted_demo import scripted_lines
    from agentlab.fileio import append_jsonl
    from agentlab.envs.trajectory import TrajectoryRecorder

    run = tmp_path / "run"
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    rec = TrajectoryRecorder(run / "episodes" / "greet-ada", task="Greet Ada", env="DesktopEnv", agent="scripted-demo")
    screens: list = []
    n = record_demo(env, rec, scripted_lines(["click({Name})", 'type("Ada")', "click({Greet})", "stop()"], lambda: screens[-1]),
                    on_screen=screens.append)
    rec.finish("done")
    append_jsonl(run / "results.jsonl", {"id": "greet-ada", "domain": "gtk", "router": "forced", "agents": ["scripted-demo"],
                                         "success": True, "score": 1.0, "status": "done", "steps": n,
                                         "trajectory": "episodes/greet-ada"})
    write_site(run)
    page = run / "view" / "episodes" / "greet-ada.html"
    dom = dump_dom(page)
    assert dom.count('class="agentlab-step"') >= 3 and "type" in dom and "Ada" in dom
    marked = [_marker_pixels(Image.open(p)) for p in sorted((run / "view" / "episodes" / "greet-ada").glob("*.png"))]
    assert sum(m > 50 for m in marked[:3]) >= 2  # the two clicks' rings (typing is a caption)
    _not_blank(screenshot(page, tmp_path / "desk.png", width=1300, height=1200))


# ----------------------------------------------------------------------------- older and damaged folders


def test_rows_of_older_versions_show_absent_fields_and_unfinished_episodes(exec_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "old"
    shutil.copytree(exec_run / "episodes", run / "episodes")
    rows = [{"id": CODE, "success": True},  # a row from before status, costs, trajectory and verdict
            {"id": PHONE, "domain": "clock", "agents": "ClockAgent", "steps": "2", "success": "yes", "trajectory": "../../etc"},
            {"id": "..", "domain": "x"}]  # an id that names no folder
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"id": "torn')  # a torn last line
    index = write_site(run)
    text = index.read_text()
    assert all(f">{i}</a>" in text for i in (CODE, PHONE, "..")) and "—" in text
    assert f">{FAILED}</a>" in text and f">{PLAN}</a>" in text  # folders no row names: listed as unfinished
    assert text.count("<td>unfinished") == 2
    code = (run / "view" / "episodes" / f"{CODE}.html").read_text()
    assert "rows written before issue #29" in code and "exit code 0" in code  # no verdict details; the steps still shown
    phone = (run / "view" / "episodes" / f"{PHONE}.html").read_text()
    assert "agentlab-step" in phone  # found under episodes/<id>, not at ../../etc
    assert "no episode folder recorded" in (run / "view" / "episodes" / "episode.html").read_text()


def test_a_damaged_episode_damages_only_its_own_page(exec_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "damaged"
    shutil.copytree(exec_run, run, ignore=shutil.ignore_patterns("view"))
    (run / "episodes" / PHONE / "step_000_som.png").write_bytes(b"not a png")
    traj = run / "episodes" / CODE / "traj.jsonl"
    traj.write_text("this is not json\n" + traj.read_text())
    write_site(run, tmp_path / "site")
    phone = (tmp_path / "site" / "episodes" / f"{PHONE}.html").read_text()
    assert "screenshot unreadable" in phone and phone.count('class="agentlab-step"') >= 1
    assert "trajectory unreadable" in (tmp_path / "site" / "episodes" / f"{CODE}.html").read_text()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: None, "run folder not found"),
        (lambda p: p.mkdir(), "no results.jsonl here"),
        (lambda p: (p.mkdir(), (p / "results.jsonl").write_text('{"id": 1}\nnot json\n{"id": 2}\n')), "results.jsonl:2: line is not valid JSON"),
        (lambda p: p.write_text("a file"), "not a folder"),
    ],
    ids=["missing", "no-results", "bad-line", "a-file"],
)
def test_bad_input_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], make, says: str) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    make(run)
    with pytest.raises(SystemExit) as exc:
        main(["view", str(run)])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert exc.value.code == 1 and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert "Traceback" not in err


def test_the_command_writes_the_site_beside_the_run_and_prints_its_path(exec_run: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(exec_run, run, ignore=shutil.ignore_patterns("view"))
    with open(run / "results.jsonl", "a") as fh:
        fh.write('{"id": "half')  # a run killed mid-write: the torn last line is dropped, as everywhere
    main(["view", str(run)])
    out = capsys.readouterr().out
    assert out.strip() == f"view: {run / 'view' / 'index.html'}"
    assert (run / "view" / "episodes" / f"{PHONE}.html").is_file()


def test_an_experiments_arm_finds_the_episodes_it_shares_with_other_arms(exec_run: Path, tmp_path: Path) -> None:
    """agentlab.experiments.execution_acc writes each arm's rows under arms/<arm>/ with trajectories in
    ../../by_agent/<agent>/episodes/<id>: the viewer follows them (and copies the pictures into the site)."""
    shutil.copytree(exec_run / "episodes", tmp_path / "by_agent" / "ClockAgent" / "episodes")
    arm = tmp_path / "arms" / "gt"
    arm.mkdir(parents=True)
    row = next(r for r in read_jsonl(exec_run / "results.jsonl") if r["id"] == PHONE)
    (arm / "results.jsonl").write_text(json.dumps({**row, "trajectory": f"../../by_agent/ClockAgent/episodes/{PHONE}"}) + "\n")
    write_site(arm)
    page = (arm / "view" / "episodes" / f"{PHONE}.html").read_text()
    assert page.count('class="agentlab-step"') >= 2 and f"../../by_agent/ClockAgent/episodes/{PHONE}" in page
    assert list((arm / "view" / "episodes" / PHONE).glob("*.png"))  # the site holds its own copies
