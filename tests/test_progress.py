"""Progress off a terminal (issue #43): ``agentlab exec`` with stderr going to a pipe logs one line per
finished task (id, outcome, seconds, running ExecutionAcc, tasks left, time left), self-instruct one
per round; on a terminal the tqdm bar stays and no line is logged. The ETA's arithmetic is pinned
on its own."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.progress import Progress, Tally, duration, eta_seconds, row_outcome
from agentlab.tasks.spec import load_task, tasks_dir

LINE = re.compile(r"INFO agentlab\.progress: exec (?P<k>\d+)/(?P<n>\d+): (?P<id>\S+) (?P<outcome>success|fail|harness error)"
                  r".* in (?P<s>[\d.]+)s \| ExecutionAcc (?P<acc>[\d.]+) \((?P<ok>\d+)/(?P<judged>\d+)\) "
                  r"\| (?P<left>\d+) left, ETA (?P<eta>\S+)$")


def test_eta_is_the_wall_time_per_finished_item_times_the_items_left() -> None:
    assert eta_seconds(10.0, 2, 6) == pytest.approx(20.0)  # 5 s per item, 4 left
    assert eta_seconds(10.0, 0, 6) is None  # nothing finished: no estimate
    assert eta_seconds(10.0, 6, 6) == 0.0 and eta_seconds(3.0, 7, 6) == 0.0  # nothing left
    assert eta_seconds(-1.0, 1, 3) == 0.0  # a clock that went back never gives a negative time
    # two workers finishing side by side: the wall time per item halves, and so does the ETA
    assert eta_seconds(10.0, 4, 8) == pytest.approx(10.0)
    assert [duration(s) for s in (None, 3.44, 59.94, 125, 3725)] == ["?", "3.4s", "59.9s", "2m05s", "1h02m"]


@given(st.floats(0, 1e6), st.integers(1, 1000), st.integers(0, 1000))
def test_eta_grows_with_items_left_and_time_per_item(elapsed: float, done: int, more: int) -> None:
    eta = eta_seconds(elapsed, done, done + more)
    assert eta is not None and eta >= 0
    assert eta == pytest.approx(elapsed / done * more)
    assert (eta_seconds(elapsed, done, done + more + 1) or 0) >= eta


def test_lines_off_a_terminal_and_a_bar_on_one(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    caplog.set_level(logging.INFO, logger="agentlab.progress")
    with Progress(3, "exec", "episode", stream=io.StringIO(), tally=Tally(1, 1), clock=lambda: now[0]) as p:
        now[0] = 104.0
        line = p.done("a", "success", 3.96, success=True)
        now[0] = 106.0
        p.done("b", "fail", 2.0, success=False)
    assert line == "exec 1/3: a success in 4.0s | ExecutionAcc 1.000 (2/2) | 2 left, ETA 8.0s"
    assert [r.getMessage() for r in caplog.records][1] == "exec 2/3: b fail in 2.0s | ExecutionAcc 0.667 (2/3) | 1 left, ETA 3.0s"

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    caplog.clear()
    tty = Tty()
    with Progress(2, "exec", "episode", stream=tty) as p:
        assert p.done("a", "success", 1.0, success=True) is None
    assert not caplog.records and "2/2" not in tty.getvalue() and "1/2" in tty.getvalue()  # tqdm's bar, no line


def test_nothing_when_disabled_or_in_a_notebook_kernel(caplog: pytest.LogCaptureFixture, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger="agentlab.progress")
    assert Progress(2, "x", enabled=False, stream=io.StringIO()).done("a") is None
    monkeypatch.setenv("TQDM_DISABLE", "1")  # what the notebook runner gives its kernels
    assert Progress(2, "x", stream=io.StringIO()).done("a") is None
    assert not caplog.records


def test_a_rows_outcome() -> None:
    assert row_outcome({"success": True, "status": "done"}) == ("success", True)
    assert row_outcome({"success": False, "status": "done"}) == ("fail", False)
    assert row_outcome({"success": False, "status": "time_limit"}) == ("fail (time_limit)", False)
    assert row_outcome({"success": False, "error": "harness: worker died"}) == ("harness error", False)


IDS = ["csv-sales-summary", "os-error-lines", "general-top-words"]


def test_exec_to_a_pipe_logs_one_line_per_task(tmp_path: Path, chat_server) -> None:  # type: ignore[no-untyped-def]
    """The real CLI in a subprocess, stderr a pipe (not a terminal), no --verbose: three tasks, two
    answered with their reference program, one with a wrong one."""
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in IDS]
    answers = {}
    for t in tasks:
        sol = t.reference_solution
        assert sol is not None
        code = "echo wrong" if t.id == "os-error-lines" else sol.code.rstrip()
        answers[t.instruction] = f"Solving it.\n```{'bash' if t.id == 'os-error-lines' else sol.language}\n{code}\n```\nDONE"

    def reply(body: dict, k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "FAIL")

    url = chat_server(reply)
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: loopback\n")
    folder = tmp_path / "tasks"
    folder.mkdir()
    for t in tasks:
        (folder / f"{t.id}.json").write_text((tasks_dir() / f"{t.id}.json").read_text())
    proc = subprocess.run([sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(folder), "--out", str(tmp_path / "run"),
                           "--llm-config", str(cfg), "--max-steps", "2", "--agent", "CoderAgent"],
                          capture_output=True, stdin=subprocess.DEVNULL, text=True, timeout=300,  # stderr: a pipe
                          env={**os.environ, "OPENAI_API_KEY": "loopback"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [m for m in (LINE.match(ln) for ln in proc.stderr.splitlines()) if m]
    assert len(lines) == 3, proc.stderr[-3000:]
    assert sorted(m["id"] for m in lines) == sorted(IDS)
    assert [int(m["k"]) for m in lines] == [1, 2, 3] and {m["n"] for m in lines} == {"3"}
    assert [int(m["left"]) for m in lines] == [2, 1, 0] and lines[-1]["eta"] == "0.0s"
    assert {m["id"]: m["outcome"] for m in lines} == {"csv-sales-summary": "success", "os-error-lines": "fail",
                                                      "general-top-words": "success"}
    # seconds are printed to 0.1 s: a loopback episode can take under 0.05 s and print 0.0s
    assert all(float(m["s"]) >= 0 and m["eta"] != "?" for m in lines), [m.group(0) for m in lines]
    ok = [int(m["ok"]) for m in lines]
    assert [int(m["judged"]) for m in lines] == [1, 2, 3] and ok[-1] == 2
    assert [float(m["acc"]) for m in lines] == [pytest.approx(o / j, abs=5e-4) for o, j in zip(ok, [1, 2, 3], strict=True)]
    assert "execution_acc=0.6667 n=3" in proc.stdout + proc.stderr


def test_selfinstruct_logs_one_line_per_round(tmp_path: Path, pool, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    """Serial self-instruct, two agents x two rounds, with a loopback generator: four round lines,
    each with its agent's round, what it kept of what it generated, seconds and the time left."""
    from agentlab.llm import LLMConfig
    from agentlab.llm.testing import LoopbackChatServer, list_continuation
    from agentlab.paths import data_dir
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    caplog.set_level(logging.INFO, logger="agentlab.progress")
    with LoopbackChatServer(list_continuation) as srv:
        cfg = SelfInstructConfig(out_dir=tmp_path / "si", agents=["SpotifyAgent", "GmailAgent"], per_agent=100, max_rounds=2,
                                 generator=LLMConfig(kind="openai", base_url=srv.url, model="loopback-generator"),
                                 agents_per_batch=1, fresh=True, thresholds=data_dir() / "demos" / "thresholds.json",
                                 torch_threads=1, leakage=False)
        rep = run_selfinstruct(cfg, pool=pool, progress=True)
    pat = re.compile(r"self-instruct (\d)/4: (\w+) round (\d)/2 kept (\d+)/(\d+) in [\d.]+s \| (\d) left, ETA \S+$")
    lines = [m for m in (pat.match(r.getMessage()) for r in caplog.records if r.name == "agentlab.progress") if m]
    assert [int(m[1]) for m in lines] == [1, 2, 3, 4] and [int(m[6]) for m in lines] == [3, 2, 1, 0]
    assert sorted((m[2], m[3]) for m in lines) == [("GmailAgent", "1"), ("GmailAgent", "2"), ("SpotifyAgent", "1"),
                                                   ("SpotifyAgent", "2")]
    assert sum(int(m[4]) for m in lines) == rep.run_accepted and sum(int(m[5]) for m in lines) == rep.run_candidates > 0
