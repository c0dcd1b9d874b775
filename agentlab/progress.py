"""Progress a person can follow anywhere: a tqdm bar on a terminal, one log line per finished item elsewhere.

Why: tqdm hides its bar when stderr is not a terminal, so a run whose output goes to a file (a
batch job, ``nohup``, a CI log) said nothing between "Loading weights" and its last line -- five
minutes of silence on a 16-task desktop run (issue #43). :class:`Progress` keeps the bar where
there is a terminal and otherwise logs, at INFO on the ``agentlab.progress`` logger (to stderr with
the CLI's logging), one line per finished item: what it was, how it ended, how long it took, the
running ExecutionAcc when items succeed or fail, how many are left and the estimated time left.

The logger is set to INFO here, so the lines show wherever logging has a handler (the CLI's, a
benchmark's), without ``--verbose``; set its level back to silence them. ``TQDM_DISABLE`` (what the
notebook runner gives its kernels) silences both the bar and the lines. This sits on the lowest
floor (beside :mod:`agentlab.parallel`, whose results it follows) so every loop can use it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

log = logging.getLogger(__name__)
log.setLevel(logging.INFO)  # the lines replace a bar that shows whatever the log level is


def eta_seconds(elapsed_s: float, done: int, total: int) -> float | None:
    """Seconds left, from the wall time per finished item so far (so several workers finishing side
    by side count as they are); None before the first item ends. Nothing left: 0."""
    if done >= total:
        return 0.0
    if done <= 0:
        return None
    return max(0.0, elapsed_s) / done * (total - done)


def duration(seconds: float | None) -> str:
    """``3.4s``, ``2m05s``, ``1h02m``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    s = round(seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


@dataclass(frozen=True)
class Tally:
    """Items judged so far (a resumed run starts from its earlier rows): for the running ExecutionAcc."""

    successes: int = 0
    judged: int = 0

    def add(self, success: bool) -> Tally:
        return Tally(self.successes + int(success), self.judged + 1)

    @property
    def acc(self) -> float:
        return self.successes / self.judged if self.judged else 0.0


def _tqdm_disabled_by_env() -> bool:
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false", "no")


class Progress:
    """``with Progress(total, "exec", "episode") as p: ... p.done(task_id, outcome, seconds, success=...)``.

    ``enabled=False`` shows nothing (a caller that reports its own progress); ``stream``: where the
    bar goes and whose ``isatty`` decides bar or lines (default stderr); ``tally``: earlier judged
    items (a resumed run). ``clock`` is for tests.
    """

    def __init__(self, total: int, desc: str, unit: str = "item", *, enabled: bool = True, stream: IO[str] | None = None,
                 tally: Tally | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.desc, self.unit, self.clock = total, desc, unit, clock
        self.count = 0
        self.tally = tally or Tally()
        self.start = clock()
        stream = stream if stream is not None else sys.stderr
        enabled = enabled and not _tqdm_disabled_by_env()
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self.lines = enabled and not tty
        self.bar: Any = None
        if enabled and tty:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, file=stream)

    def done(self, label: str, outcome: str | None = None, seconds: float | None = None, *,
             success: bool | None = None, n: int = 1, extra: str = "") -> str | None:
        """One item (or ``n``) finished: advance the bar, or log its line (returned, for tests).

        ``success`` (True/False) counts toward the running ExecutionAcc; None (a round, a shard)
        shows no accuracy."""
        self.count += n
        if success is not None:
            self.tally = self.tally.add(success)
        if self.bar is not None:
            self.bar.update(n)
            if self.tally.judged:
                self.bar.set_postfix(acc=f"{self.tally.acc:.2f}", refresh=False)
            return None
        if not self.lines:
            return None
        left = max(0, self.total - self.count)
        parts = [f"{self.desc} {self.count}/{self.total}: {label}"]
        if outcome is not None:
            parts.append(outcome)
        if seconds is not None:
            parts.append(f"in {duration(seconds)}")
        if extra:
            parts.append(extra)
        if self.tally.judged:
            parts.append(f"| ExecutionAcc {self.tally.acc:.3f} ({self.tally.successes}/{self.tally.judged})")
        parts.append(f"| {left} left, ETA {duration(eta_seconds(self.clock() - self.start, self.count, self.total))}")
        line = " ".join(parts)
        log.info("%s", line)
        return line

    def retotal(self, total: int) -> None:
        """The items expected, revised (an agent of self-instruct that stopped early has no rounds left)."""
        self.total = total
        if self.bar is not None and self.bar.total != total:
            self.bar.total = total
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def row_outcome(row: dict[str, Any]) -> tuple[str, bool]:
    """An ``agentlab exec`` row's outcome word and its success: ``success``, ``fail`` (with the
    row's status when it says more, e.g. ``fail (time_limit)``) or ``harness error`` (not the
    agent's fault, yet not a success: counted as the run's ExecutionAcc counts it)."""
    if row.get("error"):
        return "harness error", False
    if row.get("success"):
        return "success", True
    status = row.get("status")
    return ("fail" if status in (None, "done") else f"fail ({status})"), False
