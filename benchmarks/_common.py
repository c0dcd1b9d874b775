"""Helpers shared by the MetaAgent benchmark scripts (routing, training_cost, pool_scale, manager_mode, multi_agent).

Each script: parses its options (always ``--quick`` and ``--results``), measures every
side in one run, writes its latest output with the exact command to
``benchmarks/results/<name>.md`` (atomically) and ends with ONE ``key=value`` line.
"""

from __future__ import annotations

import os
import random
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def command_line() -> str:
    """The command that is running, as a user would type it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script_s = str(script.relative_to(ROOT))
    except ValueError:
        script_s = str(script)
    return " ".join(["python", script_s, *(shlex.quote(a) for a in sys.argv[1:])])


def write_result(path: Path, title: str, body: list[str], summary: str) -> None:
    """Write a results file: title, command, body, and the summary line."""
    from agentlab.fileio import atomic_write_text

    text = "\n".join(
        [f"## {title}", "", f"Command: `{command_line()}`", "", *body, "", "Summary line:", "", "```", summary, "```", ""]
    )
    atomic_write_text(path, text)


def summary_line(values: dict[str, float | int | str | None]) -> str:
    def fmt(v: float | int | str | None) -> str:
        if v is None:
            return "na"
        if isinstance(v, float):
            return f"{v:.4f}"
        return str(v)

    return " ".join(f"{k}={fmt(v)}" for k, v in values.items())


def stratified(tasks: list[Any], per_domain: int | None, seed: int = 0, key: Callable[[Any], str] | None = None) -> list[Any]:
    """At most ``per_domain`` tasks of each domain (seeded choice, original order kept)."""
    if per_domain is None:
        return list(tasks)
    key = key or (lambda t: t.domain)
    rng = random.Random(seed)
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        groups.setdefault(key(t), []).append(i)
    keep: set[int] = set()
    for idx in groups.values():
        keep.update(rng.sample(idx, min(per_domain, len(idx))))
    return [t for i, t in enumerate(tasks) if i in keep]


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


@dataclass
class Measured:
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_rss_delta_mb: float = 0.0
    baseline_rss_mb: float = 0.0


@contextmanager
def measure(interval: float = 0.005) -> Iterator[Measured]:
    """Wall time, process CPU time, and peak RSS above the RSS at entry (sampled by a thread).

    Peak RSS is what the operating system had to provide, including the allocator's
    retained pages; sampling every 5 ms can miss spikes shorter than that.
    """
    import psutil

    proc = psutil.Process()
    m = Measured()
    base = proc.memory_info().rss
    m.baseline_rss_mb = base / 2**20
    peak = [base]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            stop.wait(interval)

    th = threading.Thread(target=sample, daemon=True)
    t0, c0 = time.perf_counter(), time.process_time()
    th.start()
    try:
        yield m
    finally:
        stop.set()
        th.join()
        peak[0] = max(peak[0], proc.memory_info().rss)
        m.seconds = time.perf_counter() - t0
        m.cpu_seconds = time.process_time() - c0
        m.peak_rss_delta_mb = (peak[0] - base) / 2**20


def log(msg: str) -> None:
    print(msg, flush=True)


def evenly(items: list[Any], n: int | None) -> list[Any]:
    """At most ``n`` items spread evenly over the list (all when ``n`` is None)."""
    if n is None or n >= len(items):
        return list(items)
    if n <= 0:
        return []
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]
