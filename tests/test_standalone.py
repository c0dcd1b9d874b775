"""A clone that stands alone (issue #36): the repository's own files in a folder with nothing
beside it and no ``AGENTLAB_*`` variables. Notebook 01 runs there with tiny parameters, skips the
one section that needs the public benchmark lists with one line naming the command that fills
it, and the runner repeats that line and records it in ``report.json``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.paths import REPO_ROOT


def _copy_tracked(dest: Path) -> None:
    """The files a ``git clone`` of the work tree would hold once committed (tracked and new, not ignored)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT, check=True, capture_output=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = REPO_ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.mark.slow
def test_a_clone_without_the_lists_runs_notebook_01_and_says_what_it_skipped(tmp_path):
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "alone" / "agentlab"
    _copy_tracked(clone)
    assert not (clone / "external").exists() and not (clone.parent / "shared").exists()
    params = tmp_path / "p.yaml"
    params.write_text("export_png: false\npage_screenshots: false\ndocs_img: null\n"
                      "notebooks:\n  \"01\": {domains: [clock], explore: false}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLAB_")}
    env.update(PYTHONPATH=str(clone), AGENTLAB_CACHE=os.environ.get("AGENTLAB_CACHE", str(Path.home() / ".cache" / "agentlab")))
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", "from agentlab.cli import main; main()", "notebooks", "run",
                           "--only", "01", "--params", str(params), "--out", str(out)],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    first = report["notebooks"][0]
    assert first["name"] == "01_exploration" and first["status"] == "ok", proc.stderr[-2000:]
    [line] = first["skipped"]
    assert line.startswith("skipped: the benchmark overview") and "`agentlab benchmarks fetch`" in line
    assert str(clone / "external" / "benchmarks") in line  # the lists are looked for inside the clone
    assert line in proc.stdout  # the runner repeats it on the terminal
    executed = (out / "01_exploration.ipynb").read_text()
    assert "skipped: the benchmark overview" in executed
