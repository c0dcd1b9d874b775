"""Two-application detection in people's words: named applications vs phrase evidence (issue 41).

Fits the phrase detector (:mod:`agentlab.metaagent.spans`) on the pool's demonstrations (or loads
one), then measures it beside the named-application rule on the blind requests of
``data/requests``, the 313 public single-application tasks (when fetched) and the routing set.

    python benchmarks/two_app_detection.py [--quick] [--detector PATH] [--save PATH] [--results PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, publish, run_main, summary_line

TITLE = "Two-application detection in people's words"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--detector", type=Path, default=None, help="a fitted detector (default: fit one now)")
    ap.add_argument("--save", type=Path, default=None, help="write the fitted detector here")
    ap.add_argument("--budget", type=float, default=0.01)
    ap.add_argument("--quick", action="store_true", help="fit on 10 demonstrations per domain, threshold on 150 held-out ones, 40 synthesized requests")
    ap.add_argument("--results", type=Path, default=RESULTS / "two_app_detection.md")
    args = ap.parse_args(argv)

    from agentlab.experiments.two_app_detection import DetectionConfig, run
    from agentlab.pool import AgentPool

    res = run(AgentPool.from_dir(), DetectionConfig(detector=args.detector, budget=args.budget,
                                                          per_domain=10 if args.quick else None,
                                                          max_held_out=150 if args.quick else None,
                                                          synthesized=40 if args.quick else 200))
    if args.save is not None:
        res.detector.save(args.save)
    return publish(args.results, TITLE, res.markdown(), summary_line(res.summary()), __file__, argv)


if __name__ == "__main__":
    run_main(main)
