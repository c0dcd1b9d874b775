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
    #: pairs of runs; the order alternates (serial first, then parallel first) so a machine whose
    #: load drifts favours neither side
    repeats: int = Field(1, ge=1)
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
    #: the 1-minute load average just before it started (the machine is shared)
    load1: float = 0.0

    @property
    def acc(self) -> float:
        return sum(bool(r.get("success")) for r in self.rows) / len(self.rows) if self.rows else 0.0


@dataclass
class RaySpeedup:
    config: RaySpeedupConfig
    #: (serial, parallel) per repeat, in the order they were measured
    pairs: list[tuple[Run, Run]]
    #: task id -> (field, serial value, parallel value) for the fields (timings aside) that differ,
    #: over every pair
    differences: dict[str, list[tuple[str, str, str]]]

    @property
    def serial_s(self) -> float:
        return sum(s.wall_s for s, _ in self.pairs)

    @property
    def parallel_s(self) -> float:
        return sum(p.wall_s for _, p in self.pairs)

    @property
    def ratio(self) -> float:
        """Total serial wall time over total parallel wall time."""
        return self.serial_s / self.parallel_s

    @property
    def same_rows(self) -> bool:
        return not self.differences

    def summary(self) -> dict[str, float | int | str | None]:
        n = len(self.pairs)
        return {"tasks": len(self.pairs[0][0].rows), "delay_s": self.config.delay, "repeats": n,
                "serial_s": self.serial_s / n, f"workers_{self.config.workers}_s": self.parallel_s / n,
                "ratio": self.ratio, "same_rows": int(self.same_rows)}

    def markdown(self) -> list[str]:
        c, w = self.config, self.config.workers
        rows = []
        for i, (s, p) in enumerate(self.pairs, start=1):
            rows.append([str(i), f"{s.wall_s:.1f} s (load {s.load1:.1f})", f"{p.wall_s:.1f} s (load {p.load1:.1f})",
                         f"{s.acc:.2f} / {p.acc:.2f}", f"{s.wall_s / p.wall_s:.2f}x"])
        first = ["serial first" if i % 2 == 0 else f"`--workers {w}` first" for i in range(len(self.pairs))]
        diffs = "".join(f"; `{i}`: " + ", ".join(f"{k} ({a} vs {b})" for k, a, b in d) for i, d in sorted(self.differences.items()))
        return [
            f"`agentlab exec` end to end (a fresh process each: import, manifest, "
            f"and for the workers Ray's start and each worker's set-up; episodes, summary), {len(self.pairs[0][0].rows)} "
            f"workspace tasks (ground-truth routing, code agents), a loopback OpenAI-compatible model answering each "
            f"task with its reference program after {c.delay:g} s. Serial (in-process) vs `--workers {w}` (Ray "
            f"started by the command), {len(self.pairs)} pair(s) of runs ({', '.join(first)}), on a 2-core machine "
            "shared with other people's jobs: the 1-minute load average before each run is given, and it moved "
            "between runs, so a single ratio carries that noise.",
            "",
            *table(["pair", "serial", f"--workers {w}", "ExecutionAcc", "speed-up"], rows),
            "",
            f"Over all pairs: {self.serial_s:.1f} s serial vs {self.parallel_s:.1f} s on {w} workers, "
            f"**{self.ratio:.2f}x**.",
            "",
            f"Rows sorted by id (each run's `--out` folder written as `<out>`): "
            f"{'identical apart from the timing fields' if self.same_rows else 'DIFFER beyond the timing fields'}"
            + diffs + ".",
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
    """``config.repeats`` pairs: the serial run and the one on ``config.workers`` Ray workers started by
    the command, in alternating order."""
    from agentlab.errors import HarnessError
    from agentlab.fileio import read_jsonl
    from agentlab.llm.testing import LoopbackChatServer

    tasks = workspace_tasks(config.tasks)
    answers = {t.instruction: _solution(t) for t in tasks}

    def reply(body: dict[str, Any], k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "FAIL")

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"OPENAI_API_KEY": "loopback"}
    with tempfile.TemporaryDirectory(prefix="ray-speedup-") as tmp, LoopbackChatServer(reply, delay_s=config.delay) as srv:
        root = Path(tmp)
        folder = root / "tasks"
        folder.mkdir()
        for t in tasks:
            assert t.source is not None
            (folder / f"{t.id}.json").write_text(Path(t.source).read_text(encoding="utf-8"), encoding="utf-8")
        cfg = root / "llm.yaml"
        cfg.write_text(f"llm:\n  kind: openai\n  base_url: {srv.url}\n  model: loopback-coder\n", encoding="utf-8")
        pairs: list[tuple[Run, Run]] = []
        sides = {"serial": (), "parallel": ("--workers", str(config.workers))}
        for rep in range(config.repeats):
            runs: dict[str, Run] = {}
            for side in (("serial", "parallel") if rep % 2 == 0 else ("parallel", "serial")):
                argv = exec_argv(folder, root / f"{side}-{rep}", cfg, *sides[side])
                load1 = os.getloadavg()[0]
                wall, proc = timed(argv, env)
                if proc.returncode != 0:
                    raise HarnessError(f"agentlab exec ({side}) failed: {proc.stderr.strip()[-600:]}", where=" ".join(argv))
                runs[side] = Run(argv, wall, read_jsonl(root / f"{side}-{rep}" / "results.jsonl"), load1)
                log.info("%s (pair %d, load %.1f): %.1f s", side, rep + 1, load1, wall)
            pairs.append((runs["serial"], runs["parallel"]))

    differences: dict[str, list[tuple[str, str, str]]] = {}
    for serial, parallel in pairs:
        outs = (Path(serial.argv[serial.argv.index("--out") + 1]), Path(parallel.argv[parallel.argv.index("--out") + 1]))
        for i, d in row_differences(serial.rows, parallel.rows, outs).items():
            differences.setdefault(i, []).extend(d)
    return RaySpeedup(config, pairs, differences)


def row_differences(serial: list[dict[str, Any]], parallel: list[dict[str, Any]],
                    outs: tuple[Path, Path] | None = None) -> dict[str, list[tuple[str, str, str]]]:
    """Task id -> (field, serial value, parallel value) for every field but the timings that differs
    (a task missing on one side differs in every field). ``outs``: the two runs' ``--out`` folders,
    written as ``<out>`` first (an evaluator's message names the file it did not find by its path)."""
    import json

    from agentlab.run.episode import comparable_row

    def same_out(rows: list[dict[str, Any]], out: Path | None) -> list[dict[str, Any]]:
        return rows if out is None else [json.loads(json.dumps(r).replace(str(out), "<out>")) for r in rows]

    a = {r["id"]: comparable_row(r) for r in same_out(serial, outs[0] if outs else None)}
    b = {r["id"]: comparable_row(r) for r in same_out(parallel, outs[1] if outs else None)}
    out: dict[str, list[tuple[str, str, str]]] = {}
    for i in sorted(a.keys() | b.keys()):
        ra, rb = a.get(i, {}), b.get(i, {})
        for k in sorted(ra.keys() | rb.keys()):
            if ra.get(k) != rb.get(k):
                where, x, y = _first_difference(ra.get(k), rb.get(k), k)
                out.setdefault(i, []).append((where, _short(x), _short(y)))
    return out


def _first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    """Where inside two unequal values they first differ (``verdict.checks[1].found``), and the values there."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(a.keys() | b.keys(), key=str):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{n}]")
    return path, a, b


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, default=str)
    return text if len(text) <= 160 else text[:157] + "..."
