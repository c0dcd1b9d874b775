"""One writer per run folder (issue #37, case 5): a second ``agentlab exec`` on a folder another
process is writing refuses in one line naming that process (pid, host, since when) and touches
nothing; a lock left by a run that died is taken over with a warning naming it. Real processes:
the holder is another Python process (or a real ``agentlab exec``)."""

from __future__ import annotations

import json
import logging
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentlab.errors import DataError
from agentlab.fileio import read_jsonl
from agentlab.runlock import LOCK_FILE, RunLock, check_unlocked
from agentlab.tasks.spec import load_task, tasks_dir

from .test_stop_signals import Endpoint, start_exec, wait_for_programs


def _hold(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s lock until killed."""
    code = ("import sys, time\nfrom agentlab.runlock import RunLock\n"
            f"with RunLock({str(folder)!r}):\n    print('held', flush=True)\n    time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_folder_is_refused_naming_its_owner_and_a_dead_owners_lock_is_taken_over(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    holder = _hold(tmp_path)
    try:
        with pytest.raises(DataError) as refused:
            with RunLock(tmp_path):
                pass
        msg = str(refused.value)
        assert f"in use by pid {holder.pid} on {socket.gethostname()} since 20" in msg and "choose another --out" in msg
        with pytest.raises(DataError, match=f"pid {holder.pid}"):
            check_unlocked(tmp_path)  # the early check (before anything slow) says the same
    finally:
        holder.send_signal(signal.SIGKILL)  # dies holding it: no chance to release anything
        holder.wait()
    owner = json.loads((tmp_path / LOCK_FILE).read_text())
    assert owner["pid"] == holder.pid  # its text is still there, its flock went with it
    check_unlocked(tmp_path)
    with caplog.at_level(logging.WARNING, logger="agentlab.runlock"), RunLock(tmp_path):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] != holder.pid  # ours now
        with RunLock(tmp_path):  # re-entrant within this process
            check_unlocked(tmp_path)
    assert f"taking over the lock left by pid {holder.pid}" in caplog.text and "that process is gone" in caplog.text
    assert (tmp_path / LOCK_FILE).read_text() == ""  # released: emptied, so the next run sees no dead owner


def test_a_planted_link_is_not_locked_through(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).symlink_to(target)
    with pytest.raises(DataError, match="cannot lock the run folder"):
        with RunLock(run):
            pass
    assert target.read_text() == "precious"


def test_a_second_exec_on_a_running_folder_refuses_in_one_line(tmp_path, chat_server) -> None:  # type: ignore[no-untyped-def]
    tag = f"37{time.monotonic_ns() % 10**6}.5"
    task = load_task(tasks_dir() / "os-error-lines.json")
    endpoint, out = Endpoint(chat_server, [task], tag), tmp_path / "run"
    first = start_exec(tmp_path, endpoint.url, tasks_dir() / "os-error-lines.json", out, "--agent", "CoderAgent")
    try:
        wait_for_programs(first, tag)
        for extra in ([], ["--resume"]):  # with or without --resume: the folder is in use
            second = subprocess.run([sys.executable, "-m", "agentlab.cli", "exec", "--tasks",
                                     str(tasks_dir() / "os-error-lines.json"), "--out", str(out), "--llm-config",
                                     str(tmp_path / "llm.yaml"), "--agent", "CoderAgent", "--sandbox", "none", *extra],
                                    capture_output=True, text=True, timeout=120)
            assert second.returncode == 1, second.stderr
            assert second.stderr.strip().splitlines() == [
                f"error: {out.resolve()}: this run folder is in use by pid {first.pid} on {socket.gethostname()} since "
                + json.loads((out / LOCK_FILE).read_text())["since"] + " (agentlab exec); wait for that run "
                "to end, or choose another --out"], second.stderr
        assert first.poll() is None, "the second exec disturbed the first"
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert first.returncode == 143
    assert not (out / "results.jsonl").exists() or read_jsonl(out / "results.jsonl") == []
    assert (out / LOCK_FILE).read_text() == ""  # a run stopped by SIGTERM releases its folder


def test_the_lock_of_a_new_folder_is_not_mistaken_for_an_older_run(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    """A run taking its lock first, then resuming into its still empty folder, records its manifest
    without the "a run from before manifests" warning (the lock file is its own)."""
    from agentlab.record.manifest import build_manifest, open_run

    out = tmp_path / "run"
    with RunLock(out), caplog.at_level(logging.WARNING):
        open_run(out, build_manifest("exec", models={}, seeds=[0], options={}), resume=True)
    assert not [r for r in caplog.records if "no manifest" in r.getMessage()]
