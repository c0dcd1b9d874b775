"""A full disk (issue #37, case 10): one line naming the file and what was kept, never a
traceback, and the rows written before stay whole. The real thing where it is cheap: a tiny
tmpfs made by bubblewrap (``--size``), on which ``agentlab exec`` runs until the disk is full."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.errors import DiskFullError
from agentlab.fileio import append_jsonl, atomic_write_json, read_jsonl
from agentlab.tasks.spec import tasks_dir

ROOT = Path(__file__).resolve().parents[2]


def _full_after(monkeypatch: pytest.MonkeyPatch, ok_calls: int, code: int = errno.ENOSPC) -> None:
    """``os.fsync`` fails as a full disk does after ``ok_calls`` calls (the data was written)."""
    real, calls = os.fsync, [0]

    def fsync(fd: int) -> None:
        calls[0] += 1
        if calls[0] > ok_calls:
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_an_append_on_a_full_disk_keeps_the_earlier_rows_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = tmp_path / "results.jsonl"
    append_jsonl(rows, {"id": "a", "score": 1.0})
    append_jsonl(rows, {"id": "b", "score": 0.0})
    before = rows.read_bytes()
    _full_after(monkeypatch, 0)
    with pytest.raises(DiskFullError) as exc:
        append_jsonl(rows, {"id": "c", "score": 0.5, "pad": "x" * 10_000})
    assert exc.value.where == str(rows) and "no space left on the device" in str(exc.value)
    assert "earlier records were kept" in str(exc.value) and "\n" not in str(exc.value)
    assert rows.read_bytes() == before  # the written-but-not-synced line was cut back
    monkeypatch.undo()
    append_jsonl(rows, {"id": "c", "score": 0.5})  # space again: the file goes on as if nothing happened
    assert [r["id"] for r in read_jsonl(rows, tolerate_torn_tail=False)] == ["a", "b", "c"]


def test_an_atomic_write_on_a_full_quota_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "manifest.json"
    atomic_write_json(target, {"version": 1})
    _full_after(monkeypatch, 0, errno.EDQUOT)
    with pytest.raises(DiskFullError, match="disk quota is exceeded; the file's previous version"):
        atomic_write_json(target, {"version": 2})
    assert json.loads(target.read_text()) == {"version": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]  # no temporary file left


def test_other_write_errors_are_not_called_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _full_after(monkeypatch, 0, errno.EIO)
    with pytest.raises(OSError) as exc:
        append_jsonl(tmp_path / "r.jsonl", {"id": "a"})
    assert not isinstance(exc.value, DiskFullError) and exc.value.errno == errno.EIO


def _bwrap_tmpfs() -> str | None:
    exe = shutil.which("bwrap")
    if exe is None:
        return None
    probe = subprocess.run([exe, "--dev-bind", "/", "/", "--size", "65536", "--tmpfs", "/mnt", "--", "true"],
                           capture_output=True)
    return exe if probe.returncode == 0 else None


@pytest.mark.timeout(300)
def test_exec_on_a_disk_that_fills_up_is_one_line_and_keeps_its_rows(tmp_path: Path) -> None:
    """``agentlab exec`` (the real console entry point) writes a phone suite's run folder onto a
    250 kB tmpfs: the disk fills after a few episodes. Before, a Python traceback."""
    bwrap = _bwrap_tmpfs()
    if bwrap is None:
        pytest.skip("needs bubblewrap with --size (a tiny tmpfs) here")
    from agentlab.llm.testing import LoopbackChatServer

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for task in sorted(tasks_dir().glob("clock-*.json")):
        shutil.copy(task, tasks)
    server = LoopbackChatServer(lambda body, k: "Observation: x\nThought: nothing to do\nAction: FINISH\nSummary: done")
    try:
        cfg = tmp_path / "llm.yaml"
        cfg.write_text(f"llm:\n  kind: openai\n  base_url: {server.url}\n  model: m\n")
        inside = 'cd "$HOME_DIR"; "$@"; echo "@@rc $?"; cat /full/run/results.jsonl 2>/dev/null'
        cmd = [bwrap, "--dev-bind", "/", "/", "--size", "250000", "--tmpfs", "/full", "--", "sh", "-c", inside, "sh",
               sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(tasks), "--out", "/full/run",
               "--llm-config", str(cfg), "--device", "fake"]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME_DIR": str(tmp_path), "OPENAI_API_KEY": "loopback"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
    finally:
        server.close()
    out, _, results = proc.stdout.partition("@@rc ")
    code, _, rows_text = results.partition("\n")
    assert code.strip() == "1", (proc.stdout, proc.stderr)
    # off a terminal every finished task has its progress line (agentlab.progress); the error is one line
    err = "\n".join(line for line in proc.stderr.strip().splitlines() if not line.startswith("INFO agentlab.progress:"))
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("error: /full/run/") and "cannot write: no space left on the device" in err, err
    assert "--resume" in err
    # the rows written before the disk filled are whole: every line a complete row, none torn
    assert rows_text.endswith("\n") or rows_text == ""
    rows = [json.loads(line) for line in rows_text.splitlines()]
    assert rows and len({r["id"] for r in rows}) == len(rows) and len(rows) < 7
    assert all(r["error"] is None for r in rows)  # the full disk is never billed to a task as its row


def test_a_full_disk_outside_fileio_is_still_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's last line of defence: a write that does not go through agentlab.fileio."""
    from agentlab.cli import main

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "view" / "index.html"))

    monkeypatch.setattr("agentlab.viz.site.write_site", full)
    with pytest.raises(SystemExit) as exc:
        main(["view", str(tmp_path)])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"error: {tmp_path / 'view' / 'index.html'}: cannot write: No space left on device")
