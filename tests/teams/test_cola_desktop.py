"""A COLA backtrack on a desktop: the files come back byte for byte and the application is relaunched on them."""

from __future__ import annotations

import subprocess

import pytest

from agentlab.envs.desktop_task import open_desktop_task
from agentlab.envs.snapshot import FolderStore
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.tasks.spec import load_task, tasks_dir

from ..episode.test_desktop_tasks import _needs_desktop as needs_desktop


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_restore_and_reopen_relaunches_the_application_on_the_restored_file(tmp_path) -> None:
    needs_desktop()  # skips, saying why, without Xvfb, an accessibility tree or LibreOffice
    task = load_task(tasks_dir() / "calc-enter-total.json")
    opened = open_desktop_task(task, tmp_path / "ep", TaskEnvOptions(app_start_timeout_s=240))
    try:
        store = FolderStore(tmp_path / "snaps")
        before = store.take(opened.root, "before-step-1")
        original = (opened.root / "budget.xlsx").read_bytes()
        first = [p.pid for p in opened.apps]  # type: ignore[attr-defined]
        opened.collect()  # as the team does before touching the files: the application stops
        (opened.root / "budget.xlsx").write_bytes(b"not a workbook any more")
        (opened.root / "stray.txt").write_text("written by a step that is rolled back")
        store.restore(before, opened.root)
        opened.reopen()
        assert (opened.root / "budget.xlsx").read_bytes() == original and not (opened.root / "stray.txt").exists()
        again = [p for p in opened.apps]  # type: ignore[attr-defined]
        assert again and all(p.poll() is None for p in again[:1]) and again[0].pid not in first
        assert opened.env.observe().elements  # the relaunched window is on screen and readable
    finally:
        opened.close()
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "ep")], capture_output=True, text=True).stdout.split()
    assert not left, f"processes of the episode survived: {left}"
