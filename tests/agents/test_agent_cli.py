"""The ``agentlab agent`` commands, run as a real subprocess against the fake adb server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.envs.trajectory import load_trajectory

REPO = Path(__file__).resolve().parents[2]


def _cli(args: list[str], tmp_path: Path, stdin: str = "", timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADBUTILS_ADB_PATH": "/bin/false", "AGENTLAB_RUNS": str(tmp_path / "runs"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "agentlab.cli", "agent", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=timeout)


def test_demo_episodes_replay_docs(fake_adb, tmp_path) -> None:
    port = ["--adb-port", str(fake_adb.port)]
    r = _cli(["demo", "--task", "turn off vibration", "--run", "demos", "--episode", "vib", *port], tmp_path,
             stdin="tap(2)\ntap(42)\ntap(2)\nexit()\n")
    assert r.returncode == 0, r.stderr
    assert "recorded 2 action(s)" in r.stdout and "no element 42" in r.stderr and '[2] Button "Settings"' in r.stdout
    assert fake_adb.device.app.vibrate is False
    ep = tmp_path / "runs" / "demos" / "vib"
    assert [a.call_name for a in load_trajectory(ep).actions()] == ["tap", "tap", "exit"]

    r = _cli(["episodes", str(tmp_path / "runs" / "demos")], tmp_path)
    assert r.stdout.startswith("vib\tdone\t")

    fake_adb.device.app.vibrate = True
    fake_adb.device.app.stack = ["home"]
    r = _cli(["replay", str(ep), *port, "--record-to", str(tmp_path / "runs" / "replays" / "vib")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "replayed 3 action(s)" in r.stdout and fake_adb.device.app.vibrate is False

    r = _cli(["docs", "--app", "clock", "--docs-dir", str(tmp_path / "docs")], tmp_path)
    assert r.returncode == 0 and "useless: none" in r.stdout


def test_errors_are_one_line(tmp_path) -> None:
    r = _cli(["demo", "--task", "x", "--adb-port", "1"], tmp_path)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "no adb server answers" in r.stderr
    r = _cli(["replay", str(tmp_path)], tmp_path)
    assert r.returncode == 1 and "no traj.jsonl" in r.stderr


@pytest.mark.slow
def test_deploy_command_with_embedded_model(fake_adb, tmp_path) -> None:
    cfg = tmp_path / "agent.yaml"
    cfg.write_text("agent:\n  max_retries: 0\n  max_new_tokens: 32\n")
    r = _cli(["deploy", "--app", "clock", "--task", "open settings", "--adb-port", str(fake_adb.port), "--max-steps", "1",
              "--config", str(cfg), "--docs-dir", str(tmp_path / "docs"), "--run", "r", "--episode", "e"], tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "trajectory:" in r.stdout and "LLM call(s)" in r.stdout
    t = load_trajectory(tmp_path / "runs" / "r" / "e")
    assert t.meta.extra["config"]["max_new_tokens"] == 32 and t.meta.status in {"done", "failed", "max_steps"}
