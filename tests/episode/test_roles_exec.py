"""``agentlab exec`` with a model per role on a LibreOffice desktop task, every role behind a
loopback OpenAI-compatible server (a test double that records every request): a GUI agent whose
model takes images is sent the marked screenshot in its first request; Agent S2 with three models
reaches each by name, its grounder's point is the click, the row's ``usage_by_role`` adds up to
the row's totals, and a resume with another grounder is refused in one line."""

from __future__ import annotations

import base64
import io
import shutil
from typing import Any

import pytest

from agentlab.envs.testing.system import missing_system
from PIL import Image, ImageChops

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.xdisplay import xvfb_available
from agentlab.fileio import read_jsonl
from agentlab.llm.screens import fit_image
from agentlab.record.manifest import ManifestMismatchError, read_manifest
from agentlab.tasks.spec import tasks_dir
from agentlab.envs.trajectory import load_trajectory

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(400)]

TASK = "calc-enter-total"


def _needs_calc() -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if not shutil.which("soffice"):
        missing_system("soffice is not installed (apt-get install libreoffice-calc libreoffice-gtk3)")


def _cli(args: list[str]):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    return CliRunner().invoke(app, args)


def _images(body: dict[str, Any]) -> list[Image.Image]:
    content = body["messages"][-1]["content"]
    urls = [p["image_url"]["url"] for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []
    assert all(u.startswith("data:image/png;base64,") for u in urls)
    return [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))).convert("RGB") for u in urls]


def test_a_gui_agent_whose_model_sees_gets_the_marked_screenshot_first(tmp_path, chat_server) -> None:
    _needs_calc()
    url = chat_server(lambda body, k: "Observation: a sheet.\nThought: stop here.\nAction: FINISH\nSummary: done")
    cfg = tmp_path / "models.yaml"
    cfg.write_text(f'llm: {{kind: openai, base_url: "{url}", model: ui-vl-7b, vision: true, max_image_side: 1024}}\n')
    out = tmp_path / "run"
    res = _cli(["exec", "--tasks", str(tasks_dir() / f"{TASK}.json"), "--out", str(out), "--agent", "CalcAgent",
                "--llm-config", str(cfg), "--max-steps", "2", "-O", "route=gui", "-O", "actions=raw"])  # the window, not the file route
    assert res.exit_code == 0, res.output
    (row,) = read_jsonl(out / "results.jsonl")
    assert row["error"] is None and row["status"] == "done", row
    first = chat_server.requests[0]
    assert first["model"] == "ui-vl-7b"
    (sent,) = _images(first)
    assert max(sent.size) == 1024  # downscaled to the role's side
    # the accessibility listing still goes along as text
    text = next(p["text"] for p in first["messages"][-1]["content"] if p["type"] == "text")
    assert "Elements on the current screen" in text
    # what was sent is the set-of-marks screenshot the trajectory kept (numbers drawn), downscaled
    traj = load_trajectory(out / row["trajectory"])
    som = traj.image(0, som=True)
    raw = traj.image(0)
    assert som is not None and raw is not None
    assert ImageChops.difference(sent, fit_image(som.convert("RGB"), 1024)).getbbox() is None
    assert ImageChops.difference(sent, fit_image(raw.convert("RGB"), 1024)).getbbox() is not None
    usage = row["usage_by_role"]
    assert usage["agent"]["model_id"] == "ui-vl-7b" and usage["agent"]["images"] == 1
    assert usage["agent"]["image_bytes"] > 0


