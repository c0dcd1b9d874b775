"""``check_task_gui`` starts again when an application crashes on its own, and only then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentlab.envs import gui_replay
from agentlab.envs.gui_replay import GuiCheck, _crashed, check_task_gui


def _dead(code: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", code])
    proc.wait(timeout=30)
    return proc


def test_a_fault_signal_is_a_crash_and_a_normal_exit_or_a_stop_is_not() -> None:
    segv = _dead("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    term = _dead("import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    exited = _dead("raise SystemExit(3)")
    assert _crashed([exited, segv], ["calc", "chromium"]) == "chromium: SIGSEGV"
    assert _crashed([exited, term], ["calc", "chromium"]) is None


class _Script:
    """``_check_once`` replaced by a list of outcomes, recording the folders it was given."""

    def __init__(self, outcomes: list[tuple[GuiCheck, str | None]]) -> None:
        self.outcomes = outcomes
        self.folders: list[Path] = []

    def __call__(self, task: object, folder: Path, options: object, on_step: object) -> tuple[GuiCheck, str | None]:
        self.folders.append(folder)
        return self.outcomes.pop(0)


def _failed(error: str) -> GuiCheck:
    return GuiCheck("t", error=error)


def test_a_crash_starts_the_check_again_in_a_fresh_folder_and_is_kept(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    script = _Script([(_failed("the application chromium was killed"), "chromium: SIGSEGV"),
                      (GuiCheck("t", solved=1.0, steps=3), None)])
    monkeypatch.setattr(gui_replay, "_check_once", script)
    check = check_task_gui(SimpleNamespace(id="t"), tmp_path / "episode")  # type: ignore[arg-type]
    assert check.ok and check.crashes == ["chromium: SIGSEGV"]
    assert script.folders == [tmp_path / "episode", tmp_path / "episode-after-crash-1"]
    assert "started again after 1 application crash(es): chromium: SIGSEGV" in check.line()


def test_crashes_past_the_budget_fail_with_every_crash_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = _Script([(_failed("killed"), "chromium: SIGSEGV"), (_failed("killed again"), "chromium: SIGBUS")])
    monkeypatch.setattr(gui_replay, "_check_once", script)
    check = check_task_gui(SimpleNamespace(id="t"), tmp_path / "episode", crash_retries=1)  # type: ignore[arg-type]
    assert not check.ok and check.error == "killed again"
    assert check.crashes == ["chromium: SIGSEGV", "chromium: SIGBUS"]


def test_a_failure_that_is_not_a_crash_is_not_retried(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = _Script([(_failed("step 2: no button 'Save'"), None), (GuiCheck("t", solved=1.0), None)])
    monkeypatch.setattr(gui_replay, "_check_once", script)
    check = check_task_gui(SimpleNamespace(id="t"), tmp_path / "episode")  # type: ignore[arg-type]
    assert not check.ok and check.crashes == [] and len(script.folders) == 1
