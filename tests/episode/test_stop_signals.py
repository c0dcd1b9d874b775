"""SIGTERM and Ctrl-C stop ``agentlab exec`` (issue #37, case 4): no new task starts, the task in
flight leaves no row (a plain ``--resume`` carries it out), one line on stderr, exit 143 / 130, and
no process of the run is left -- with ``--sandbox none``, in single and manager mode.

Real processes throughout: ``agentlab exec`` is a subprocess, the model a loopback endpoint whose
first answer is a program that sleeps and leaves a child in a session of its own with an emptied
environment; the run's processes are listed (psutil) before the signal and looked for after it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from agentlab.fileio import read_jsonl
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir

from .test_executed_plans import REPORT, TOTAL, two_step_task

IDS = ["os-error-lines", "general-top-words"]


def _sleeper(tag: str) -> str:
    """A program that sleeps, with a child that left its session and emptied its environment."""
    code = (f"import subprocess, time\n"
            f"subprocess.Popen('env -i setsid sleep {tag} </dev/null >/dev/null 2>&1', shell=True)\n"
            f"time.sleep({tag})\n")
    return f"Running it.\n```python\n{code}```\n"


def _solve(task: ExecTask) -> str:
    sol = task.reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


class Endpoint:
    """The loopback model: while ``sleep`` is set every answer is ``sleeper`` (default: a program
    that sleeps, :func:`_sleeper`), then each task's solution."""

    def __init__(self, chat_server, tasks: list[ExecTask], tag: str, sleeper: str | None = None) -> None:  # type: ignore[no-untyped-def]
        self.sleep, self.tag = True, tag
        answers = {t.instruction: _solve(t) for t in tasks if t.reference_solution}

        def reply(body: dict, k: int) -> str:
            text = "\n".join(str(m.get("content")) for m in body["messages"])
            if self.sleep:
                return sleeper or _sleeper(self.tag)
            if "Sum the amounts" in text:  # the gold plan's steps
                return f"```python\n{REPORT if 'Earlier steps' in text else TOTAL}\n```\nDONE"
            return next((a for q, a in answers.items() if q in text), "I cannot tell which task this is.")

        self.url = chat_server(reply)


def _tagged(tag: str) -> list[int]:
    """pids of live processes whose command line holds ``tag``."""
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if p.pid != os.getpid() and tag in " ".join(p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
            out.append(p.pid)
    return out


def _survivors(procs: list[psutil.Process], tag: str, timeout_s: float = 5.0) -> list[str]:
    deadline = time.monotonic() + timeout_s
    while True:
        left = []
        for p in procs:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{p.pid} {' '.join(p.cmdline())[:120]}")
            except psutil.NoSuchProcess:
                pass
        left += [f"{pid} (tagged)" for pid in _tagged(tag) if all(str(pid) != s.split()[0] for s in left)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def start_exec(tmp_path: Path, url: str, tasks: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``agentlab exec`` in a session of its own (so a Ctrl-C can go to its whole group, as a terminal's does)."""
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: loopback\n")
    return subprocess.Popen([sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(tasks), "--out", str(out),
                             "--llm-config", str(cfg), "--sandbox", "none", "--max-steps", "2", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**(env or os.environ), "OPENAI_API_KEY": "loopback"})  # no warning about the key


def wait_for_programs(proc: subprocess.Popen, tag: str, n: int = 1, timeout_s: float = 90) -> list[psutil.Process]:
    """Once ``n`` sleepers run: every process the run has (its descendants)."""
    deadline = time.monotonic() + timeout_s
    while len(_tagged(tag)) < n:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the programs never started: {proc.communicate()[1][-2000:]}")
        time.sleep(0.1)
    return psutil.Process(proc.pid).children(recursive=True)


def send(proc: subprocess.Popen, sig: int) -> tuple[str, str]:
    """SIGTERM to the process (as ``kill`` or a service manager sends it); SIGINT to its whole
    group, as a terminal's Ctrl-C does."""
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    try:
        return proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # a stop that did not end: ask the CLI for every thread's stack (faulthandler on SIGUSR1)
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"the run did not stop within 60 s; its stacks:\n{err[-6000:]}") from None
    finally:
        proc.kill()


def _cleanup(tag: str) -> None:
    for pid in _tagged(tag):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def tag() -> str:  # type: ignore[misc]
    t = f"37{uuid.uuid4().int % 10**6}.5"
    yield t
    _cleanup(t)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "ctrl-c"])
def test_a_stop_signal_ends_exec_and_resume_runs_the_cut_task(tmp_path, chat_server, tag, sig) -> None:  # type: ignore[no-untyped-def]
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in IDS]
    folder = tmp_path / "tasks"
    folder.mkdir()
    for t in tasks:
        (folder / f"{t.id}.json").write_text((tasks_dir() / f"{t.id}.json").read_text())
    endpoint, out = Endpoint(chat_server, tasks, tag), tmp_path / "run"
    proc = start_exec(tmp_path, endpoint.url, folder, out, "--agent", "CoderAgent")
    procs = wait_for_programs(proc, tag)
    first = next(t.id for t in sorted(tasks, key=lambda t: t.id))  # the task in flight
    _, err = send(proc, sig)

    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), err[-2000:]
    lines = err.strip().splitlines()
    what = "terminated (SIGTERM)" if sig == signal.SIGTERM else "interrupted (Ctrl-C)"
    assert len(lines) == 1 and lines[0].startswith(f"error: {what}: stopped after cleaning up"), err[-2000:]
    assert "--resume" in lines[0]
    assert not _survivors(procs, tag), "a process of the run outlived it"
    rows = read_jsonl(out / "results.jsonl") if (out / "results.jsonl").exists() else []
    assert rows == []  # the task in flight left no row (not a harness error that --resume would skip)
    started = sorted(p.name for p in (out / "episodes").iterdir())
    assert started == [first], "a new task started after the signal"

    endpoint.sleep = False  # a plain --resume carries the cut task out, then the rest
    resumed = start_exec(tmp_path, endpoint.url, folder, out, "--agent", "CoderAgent", "--resume")
    res_out, res_err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, res_err[-2000:]
    rows = {r["id"]: r for r in read_jsonl(out / "results.jsonl")}
    assert sorted(rows) == sorted(IDS) and all(r["success"] and r["error"] is None for r in rows.values()), rows
    assert "(2 run, 0 kept from before)" in res_out


