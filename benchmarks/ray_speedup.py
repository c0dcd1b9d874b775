"""End-to-end speed-up of ``agentlab exec --workers 2`` over a serial run, Ray's start included.

Issue #43 asks that two local workers reach >= 1.6x end to end on a 40-task run whose model
answers after 1 s. The study (:mod:`agentlab.experiments.ray_speedup`) runs the same tasks with
the CLI in a fresh process twice -- serially, then with ``--workers N`` (Ray started by the
command) -- against a loopback OpenAI-compatible model that answers each task with its reference
program after ``--delay`` seconds, and times each command from outside.

    python benchmarks/ray_speedup.py [--quick] [--tasks 40] [--delay 1.0] [--workers 2] [--repeats N] [--results PATH]

Writes ``benchmarks/results/ray_speedup.md`` and ends with one ``key=value`` line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, publish, run_main, summary_line

TITLE = "End-to-end speed-up of `agentlab exec --workers` (Ray's start included)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="8 tasks")
    ap.add_argument("--tasks", type=int, default=None, help="workspace tasks (default 40; quick 8)")
    ap.add_argument("--delay", type=float, default=1.0, help="model latency per request, s (default 1.0)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1, help="pairs of runs, in alternating order (default 1)")
    ap.add_argument("--results", type=Path, default=RESULTS / "ray_speedup.md")
    args = ap.parse_args(argv)

    from agentlab.experiments.ray_speedup import RaySpeedupConfig, run

    res = run(RaySpeedupConfig(workers=args.workers, repeats=args.repeats, tasks=args.tasks or (8 if args.quick else 40), delay=args.delay))
    body, line = res.markdown(), summary_line(res.summary(), floats=".2f")
    return publish(args.results, TITLE, body, line, __file__, argv)


if __name__ == "__main__":
    run_main(main)
