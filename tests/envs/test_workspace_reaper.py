"""No workspace program outlives its run (issue #23), with or without bubblewrap: not one that
empties its environment and starts its own session (``env -i setsid``), not after a timeout,
and not when the runner itself is killed (SIGKILL, SIGTERM, Ctrl-C)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from agentlab.envs.workspace import Workspace, WorkspaceConfig, bwrap_available

SANDBOXES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap unusable here"))]


def _alive(tag: str) -> list[int]:
    """pids of processes whose command line holds ``tag``."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if tag in cmd and "pytest" not in cmd and "textwrap" not in cmd:
                out.append(int(name))
    return out


def _wait_gone(tag: str, timeout_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while (left := _alive(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _escaper(seconds: str) -> str:
    """A bash program that leaves a process with an emptied environment in a new session."""
    return f"env -i setsid sleep {seconds} </dev/null >/dev/null 2>&1 &\necho started"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_escaped_child_ends_with_its_program(tmp_path: Path, sandbox: str) -> None:
    tag = f"31{uuid.uuid4().int % 10**6}.5"
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox=sandbox)) as w:
        r = w.run_bash(_escaper(tag))
    assert r.ok and "started" in r.stdout, r.stderr
    assert not _wait_gone(tag), "a setsid child with an emptied environment outlived its program"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_escaped_child_ends_at_the_timeout(tmp_path: Path, sandbox: str) -> None:
    tag = f"32{uuid.uuid4().int % 10**6}.5"
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox=sandbox, timeout_s=1)) as w:
        r = w.run_bash(_escaper(tag) + "\nsleep 60")
    assert r.timed_out
    assert not _wait_gone(tag), "a setsid child outlived the timeout"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_killing_the_runner_ends_the_program(tmp_path: Path, sandbox: str, sig: int) -> None:
    tag = f"33{uuid.uuid4().int % 10**6}.5"
    runner = textwrap.dedent(f"""
        from agentlab.envs.workspace import Workspace, WorkspaceConfig
        with Workspace({str(tmp_path / 'ws')!r}, WorkspaceConfig(sandbox={sandbox!r}, timeout_s=120)) as w:
            w.run_bash({_escaper(tag) + chr(10) + 'sleep 100'!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", runner])
    try:
        deadline = time.monotonic() + 30
        while not _alive(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(tag), "the program never started"
        proc.send_signal(sig)
        proc.wait(timeout=10)
        assert not _wait_gone(tag), f"the program outlived its runner ({signal.Signals(sig).name})"
    finally:
        proc.kill()
        for pid in _alive(tag):
            os.kill(pid, signal.SIGKILL)


# -- a program that turns on its supervisor (issue #37, case 7): without bubblewrap the supervisor is
# a process of the same user, which the program can kill or stop; the runner ends the tree itself
def _turns_on_supervisor(tag: str, how: str) -> str:
    return f"env -i setsid sleep {tag} </dev/null >/dev/null 2>&1 &\nsleep 0.2\n{how}"


def test_a_program_that_kills_its_supervisor_leaves_nothing(tmp_path: Path) -> None:
    tag = f"34{uuid.uuid4().int % 10**6}.5"
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="none", timeout_s=20)) as w:
        t0 = time.monotonic()
        r = w.run_bash(_turns_on_supervisor(tag, f"kill -9 $PPID\nsleep {tag}"))
    assert time.monotonic() - t0 < 10 and not r.timed_out  # the program died with its supervisor
    assert not _wait_gone(tag, 2), "a setsid child outlived the supervisor its program killed"


def test_a_program_that_stops_its_supervisor_ends_on_time_and_leaves_nothing(tmp_path: Path) -> None:
    tag = f"35{uuid.uuid4().int % 10**6}.5"
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="none", timeout_s=20)) as w:
        t0 = time.monotonic()
        r = w.run_bash(_turns_on_supervisor(tag, "kill -STOP $PPID\necho stopped it"))
        took = time.monotonic() - t0
        assert r.ok and "stopped it" in r.stdout and took < 10, (r, took)  # continued: not a wait for the limit
        assert not _wait_gone(tag, 2), "a setsid child outlived the program that stopped its supervisor"
        # stopping it again and again: the time limit still ends the run, and everything in it
        t0 = time.monotonic()
        r = w.run_bash(_turns_on_supervisor(tag, "while true; do kill -STOP $PPID; sleep 0.02; done"), timeout_s=2)
        assert r.timed_out and time.monotonic() - t0 < 10
    assert not _wait_gone(tag, 2), "a setsid child outlived the timeout of a program that kept its supervisor stopped"


def test_a_runner_stopping_ends_a_program_that_keeps_its_supervisor_stopped(tmp_path: Path) -> None:
    """SIGTERM raises in the runner while it waits for the program (as in ``agentlab exec``): on its
    way out it ends the program's tree itself; the supervisor, stopped, could not take its own signal."""
    tag = f"36{uuid.uuid4().int % 10**6}.5"
    program = _turns_on_supervisor(tag, "while true; do kill -STOP $PPID; sleep 0.02; done")
    runner = textwrap.dedent(f"""
        import signal, sys
        from agentlab.envs.workspace import Workspace, WorkspaceConfig
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # raises where the runner waits
        with Workspace({str(tmp_path / 'ws')!r}, WorkspaceConfig(sandbox="none", timeout_s=120)) as w:
            w.run_bash({program!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", runner])
    try:
        deadline = time.monotonic() + 30
        while not _alive(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(tag), "the program never started"
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 143
        assert not _wait_gone(tag), "the program's child outlived its runner"
    finally:
        proc.kill()
        for pid in _alive(tag):
            os.kill(pid, signal.SIGKILL)
