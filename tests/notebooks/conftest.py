"""One execution of every notebook with the tiny parameters, shared by the workbench tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.notebooks import PARAMS_DIR


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """Run ``agentlab notebooks run --params tiny.yaml`` (the real CLI, in a subprocess)."""
    out = tmp_path_factory.mktemp("notebooks-tiny")
    proc = subprocess.run(
        [sys.executable, "-m", "agentlab.cli", "notebooks", "run", "--params", str(PARAMS_DIR / "tiny.yaml"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, f"notebook run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return out
