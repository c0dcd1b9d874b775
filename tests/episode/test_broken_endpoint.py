"""``agentlab exec`` against a broken endpoint (issue #37, case 6): a malformed reply is asked again,
then becomes that task's harness-error row naming the endpoint and its model, and the next task
runs; a trickled reply is cut at the task's ``--time-limit`` (the row says ``time_limit``). Real
loopback sockets sending the exact bad bytes, the real ``openai`` client, real workspaces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.fileio import read_jsonl
from agentlab.llm.testing import RawReplyServer, Trickled, completion_body
from agentlab.tasks.spec import load_task, tasks_dir

TASKS = ("csv-sales-summary", "os-error-lines")  # run in this order (file names sort so)
BAD = {
    "truncated JSON": b'{"id": "c1", "choices": [{"index": 0, "message": {"role": "assis',
    "no message": b'{"choices":[{}]}',
    "null": b"null",
    "empty 200": b"",
    "not UTF-8": b'{"choices":[{"message":{"role":"assistant","content":"\xff\xfe"}}]}',
}


def _solution(task_id: str) -> bytes:
    sol = load_task(tasks_dir() / f"{task_id}.json").reference_solution
    assert sol is not None
    return completion_body(f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE")


def _setup(tmp_path: Path, url: str, **llm: object) -> tuple[Path, Path]:
    folder = tmp_path / "tasks"
    folder.mkdir()
    for task_id in TASKS:
        (folder / f"{task_id}.json").write_bytes((tasks_dir() / f"{task_id}.json").read_bytes())
    cfg = tmp_path / "llm.yaml"
    fields = {"kind": "openai", "base_url": url, "model": "m-7b", "retry_backoff_s": 0.01, **llm}
    cfg.write_text("llm:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in fields.items()))
    return folder, cfg


def _exec(args: list[str]):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    return CliRunner().invoke(app, ["exec", *args])


@pytest.mark.parametrize("name", list(BAD))
def test_a_malformed_reply_is_retried_then_a_harness_error_row_and_the_next_task_runs(tmp_path, name) -> None:
    good = _solution(TASKS[1])
    with RawReplyServer(lambda req, k: BAD[name] if k < 3 else good) as srv:
        tasks, cfg = _setup(tmp_path, srv.url, retries=2)
        res = _exec(["--tasks", str(tasks), "--out", str(tmp_path / "run"), "--llm-config", str(cfg), "--max-steps", "3"])
        assert len(srv.requests) == 4  # the first task's call and its two retries, then the second task's one call
    assert res.exit_code == 0 and res.exception is None, res.output
    assert "Traceback" not in res.output
    assert res.output.strip().splitlines()[-1] == "execution_acc=0.5000 n=2 harness_errors=1"
    first, second = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert (first["id"], first["status"], first["success"]) == (TASKS[0], "error", False)
    assert f"{srv.url} (model 'm-7b')" in first["error"] and "malformed reply 3 time(s)" in first["error"]
    assert (second["id"], second["success"], second["error"]) == (TASKS[1], True, None)


def test_a_trickled_reply_is_cut_at_the_time_limit_and_the_next_task_runs(tmp_path) -> None:
    good = _solution(TASKS[1])
    with RawReplyServer(lambda req, k: Trickled(completion_body("late"), 0.2) if k == 0 else good) as srv:
        # llm.timeout_s is far away: only the task's time limit can cut the first call
        tasks, cfg = _setup(tmp_path, srv.url, timeout_s=120)
        res = _exec(["--tasks", str(tasks), "--out", str(tmp_path / "run"), "--llm-config", str(cfg), "--max-steps", "3",
                     "--time-limit", "2"])
        assert len(srv.requests) == 2
    assert res.exit_code == 0 and res.exception is None, res.output
    first, second = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert (first["status"], first["error"], first["success"]) == ("time_limit", None, False)
    assert "during a model call to" in first["agent_error"] and first["llm_calls"] == 1
    assert first["seconds"] < 4.0, first["seconds"]
    assert second["success"] is True and second["error"] is None


@pytest.mark.slow
def test_the_cli_process_keeps_going_with_one_line_per_broken_reply(tmp_path) -> None:
    """The real command in its own process: no traceback on stderr, exit 0, both tasks have rows."""
    good = _solution(TASKS[1])
    with RawReplyServer(lambda req, k: b"\xff\xfe not json" if k < 2 else good) as srv:
        tasks, cfg = _setup(tmp_path, srv.url, retries=1)
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), OMP_NUM_THREADS="1")
        env.pop("OPENAI_API_KEY", None)
        proc = subprocess.run([sys.executable, "-c", "from agentlab.cli import main; main()", "exec", "--tasks", str(tasks),
                               "--out", str(tmp_path / "run"), "--llm-config", str(cfg), "--max-steps", "3"],
                              capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "an input file" not in proc.stderr
    assert "not UTF-8" in proc.stderr  # the warnings say what came back
    rows = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert [r["id"] for r in rows] == list(TASKS) and rows[0]["error"] and rows[1]["success"]
