"""``agentlab route --mode manager --workers 2``: the same predictions as a serial run (line order
aside), the manager model reached through a loopback endpoint that answers from the prompt alone."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from agentlab.cli import main
from agentlab.llm.testing import LoopbackChatServer
from agentlab.paths import agents_dir

AGENTS = {"SheetAgent": "desktop", "SpotifyAgent": "mobile", "MailAgent": "desktop"}
TASKS = ["Sort budget.xlsx by the Amount column", "Play some jazz on Spotify",
         "Send the minutes to the whole team by email", "Sum the June column and mail the total to Ana"]


def _manager(body: dict, k: int) -> str:
    """Plan with the first offered agent named in the prompt (offers depend on the task only)."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    offered = sorted(AGENTS, key=lambda a: text.find(a) if a in text else len(text))
    task = re.findall(r"[A-Z][^\n]{10,}", text)[-1][:60]
    return f"## {offered[0]}: {task} ##"


def _run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    for name, platform in AGENTS.items():
        (tmp_path / "agents" / platform).mkdir(parents=True, exist_ok=True)
        shutil.copy(agents_dir() / platform / f"{name}.md", tmp_path / "agents" / platform / f"{name}.md")
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "instruction": t}) + "\n" for i, t in enumerate(TASKS)))
    return tmp_path


def test_router_mode_refuses_workers(workdir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rc = _run(["route", "--router", "embedding", "--tasks", str(workdir / "tasks.jsonl"), "--agents", str(workdir / "agents"),
               "--out", str(workdir / "p.jsonl"), "--workers", "2"])
    err = capsys.readouterr().err
    assert rc != 0 and "shard manager mode's per-task plans" in err and len(err.strip().splitlines()) == 1
    assert not (workdir / "p.jsonl").exists()


@pytest.mark.slow
def test_manager_plans_on_two_workers_equal_serial(ray_session, workdir: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    with LoopbackChatServer(_manager) as srv:
        monkeypatch.setenv("AGENTLAB_LLM_KIND", "openai")
        monkeypatch.setenv("AGENTLAB_LLM_BASE_URL", srv.url)
        monkeypatch.setenv("AGENTLAB_LLM_MODEL", "loopback-manager")
        common = ["route", "--mode", "manager", "--unconstrained", "--router", "embedding", "--k", "2", "--tasks", str(workdir / "tasks.jsonl"),
                  "--agents", str(workdir / "agents")]
        assert _run([*common, "--out", str(workdir / "serial.jsonl")]) == 0, capsys.readouterr().err
        assert _run([*common, "--out", str(workdir / "par.jsonl"), "--workers", "2"]) == 0, capsys.readouterr().err
        assert len(srv.requests) == 2 * len(TASKS)

    def preds(name: str) -> list[dict]:
        # probabilities compared to 1e-6: a worker's torch may use another thread count than the
        # driver's, which moves the sentence encoder's floats in the last digits, never a decision
        rows = sorted((json.loads(line) for line in (workdir / name).read_text().splitlines()), key=lambda p: p["id"])
        return [{**p, "ranking": [[n, round(x, 6)] for n, x in p["ranking"]]} for p in rows]

    serial = preds("serial.jsonl")
    assert [p["id"] for p in serial] == [f"t{i}" for i in range(len(TASKS))]
    assert all(p["agent"] in AGENTS and p["plan"] for p in serial), serial
    assert preds("par.jsonl") == serial
