"""VLC's configuration home is seeded with VLC's own default ``vlcrc`` (issue #40's file route):
written by libvlc itself, read by the task getter as defaults, edited by the media toolkit so the
getter sees the change, and never written over a task's own ``vlcrc``."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.envs.launchers import LAUNCHERS, seed_vlc
from agentlab.envs.testing.system import missing_system
from agentlab.judge.getters import FinalState
from agentlab.judge.app_getters import vlcrc_setting
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.toolkits import load_toolkit
from agentlab.toolkits.base import parse_calls
from agentlab.toolkits.runtime import program, results


def _need_libvlc() -> None:
    if ctypes.util.find_library("vlccore") is None:
        missing_system("libvlccore is not installed (apt-get install vlc)")


def test_the_seed_writes_vlcs_whole_default_file(tmp_path: Path) -> None:
    _need_libvlc()
    state = tmp_path / "vlc-config"
    seed_vlc(state, tmp_path)
    rc = state / "vlc" / "vlcrc"
    assert rc.is_file()
    text = rc.read_text(encoding="utf-8-sig")
    # VLC's own file: sections for its modules, each option commented out at its default
    assert "[core]" in text and "[qt]" in text and "#one-instance=0" in text and "#qt-dark-palette=0" in text
    st = FinalState(root=tmp_path)
    assert vlcrc_setting(st, "vlc-config/vlc/vlcrc", "one-instance", default="default") == "default"
    assert vlcrc_setting(st, "vlc-config/vlc/vlcrc", "qt.qt-dark-palette", default="default") == "default"


def test_a_tasks_own_vlcrc_is_kept(tmp_path: Path) -> None:
    state = tmp_path / "vlc-config"
    (state / "vlc").mkdir(parents=True)
    (state / "vlc" / "vlcrc").write_text("[core]\nloop=1\n", encoding="utf-8")
    seed_vlc(state, tmp_path)
    assert (state / "vlc" / "vlcrc").read_text(encoding="utf-8") == "[core]\nloop=1\n"


def test_the_launcher_seeds_vlcs_state_folder() -> None:
    assert LAUNCHERS["vlc"].seed is seed_vlc and LAUNCHERS["vlc"].state_dir == "vlc-config"


@pytest.mark.parametrize("task_id,call", [
    ("vlc-g-dark-palette", "set_option('vlc-config/vlc/vlcrc', 'qt', 'qt-dark-palette', 'true')"),
    ("vlc-g-one-instance", "set_option('vlc-config/vlc/vlcrc', 'core', 'one-instance', 'yes')"),
])
def test_the_media_toolkit_solves_a_gui_task_on_the_seeded_file(task_id: str, call: str, tmp_path: Path) -> None:
    """The development tasks' own start state (data/tasks), seeded as the desktop seeds it: one
    set_option call on VLC's default file is what the task's evaluator scores 1."""
    _need_libvlc()
    task = load_task(tasks_dir() / f"{task_id}.json")
    task.prepare(tmp_path)
    seed_vlc(tmp_path / "vlc-config", tmp_path)
    assert task.evaluate(tmp_path).score == 0.0
    kit = load_toolkit("media")
    parsed = parse_calls(call, kit, max_calls=1)
    out = subprocess.run([sys.executable, "-c", program("media", [c.as_json() for c in parsed])],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert [r["ok"] for r in results(out.stdout)] == [True], out.stdout + out.stderr
    result = task.evaluate(tmp_path)
    assert result.score == 1.0, result.explain()


def test_only_vlcs_own_settings_file_is_described(tmp_path: Path) -> None:
    """VLC's Qt window state (vlc-qt-interface.conf, INI sections too) is listed, never described:
    its keys in the prompt were copied into set_option calls; a vlcrc by name or by its sections is."""
    from agentlab.toolkits.media import _describe

    (tmp_path / "vlc-qt-interface.conf").write_text("[FullScreen]\nx11-display=1\n")
    (tmp_path / "player.conf").write_text("[core]\nloop=1\n")
    (tmp_path / "vlcrc").write_text("[FullScreen]\n")
    with pytest.raises(ValueError):
        _describe(tmp_path / "vlc-qt-interface.conf")
    assert "loop=1" in _describe(tmp_path / "player.conf")
    assert "none (every option at its default)" in _describe(tmp_path / "vlcrc")
