"""End-to-end speed-up of ``agentlab exec --workers N`` over a serial run, Ray's start included.

Why apart from :mod:`agentlab.experiments.scale_out`: that study leaves Ray's start out of its
rates (a cluster started once per session); a researcher typing ``agentlab exec --workers 2`` pays
it on every run, so this one times the whole command, as a person would with ``time``: the CLI in
a fresh process (import, manifest, Ray's start, each worker's set-up, the episodes, the summary).

The model is a loopback OpenAI-compatible endpoint (:class:`agentlab.llm.testing.LoopbackChatServer`)
answering each task with its reference program after a fixed delay (a remote model's latency),
so every episode is one model call, the program in its sandbox and the evaluation. Both runs
use the same tasks, flags and endpoint; their rows must agree apart from the timing fields.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.experiments.markdown import table
from agentlab.experiments.scale_out import _solution, workspace_tasks

log = logging.getLogger(__name__)


class RaySpeedupConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workers: int = Field(2, ge=2)
    #: workspace tasks with a reference solution (the first N)
    tasks: int = Field(40, ge=1)
    #: the loopback model's latency per request, s
    delay: float = Field(1.0, ge=0.0)


@dataclass
class Run:
    """One ``agentlab exec`` command, timed from outside."""

    argv: list[str]
    wall_s: float
    rows: list[dict[str, Any]]

    @property
    def acc(self) -> float:
        return sum(bool(r.get("success")) for r in self.rows) / len(self.rows) if self.rows else 0.0


@dataclass
class RaySpeedup:
    config: RaySpeedupConfig
    serial: Run
    parallel: Run
    #: rows sorted by id agree apart from the timing fields
    same_rows: bool
    load: tuple[float, float, float]
    #: task id -> the fields (timings aside) whose values differ between the two runs
    differences: dict[str, list[str]]

    @property
    def ratio(self) -> float:
        return self.serial.wall_s / self.parallel.wall_s

    def summary(self) -> dict[str, float | int | str | None]:
        return {"tasks": len(self.serial.rows), "delay_s": self.config.delay, "serial_s": self.serial.wall_s,
                f"workers_{self.config.workers}_s": self.parallel.wall_s, "ratio": self.ratio,
                "same_rows": int(self.same_rows), "load1": self.load[0]}

    def markdown(self) -> list[str]:
        c, w = self.config, self.config.workers
        return [
            f"`agentlab exec` end to end (a fresh process each: import, manifest, "
            f"and for the workers Ray's start and each worker's set-up; episodes, summary), {len(self.serial.rows)} workspace tasks "
            f"(ground-truth routing, code agents), a loopback OpenAI-compatible model answering each task with its "
            f"reference program after {c.delay:g} s. Serial (in-process) vs `--workers {w}` (Ray started by the command); "
            f"one run each, on a shared 2-core machine (load average before the runs: "
            f"{self.load[0]:.2f} / {self.load[1]:.2f} / {self.load[2]:.2f}).",
            "",
            *table(["run", "wall", "ExecutionAcc", "speed-up"], [
                ["serial", f"{self.serial.wall_s:.1f} s", f"{self.serial.acc:.2f}", "1.00x"],
                [f"--workers {w}", f"{self.parallel.wall_s:.1f} s", f"{self.parallel.acc:.2f}", f"**{self.ratio:.2f}x**"],
            ]),
            "",
            f"Rows sorted by id: {'identical apart from the timing fields' if self.same_rows else 'DIFFER beyond the timing fields'}"
            + "".join(f"; {i}: {', '.join(keys)}" for i, keys in sorted(self.differences.items())) + ".",
        ]


def exec_argv(tasks: Path, out: Path, llm_config: Path, *extra: str) -> list[str]:
    """The ``agentlab exec`` command both sides run (this interpreter, ``python -m agentlab.cli``)."""
    return [sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(tasks), "--out", str(out),
            "--llm-config", str(llm_config), "--router", "gt", "--max-steps", "3", *extra]


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t, proc


def run(config: RaySpeedupConfig) -> RaySpeedup:
    """The serial run, then the one on ``config.workers`` Ray workers started by the command."""
    from agentlab.episode import comparable_row
    from agentlab.errors import HarnessError
    from agentlab.fileio import read_jsonl
    from agentlab.llm.testing import LoopbackChatServer

    tasks = workspace_tasks(config.tasks)
    answers = {t.instruction: _solution(t) for t in tasks}

    def reply(body: dict[str, Any], k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "FAIL")

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"OPENAI_API_KEY": "loopback"}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ray-speedup-") as tmp, LoopbackChatServer(reply, delay_s=config.delay) as srv:
        root = Path(tmp)
        folder = root / "tasks"
        folder.mkdir()
        for t in tasks:
            assert t.source is not None
            (folder / f"{t.id}.json").write_text(Path(t.source).read_text(encoding="utf-8"), encoding="utf-8")
        cfg = root / "llm.yaml"
        cfg.write_text(f"llm:\n  kind: openai\n  base_url: {srv.url}\n  model: loopback-coder\n", encoding="utf-8")
        runs: dict[str, Run] = {}
        for side, extra in (("serial", ()), ("parallel", ("--workers", str(config.workers)))):
            argv = exec_argv(folder, root / side, cfg, *extra)
            wall, proc = timed(argv, env)
            if proc.returncode != 0:
                raise HarnessError(f"agentlab exec ({side}) failed: {proc.stderr.strip()[-600:]}", where=" ".join(argv))
            runs[side] = Run(argv, wall, read_jsonl(root / side / "results.jsonl"))
            log.info("%s: %.1f s", side, wall)

    def by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {r["id"]: comparable_row(r) for r in rows}

    a, b = by_id(runs["serial"].rows), by_id(runs["parallel"].rows)
    differences = {i: sorted(k for k in a[i].keys() | b.get(i, {}).keys() if a[i].get(k) != b.get(i, {}).get(k))
                   for i in a if a[i] != b.get(i)}
    differences.update({i: ["(only in the parallel run)"] for i in b if i not in a})
    return RaySpeedup(config, runs["serial"], runs["parallel"], a == b and len(runs["serial"].rows) == len(runs["parallel"].rows),
                      load, differences)
