"""Generalists as fallback: single-app accuracy before/after enrolling AgentS2 and PCAgent, with and without the store policy.

The policy (:class:`agentlab.metaagent.store_policy.FallbackPolicy`): route among the specialists,
fall back to the best generalist when a signal (low best-specialist probability, or high
generalist mass) passes a threshold fitted on held-out (self-instruct) demonstrations. Rows: before enrolment (30 tokens),
after (32, no policy), after with the policy; the 313 single-app tasks and the 12 two-application
desktop tasks (``pc-*``); and with multi-application detection by clause routing
(:mod:`agentlab.metaagent.multiapp`: a request whose parts land in different applications goes to
a generalist; ``--clauses`` picks the router that routes the parts). The study is
:mod:`agentlab.experiments.generalist_fallback`.

    python benchmarks/generalist_fallback.py [--quick] [--budget 0.01] [--signal specialist|generalist_mass]
        [--clauses embedding|agenttoken|none] [--clause-budget 0.01] [--no-mentions] [--results PATH]

The run's figures also go to ``<results>.json`` (what notebook 04 plots). Named-application detection (:mod:`agentlab.metaagent.mentions`: a request that names two
applications of one platform goes to a generalist) adds rows unless ``--no-mentions``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from _common import RESULTS, command_line, summary_line, usage_error, write_result

TITLE = "Generalists as fallback: enrolment cost and two-app share under the store policy"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="20 single-app tasks, 80 held-out specialist demonstrations, 30 held-out requests per kind")
    ap.add_argument("--budget", type=float, default=0.01,
                    help="share of held-out specialist demonstrations allowed to fall back (fits the threshold)")
    ap.add_argument("--signal", choices=["specialist", "generalist_mass"], default=None,
                    help="the policy's signal (default: the one separating held-out demonstrations better)")
    ap.add_argument("--clauses", choices=["embedding", "agenttoken", "none"], default="embedding",
                    help="the router that routes each part of a request for multi-application detection (none: no such rows)")
    ap.add_argument("--clause-budget", type=float, default=0.01,
                    help="share of held-out single-application requests the clause detector may cut (fits its threshold)")
    ap.add_argument("--no-mentions", action="store_true",
                    help="no rows for multi-application detection by named applications")
    ap.add_argument("--results", type=Path, default=RESULTS / "generalist_fallback.md")
    args = ap.parse_args(argv)

    from agentlab.errors import AgentlabError
    from agentlab.experiments import generalist_fallback
    from agentlab.metaagent.checkpoint import paths_for
    from agentlab.paths import data_dir
    from agentlab.pool import AgentPool

    try:
        config = generalist_fallback.FallbackConfig(max_specialist_fallback=args.budget,
                                                    max_eval_tasks=20 if args.quick else None, signal=args.signal,
                                                    max_held_out=80 if args.quick else None,
                                                    clauses=None if args.clauses == "none" else args.clauses,
                                                    clause_budget=args.clause_budget,
                                                    clause_held_out=30 if args.quick else 400,
                                                    mentions=not args.no_mentions)
        full = AgentPool.from_dir()
        shipped = json.loads(paths_for(data_dir() / "tokens")[1].read_text())["agents"]
        pool = full.subset([a for a in shipped if a in full.names])  # the shipped store's 32 agents
        res = generalist_fallback.run(pool, config)
    except AgentlabError as exc:
        return usage_error(str(exc))
    body, line = res.markdown(), summary_line(res.summary())
    write_result(args.results, TITLE, body, line, command=command_line(__file__, argv), note=f" ({res.seconds:.0f} s)")
    from agentlab.fileio import atomic_write_text

    # the figures notebook 04 plots without measuring, beside the results file
    atomic_write_text(args.results.with_suffix(".json"),
                      json.dumps(res.to_record(command=command_line(__file__, argv)), indent=1) + "\n")
    print("\n".join(body))
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("agentlab.experiments").setLevel(logging.INFO)
    logging.getLogger("agentlab.metaagent.store_policy").setLevel(logging.INFO)
    logging.getLogger("agentlab.metaagent.multiapp").setLevel(logging.INFO)
    sys.exit(main())
