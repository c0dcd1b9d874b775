"""Benchmark: scale-out on Ray -- episodes per hour and self-instruct candidates per minute, 1 vs N workers.

Issue 15's "Measured": on this 2-core machine, workspace episodes with a model behind an
OpenAI-compatible endpoint should run >= 1.6x faster on 2 workers than serially. The model is a
loopback endpoint answering each task with its reference program after a fixed delay
(``--delay``, default 2 s: a remote model's latency); self-instruct shards one agent per worker
with a loopback generator. Both sides run the same work in one run; Ray's own start is timed
apart. The study is :mod:`agentlab.experiments.scale_out`.

    python benchmarks/scale.py [--quick] [--workers 2] [--tasks 12] [--delay 2.0]
        [--si-agents 4] [--si-rounds 2] [--si-delay 0.3] [--results FILE]

Writes ``benchmarks/results/scale.md`` and ends with one ``key=value`` line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, publish, run_main, summary_line

TITLE = "Scale-out on Ray (issue 15)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 tasks, 2 agents x 1 round, shorter delays")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tasks", type=int, default=None, help="workspace tasks (default 12; quick 4)")
    ap.add_argument("--delay", type=float, default=None, help="model latency per request, s (default 2.0; quick 0.5)")
    ap.add_argument("--si-agents", type=int, default=None, help="self-instruct agents (default 4; quick 2)")
    ap.add_argument("--si-rounds", type=int, default=None, help="self-instruct rounds per agent (default 2; quick 1)")
    ap.add_argument("--si-delay", type=float, default=None, help="generator latency per request, s (default 0.3; quick 0.1)")
    ap.add_argument("--results", type=Path, default=RESULTS / "scale.md")
    args = ap.parse_args(argv)
    q = args.quick

    from agentlab.experiments.scale_out import ScaleOutConfig, run

    res = run(ScaleOutConfig(
        workers=args.workers, tasks=args.tasks or (4 if q else 12),
        delay=args.delay if args.delay is not None else (0.5 if q else 2.0),
        si_agents=args.si_agents or (2 if q else 4), si_rounds=args.si_rounds or (1 if q else 2),
        si_delay=args.si_delay if args.si_delay is not None else (0.1 if q else 0.3)))
    body, line = res.markdown(), summary_line(res.summary())
    return publish(args.results, TITLE, body, line, __file__, argv)


if __name__ == "__main__":
    run_main(main)
