"""AgentToken tuning: which hidden state, prompt, initialisation and bias make AgentToken route well.

The driver of :mod:`agentlab.experiments.tuning` (the study, with its evaluation and data, is
described there and in ``benchmarks/results/agenttoken_tuning.md``). Logs every row as JSON while
it runs, optionally writes all rows as JSON (``--out``) and as a Markdown table (``--md``), and ends with
one ``key=value`` summary line.

    python benchmarks/agenttoken_tuning.py [--quick] [--templates T ...] [--chat 0 1] [--source seed|all|generated]
        [--per-agent N] [--grid quick|train|full] [--out rows.json] [--md rows.md]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from _common import summary_line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one prompt variant (raw), the final hidden state, the training grid")
    ap.add_argument("--templates", nargs="+", default=["metaagent/router_agenttoken"])
    ap.add_argument("--chat", nargs="+", default=["1"], help="1 = wrap in the chat template, 0 = raw")
    ap.add_argument("--source", default="seed", help="training data: seed | all | generated")
    ap.add_argument("--per-agent", type=int, default=None)
    ap.add_argument("--grid", default="quick", choices=["quick", "train", "full"])
    ap.add_argument("--out", type=Path, default=None, help="write all rows as JSON")
    ap.add_argument("--md", type=Path, default=None, help="write the rows as a Markdown table")
    args = ap.parse_args(argv)

    from agentlab.experiments.tuning import TuningConfig, run

    if args.quick:  # features of one prompt variant and one hidden state; the training grid then takes seconds
        args.chat, args.grid = ["0"], "train"
    config = TuningConfig(
        templates=args.templates, chat=[c == "1" for c in args.chat], source=args.source, per_agent=args.per_agent,
        grid=args.grid,
    )
    study = run(config)
    if args.out:
        from agentlab.fileio import atomic_write_json

        atomic_write_json(args.out, study.as_json())
    if args.md:
        from agentlab.fileio import atomic_write_text

        atomic_write_text(args.md, study.to_markdown())
    ref, best = study.rows[0], study.best()
    print(summary_line({
        "reference_osworld": ref["osworld"], "reference_appagent": ref["appagent"],
        "best_osworld": None if best is None else best["osworld"], "best_appagent": None if best is None else best["appagent"],
    }), flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("agentlab.experiments").setLevel(logging.INFO)  # the reference, then every row as JSON
    sys.exit(main())
