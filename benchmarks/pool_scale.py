"""Routing latency and accuracy as the pool grows from the real agents to 1,000: AgentToken vs ICL.

The real agents are extended with synthetic ones. A synthetic agent is a renamed copy
of a real document (cycling through the pool) with domain ``synthetic``, so choosing it is
always wrong: accuracy at scale measures how well the real tokens hold up against a growing
crowd of distractors. Its AgentToken row is random with the mean norm of the trained rows
(``--rows random``) or a trained row plus Gaussian noise of 25% of that norm
(``--rows perturbed``, much harder distractors).

AgentToken uses the shipped tokens (``data/tokens``) with the disk cache of hidden states
off, so every routed task pays its full forward pass. Latency is wall time per task of
``route()`` (greedy decoding over V ∪ A, what ``agentlab route`` runs) and of ``rank()``.
ICL puts every document in the prompt: it is measured where the documents fit the 8,192-token
context, and the largest pool that fits is found by counting tokens (0 and 1 demonstration
per document).

The study is :mod:`agentlab.experiments.pool_scale`; this script parses the options, runs it and
writes its table.

    python benchmarks/pool_scale.py [--quick] [--sizes 32,100,300,1000] [--rows random|perturbed] [--results PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, command_line, run_main, summary_line, write_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the real pool and 1000 agents, 12 tasks, ICL on 3 tasks")
    ap.add_argument("--sizes", default=None, help="pool sizes (default: the real pool, 100, 300, 1000)")
    ap.add_argument("--tasks", type=int, default=None, help="test tasks, spread over domains (default 72; quick 12)")
    ap.add_argument("--icl-tasks", type=int, default=None, help="ICL test tasks (default 12; quick 3)")
    ap.add_argument("--rows", choices=["random", "perturbed"], default="random")
    ap.add_argument("--tokens", type=Path, default=None, help="AgentToken checkpoint (default: shipped data/tokens)")
    ap.add_argument("--results", type=Path, default=RESULTS / "pool_scale.md")
    args = ap.parse_args(argv)
    q = args.quick

    from agentlab.experiments.pool_scale import PoolScaleConfig, benchmark_tasks, run
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [len(pool), 1000] if q else [len(pool), 100, 300, 1000]
    tasks, icl_tasks = benchmark_tasks(args.tasks if args.tasks is not None else (12 if q else 72),
                                       args.icl_tasks if args.icl_tasks is not None else (3 if q else 12))
    res = run(pool, tasks, icl_tasks, PoolScaleConfig(sizes=sizes, rows=args.rows, tokens=args.tokens))
    body, line = res.markdown(), summary_line(res.summary())
    write_result(args.results, res.title(), body, line, command=command_line(__file__, argv))
    print("\n".join(body))
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    run_main(main)