def test_agent_s2_with_three_models_each_role_its_own_and_the_row_adds_up(tmp_path, chat_server) -> None:
    _needs_calc()
    script = {"planner-7b": ["Plan:\n1. Select cell B2", "DONE"],
              "actor-vl-7b": ['Thought: the cell.\nAction: click("the cell B2 of the sheet")', "Thought: ok\nAction: done()"],
              "grounder-7b": ["<point>500 300</point>"]}
    url = chat_server(lambda body, k: script[body["model"]].pop(0) if script[body["model"]] else "DONE")
    cfg = tmp_path / "models.yaml"

    def write(grounder: str) -> None:
        cfg.write_text(f"""
llm: {{kind: openai, base_url: "{url}", model: planner-7b}}
roles:
  worker: {{kind: openai, base_url: "{url}", model: actor-vl-7b, vision: true}}
  grounder: {{kind: openai, base_url: "{url}", model: {grounder}, vision: true, max_image_side: 1000}}
""")

    write("grounder-7b")
    out = tmp_path / "run"
    args = ["exec", "--tasks", str(tasks_dir() / f"{TASK}.json"), "--out", str(out), "--agent", "AgentS2",
            "--llm-config", str(cfg), "--max-steps", "3", "-O", "point_coords=relative", "-O", "ocr=false"]
    res = _cli(args)
    assert res.exit_code == 0, res.output
    (row,) = read_jsonl(out / "results.jsonl")
    assert row["error"] is None, row
    models = [r["model"] for r in chat_server.requests]
    assert models == ["planner-7b", "actor-vl-7b", "grounder-7b", "actor-vl-7b", "planner-7b"]
    (ground,) = _images(chat_server.requests[2])
    assert max(ground.size) == 1000
    traj = load_trajectory(out / row["trajectory"])
    screen = traj.image(0)
    assert screen is not None
    w, h = screen.size
    click = next(s.action for s in traj.steps if s.action and s.action.get("type") == "click")
    assert (click["x"], click["y"]) == (int(0.5 * w), int(0.3 * h))  # the grounder's 0-1000 point, on the screen
    usage = row["usage_by_role"]
    assert {r: u["model_id"] for r, u in usage.items()} == {
        "manager": "planner-7b", "worker": "actor-vl-7b", "grounder": "grounder-7b"}
    for key in ("llm_calls", "tokens_in", "tokens_out"):
        assert sum(u[key] for u in usage.values()) == row[key]
    assert row["llm_calls"] == 5
    manifest = read_manifest(out / "manifest.json")
    assert manifest.models["role:grounder"]["model_id"] == "grounder-7b"
    assert manifest.models["role:grounder"]["images"] is True and manifest.models["role:grounder"]["max_image_side"] == 1000
    assert manifest.models["role:worker"]["model_id"] == "actor-vl-7b"
    write("another-grounder")
    again = _cli([*args, "--resume"])
    assert again.exit_code != 0 and isinstance(again.exception, ManifestMismatchError)
    line = str(again.exception)
    assert "\n" not in line and "role:grounder" in line and "another-grounder" in line


def test_a_phone_agent_whose_model_sees_gets_the_marked_screenshot(tmp_path, chat_server) -> None:
    url = chat_server(lambda body, k: "Observation: the clock.\nThought: stop.\nAction: FINISH\nSummary: done")
    cfg = tmp_path / "models.yaml"
    cfg.write_text(f'llm: {{kind: openai, base_url: "{url}", model: phone-vl, vision: true}}\n')
    out = tmp_path / "run"
    task = sorted(tasks_dir().glob("clock-*.json"))[0]
    res = _cli(["exec", "--tasks", str(task), "--out", str(out), "--llm-config", str(cfg), "--max-steps", "2",
                "-O", "actions=raw"])  # AppAgent's raw space may FINISH at once
    assert res.exit_code == 0, res.output
    (row,) = read_jsonl(out / "results.jsonl")
    assert row["error"] is None and row["status"] == "done", row
    (sent,) = _images(chat_server.requests[0])
    traj = load_trajectory(out / row["trajectory"])
    som = traj.image(0, som=True)
    assert som is not None and ImageChops.difference(sent, fit_image(som.convert("RGB"), 1280)).getbbox() is None
    assert row["usage_by_role"]["agent"]["images"] == 1


def test_colas_gui_decision_agent_sees_the_screen_and_its_planner_and_reviewer_read(tmp_path, chat_server) -> None:
    from agentlab.paths import agents_dir

    _needs_calc()
    pool = tmp_path / "pool" / "desktop"  # only GUI agents, so the scheduler's choice acts through the screen
    pool.mkdir(parents=True)
    for name in ("CalcAgent", "WriterAgent"):
        shutil.copy(agents_dir() / "desktop" / f"{name}.md", pool)

    def reply(body: dict[str, Any], k: int) -> str:
        first = body["messages"][0]["content"]
        if first.startswith("You are the planner"):
            return "1. Type the word Total into cell A4 of budget.xlsx"
        if first.startswith("You review one step"):
            return "Verdict: yes\nReason: fine"
        return "Observation: a sheet.\nThought: stop.\nAction: FINISH\nSummary: done"

    url = chat_server(reply)
    cfg = tmp_path / "models.yaml"
    cfg.write_text(f'llm: {{kind: openai, base_url: "{url}", model: planner-7b}}\n'
                   f'roles:\n  agent: {{kind: openai, base_url: "{url}", model: ui-vl, vision: true}}\n')
    out = tmp_path / "run"
    res = _cli(["exec", "--tasks", str(tasks_dir() / f"{TASK}.json"), "--out", str(out), "--llm-config", str(cfg),
                "--team", "cola", "--max-steps", "2", "--agents", str(tmp_path / "pool"), "-O", "route=gui", "-O", "actions=raw"])
    assert res.exit_code == 0, res.output
    (row,) = read_jsonl(out / "results.jsonl")
    assert row["error"] is None and row["agents"] == ["CalcAgent"], row
    seen = [(r["model"], len(_images(r))) for r in chat_server.requests]
    assert seen == [("planner-7b", 0), ("ui-vl", 1), ("planner-7b", 0)]  # planner, decision agent, reviewer
    usage = row["usage_by_role"]
    assert set(usage) == {"planner", "agent", "reviewer"} and usage["agent"]["images"] == 1
    assert sum(u["llm_calls"] for u in usage.values()) == row["llm_calls"] == 3
