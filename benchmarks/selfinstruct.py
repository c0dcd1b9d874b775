"""Self-instruct benchmark: generation throughput, filter cost and scaling, batched vs naive scoring.

Measured in one run on this machine (the study: :mod:`agentlab.experiments.selfinstruct_cost`):
scoring m candidates against n references naively, batched and with the exact cached matrix
the pipeline uses (cold and warm), the greedy loop of Algorithm 1, the calibration bands
(Figure-7 analog) with a replay of the shipped candidates, a live generation sample with the
embedded generator, and the figures of the shipped data's own generation run.

    python benchmarks/selfinstruct.py [--quick] [--no-live] [--results PATH]

Writes ``benchmarks/results/selfinstruct.md`` and ends with one ``key=value`` summary line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import RESULTS, command_line, summary_line, write_result

TITLE = "Self-instruct: generation throughput and BERTScore filter cost"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, 2 agents for the live sample")
    ap.add_argument("--no-live", action="store_true", help="skip the live generation sample")
    ap.add_argument("--results", type=Path, default=RESULTS / "selfinstruct.md")
    args = ap.parse_args(argv)

    from agentlab.experiments.selfinstruct_cost import SelfInstructCostConfig, run
    from agentlab.pool import AgentPool

    q = args.quick
    config = SelfInstructCostConfig(
        live_agents=None if args.no_live else ["SpotifyAgent", "WriterAgent"] if q else ["SpotifyAgent", "WriterAgent", "OSAgent", "MapsAgent"],
        live_prompts=1 if q else 2)
    if q:
        config.sizes = [(8, 12), (16, 25), (16, 50)]
    res = run(AgentPool.from_dir(), config)
    body = res.markdown()
    write_result(args.results, TITLE, body, command=command_line(__file__, argv))
    print("\n".join(body))
    print(summary_line(res.summary(), floats=".3g"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
