"""Routing latency per task, one task at a time, as ``agentlab route`` sees a new task.

Issue 16 asks that AgentToken's routing stay at <= 0.02 s per task on this machine. The study
(:mod:`agentlab.experiments.route_latency`) routes each task alone, cold (hidden-state cache
off) and warm (the same task again, its first forward pass read from the disk cache).

Routers: the shipped AgentToken checkpoint (``data/tokens``), the hybrid (its checkpoint plus
MiniLM), and the embedding router fitted on the pool's seed demonstrations; all side by side in
one run on the same tasks (spread over the OSWorld + AppAgent domains).

    python benchmarks/route_latency.py [--quick] [--tasks N] [--routers agenttoken,hybrid,embedding] [--results PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, publish, run_main, summary_line, usage_error

TITLE = "Routing latency per task (one task at a time)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="12 tasks")
    ap.add_argument("--tasks", type=int, default=None, help="tasks, spread over the benchmark list (default 60; quick 12)")
    ap.add_argument("--routers", default="agenttoken,hybrid,embedding")
    ap.add_argument("--results", type=Path, default=RESULTS / "route_latency.md")
    args = ap.parse_args(argv)

    from agentlab.errors import ConfigError
    from agentlab.experiments.route_latency import RouteLatencyConfig, run
    from agentlab.pool import AgentPool

    config = RouteLatencyConfig(routers=[k.strip() for k in args.routers.split(",") if k.strip()],
                                tasks=args.tasks if args.tasks is not None else (12 if args.quick else 60))
    try:
        res = run(AgentPool.from_dir(), config)
    except ConfigError as exc:  # an unknown router name, before any model loads
        return usage_error(str(exc))
    body, line = res.markdown(), summary_line(res.summary())
    return publish(args.results, TITLE, body, line, __file__, argv)


if __name__ == "__main__":
    run_main(main)
