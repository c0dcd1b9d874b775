"""A REAL interruption: the CLI runs in a subprocess against a loopback OpenAI-compatible
server, is stopped with SIGINT and then SIGKILL mid-run, and is rerun; nothing accepted is lost
and nothing is duplicated.

The generator is a tiny HTTP server speaking the chat-completions protocol (the real
``openai`` client talks to it), because the real 135M model would make this test take minutes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from agentlab.llm.embedded import MINILM_ID

VERBS = ["Set", "Start", "Delete", "Rename", "Show", "Change", "Add", "Turn off", "Move", "Sort"]
THINGS = ["the alarm", "a timer", "the stopwatch", "my world clock", "the bedtime reminder", "the ringtone",
          "the snooze length", "the weekday alarms", "the lap times", "the city list"]
TAILS = ["for tomorrow at {h}:{m:02d}", "to {h} minutes", "named Run {h}", "before {h} pm", "every {h} days"]


def _numbered_requests(body: dict, k: int) -> str:
    """Reply k: three distinct numbered clock requests, after a short delay (a slow-ish generator
    so the run can be interrupted mid-way)."""
    time.sleep(0.15)
    lines = []
    for j in range(3):
        n = k * 3 + j
        lines.append(
            f"{VERBS[n % 10]} {THINGS[(n // 10) % 10]} {TAILS[(n // 100) % 5].format(h=n % 12 + 1, m=n % 60)}."
        )
    return " " + "\n".join(f"{i}. {l}" if i else l for i, l in enumerate(lines, start=0)) + "\n"


@pytest.fixture()
def fake_server(chat_server):  # type: ignore[no-untyped-def]
    return chat_server(_numbered_requests)


def _rounds(journal: Path) -> list[tuple[str, int]]:
    out = []
    if not journal.exists():
        return out
    for line in journal.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("type") == "round":
            out.append((rec["agent"], rec["round"]))
    return out


def _accepted(journal: Path) -> list[tuple[str, str]]:
    out = []
    for line in journal.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("type") == "round":
            out.extend((r["agent"], r["text"]) for r in rec["accepted"])
    return out


def _start(cfg: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.Popen(
        [sys.executable, "-m", "agentlab.cli", "selfinstruct", "--config", str(cfg), "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def _interrupt_after(proc: subprocess.Popen, journal: Path, n_rounds: int, sig: int, timeout: float = 240) -> None:
    t0 = time.monotonic()
    while len(_rounds(journal)) < n_rounds:
        if proc.poll() is not None:
            raise AssertionError(f"run ended before it could be interrupted: {proc.communicate()}")
        if time.monotonic() - t0 > timeout:
            proc.kill()
            raise AssertionError("no progress within the timeout")
        time.sleep(0.05)
    proc.send_signal(sig)


@pytest.mark.slow
def test_sigint_and_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path, fake_server) -> None:  # type: ignore[no-untyped-def]
    th = {"scorer": MINILM_ID, "num_layers": 6, "tau1": 0.05, "tau2": 0.62, "leakage_tau": 0.9}
    (tmp_path / "th.json").write_text(json.dumps(th))
    out = tmp_path / "out"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "agents: [ClockAgent, AppAgent]\nper_agent: 1000\nmax_rounds: 6\nprompts_per_round: 1\n"
        "sequences_per_prompt: 2\nagents_per_batch: 1\nleakage: false\n"
        f"thresholds: {tmp_path / 'th.json'}\nout_dir: {out}\n"
        f"generator: {{kind: openai, base_url: '{fake_server}', model: fake}}\n"
    )
    journal = out / "journal.jsonl"

    p1 = _start(cfg)
    _interrupt_after(p1, journal, 2, signal.SIGINT)
    _, err1 = p1.communicate(timeout=120)
    # Ctrl-C ends the CLI with a non-zero code and no traceback (the exact code is the CLI's business)
    assert p1.returncode not in (0, None) and "Traceback" not in err1, err1
    kept1 = _accepted(journal)
    assert kept1, "the first run accepted nothing before the interruption"

    p2 = _start(cfg)
    _interrupt_after(p2, journal, len(_rounds(journal)) + 2, signal.SIGKILL)
    p2.communicate(timeout=60)
    assert p2.returncode == -signal.SIGKILL
    kept2 = _accepted(journal)
    assert set(kept1) <= set(kept2)

    p3 = _start(cfg)
    out3, err3 = p3.communicate(timeout=400)
    assert p3.returncode == 0, err3
    rounds = _rounds(journal)
    # every (agent, round) committed exactly once, all six rounds of both agents present
    assert Counter(rounds) == Counter({(a, r): 1 for a in ("ClockAgent", "AppAgent") for r in range(1, 7)})
    from agentlab.selfinstruct.store import load_demos

    ds = load_demos(out)
    pairs = list(zip(ds["agent"], ds["text"]))
    assert len(pairs) == len(set(pairs)), "duplicate demonstrations after resuming"
    generated = {(a, t) for a, t, s in zip(ds["agent"], ds["text"], ds["source"]) if s == "generated"}
    assert set(kept2) <= generated and generated == set(_accepted(journal))
    assert sum(1 for s in ds["source"] if s == "seed") == 24
    assert "ClockAgent" in out3 and "demonstrations" in out3
