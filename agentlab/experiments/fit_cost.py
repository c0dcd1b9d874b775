"""What fitting a router costs: wall time, peak memory growth, trainable parameters (the Table 5 analog)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentlab.metaagent.data import TrainingSet
    from agentlab.metaagent.router import Router


@dataclass
class FitCost:
    """What one ``router.fit`` cost (the Table 5 analog)."""

    seconds: float
    #: peak growth of the process's resident memory during the fit (MiB; None off Linux). Process
    #: level and sampled every 20 ms: a fair comparison of routers fitted one after another in one
    #: process once the shared backbone is loaded, not an exact allocation count.
    peak_rss_mib: float | None
    trainable_parameters: int


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Measured:
    """What a block of code cost (:func:`measured`)."""

    seconds: float = 0.0
    cpu_seconds: float = 0.0
    #: the resident memory at entry and its peak growth above it (MiB; None off Linux)
    baseline_rss_mib: float | None = None
    peak_rss_mib: float | None = None


@contextmanager
def measured(interval: float = 0.02) -> Iterator[Measured]:
    """Wall time, process CPU time, and peak resident memory above the entry's (sampled every
    ``interval`` s by a thread, so spikes shorter than that can be missed). Process level: it
    includes the allocator's retained pages, what the operating system had to provide."""
    base = _rss_bytes()
    peak = [base or 0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(interval):
            now = _rss_bytes()
            if now is not None and now > peak[0]:
                peak[0] = now

    m = Measured(baseline_rss_mib=None if base is None else base / 2**20)
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        yield m
    finally:
        stop.set()
        thread.join()
        m.seconds, m.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
        end = _rss_bytes()
        if end is not None:
            peak[0] = max(peak[0], end)
        m.peak_rss_mib = (peak[0] - base) / 2**20 if base is not None else None


def measure_fit(router: Router, train: TrainingSet) -> tuple[dict[str, float], FitCost]:
    """Fit ``router`` on ``train`` while timing it and sampling the process's memory."""
    with measured() as m:
        metrics = router.fit(train)
    return metrics, FitCost(seconds=m.seconds, peak_rss_mib=m.peak_rss_mib, trainable_parameters=router.trainable_parameters())