def test_sigterm_in_manager_mode_stops_the_plan(tmp_path, chat_server, tag) -> None:  # type: ignore[no-untyped-def]
    task = two_step_task()
    task_file = tmp_path / "multi-sales-report.json"
    task_file.write_text(json.dumps(task.model_dump(mode="json", exclude_none=True)))
    endpoint, out = Endpoint(chat_server, [task], tag), tmp_path / "run"
    # the specialists write programs (-O mode=code), as a toolkit agent would load a sentence encoder first
    proc = start_exec(tmp_path, endpoint.url, task_file, out, "--mode", "manager", "--router", "gt", "-O", "mode=code")
    procs = wait_for_programs(proc, tag)
    t0 = time.monotonic()
    _, err = send(proc, signal.SIGTERM)
    assert proc.returncode == 143 and time.monotonic() - t0 < 20, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("error: terminated (SIGTERM): stopped after cleaning up"), err[-2000:]
    assert not _survivors(procs, tag)
    assert not (out / "results.jsonl").exists() or read_jsonl(out / "results.jsonl") == []
    assert len(endpoint_requests := chat_server.requests) == 1, endpoint_requests  # step 2 never asked the model


def test_an_old_harness_error_row_of_a_sigterm_is_run_again_on_resume(tmp_path, chat_server) -> None:  # type: ignore[no-untyped-def]
    """Run folders written before the fix hold a harness-error row for the task SIGTERM cut off: a
    plain --resume runs that task again instead of skipping it."""
    from .test_episode import _cli

    task = load_task(tasks_dir() / "os-error-lines.json")
    endpoint = Endpoint(chat_server, [task], "0")
    endpoint.sleep = False
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {endpoint.url}\n  model: loopback\n")
    out = tmp_path / "run"
    args = ["exec", "--tasks", str(tasks_dir() / "os-error-lines.json"), "--out", str(out), "--llm-config", str(cfg),
            "--agent", "CoderAgent", "--sandbox", "none"]
    assert _cli(args).exit_code == 0
    (row,) = read_jsonl(out / "results.jsonl")
    row.update(success=False, error="terminated (SIGTERM); finished results were kept and the run can be resumed")
    (out / "results.jsonl").write_text(json.dumps(row) + "\n")
    res = _cli([*args, "--resume"])
    assert res.exit_code == 0, res.output
    (again,) = read_jsonl(out / "results.jsonl")
    assert again["success"] and again["error"] is None
