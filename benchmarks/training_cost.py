"""Table-5 analog: trainable parameters, peak memory and wall time of AgentToken vs LoRA vs prompt tuning.

All three train on the identical demonstrations with the identical prompt, on the same frozen
SmolLM2-135M, each in a fresh process (one after the other, never concurrently) so memory
figures do not mix; AgentToken runs before and after the others (its times are the mean; the
ratio of the two shows drift of the shared machine's speed). What is measured and how:
:mod:`agentlab.experiments.training_cost`.

    python benchmarks/training_cost.py [--quick] [--per-agent 12] [--epochs 2] [--results PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, publish, run_main, summary_line

TITLE = "Training cost (Table-5 analog)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 demos per agent, 1 epoch")
    ap.add_argument("--per-agent", type=int, default=None, help="demonstrations per agent (default 12; quick 2)")
    ap.add_argument("--epochs", type=int, default=None, help="LoRA / prompt-tuning epochs (default 2; quick 1)")
    ap.add_argument("--agents", type=int, default=None, help="only the first N agents of the pool (smoke tests)")
    ap.add_argument("--results", type=Path, default=RESULTS / "training_cost.md")
    args = ap.parse_args(argv)

    from agentlab.experiments.training_cost import TrainingCostConfig, run

    res = run(TrainingCostConfig(per_agent=args.per_agent if args.per_agent is not None else (2 if args.quick else 12),
                                 epochs=args.epochs if args.epochs is not None else (1 if args.quick else 2),
                                 agents=args.agents))
    body, line = res.markdown(), summary_line(res.summary())
    return publish(args.results, TITLE, body, line, __file__, argv)


if __name__ == "__main__":
    run_main(main)
