"""``agentlab tasks``: set up a start state, score it (fails), solve it, score again (passes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def agentlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentlab.cli", *args], capture_output=True, text=True, timeout=120)


def test_setup_eval_round_trip(tmp_path):
    r = agentlab("tasks", "setup", "os-error-lines", str(tmp_path))
    assert r.returncode == 0 and (tmp_path / "server.log").exists()
    r = agentlab("tasks", "eval", "os-error-lines", str(tmp_path))
    assert r.returncode == 1 and "file not found" in r.stdout
    lines = [ln for ln in (tmp_path / "server.log").read_text().splitlines() if " ERROR " in ln]
    Path(tmp_path / "errors.txt").write_text("\n".join(lines) + "\n")
    r = agentlab("tasks", "eval", "os-error-lines", str(tmp_path))
    assert r.returncode == 0 and r.stdout.startswith("score 1.000")
    r = agentlab("tasks", "eval", "no-such-task", str(tmp_path))
    assert r.returncode != 0 and "no-such-task.json: task file not found" in r.stderr
    assert "Traceback" not in r.stderr
