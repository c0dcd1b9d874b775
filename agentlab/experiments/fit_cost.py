"""What fitting a router costs: wall time, peak memory growth, trainable parameters (the Table 5 analog)."""

from __future__ import annotations

import os
import threading
import time
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


def measure_fit(router: Router, train: TrainingSet) -> tuple[dict[str, float], FitCost]:
    """Fit ``router`` on ``train`` while timing it and sampling the process's memory."""
    base = _rss_bytes()
    peak = [base or 0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            now = _rss_bytes()
            if now is not None and now > peak[0]:
                peak[0] = now

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    try:
        metrics = router.fit(train)
    finally:
        stop.set()
        thread.join()
    seconds = time.perf_counter() - t0
    end = _rss_bytes()
    if end is not None:
        peak[0] = max(peak[0], end)
    mib = (peak[0] - base) / 2**20 if base is not None else None
    return metrics, FitCost(seconds=seconds, peak_rss_mib=mib, trainable_parameters=router.trainable_parameters())
