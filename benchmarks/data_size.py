"""Figure-5 analog: routing accuracy as demonstrations per agent grow, and filtered vs unfiltered data.

Test tasks: OSWorld single-app (268) + AppAgent (45), judged by domain (metrics in
``agentlab.eval.metrics``). Training data per agent:

- sizes 10 (the first 10 hand-written seeds), 25, 50, 100: seeds first, then self-instructed
  demonstrations from ``data/demos`` (``load_training_set(per_agent=N)``); an agent with fewer
  than N demonstrations contributes what it has, and the table shows the mean actually used;
- filtered vs unfiltered at the same size: all seeds plus k generated demonstrations per agent,
  k the same in both arms: the first k accepted by Algorithm 1, or the first k parsed,
  non-leaking candidates in generation order regardless of the filter (from
  ``data/demos/candidates``).

Routers: the embedding baseline (MiniLM nearest centroid) and AgentToken (agent tokens on the
frozen SmolLM2-135M, default training config), each trained from scratch per row.

    python benchmarks/data_size.py [--quick] [--routers embedding,agenttoken]

Writes ``benchmarks/results/data_size.md``; ends with one ``key=value`` summary line.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from _common import RESULTS, ROOT, command_line, summary_line

from agentlab.fileio import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="embedding router only, sizes 10 and 25")
    ap.add_argument("--routers", default="embedding,agenttoken")
    ap.add_argument("--demos", type=Path, default=ROOT / "data" / "demos")
    ap.add_argument("--results", type=Path, default=RESULTS / "data_size.md")
    args = ap.parse_args(argv)
    routers = ["embedding"] if args.quick else [r.strip() for r in args.routers.split(",") if r.strip()]
    sizes = [10, 25] if args.quick else [10, 25, 50, 100]

    from agentlab.eval.benchmarks import load_appagent, load_osworld
    from agentlab.experiments import data_size
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    tasks = load_osworld() + load_appagent()
    cmd = command_line(__file__, argv)
    out = [
        "## Data size and the BERTScore filter (Figure-5 analog)",
        "",
        f"Command: `{cmd}`. Test: {len(tasks)} single-app tasks (OSWorld + AppAgent), accuracy by domain "
        "(overall / macro over domains). Training data from `data/demos`.",
        "",
        "| demos per agent (target) | mean used | " + " | ".join(f"{r} acc / macro" for r in routers) + " |",
        "|---|---|" + "---|" * len(routers),
    ]
    summary: dict[str, float] = {}
    config = data_size.DataSizeConfig(routers=routers, sizes=sizes, decide="rank", demos=args.demos, source="all", seed=0)
    result = data_size.run(pool, tasks, config)
    for n in sizes:
        points = [p for p in result.points if p.size == n]
        for p in points:
            summary[f"{p.router}_{n}"] = p.accuracy
        cells = [f"{p.accuracy:.1%} / {p.report.macro_accuracy:.1%}" for p in points]
        out.append(f"| {n}{' (seeds only)' if n == 10 else ''} | {points[0].mean_used:.1f} | " + " | ".join(cells) + " |")

    sets, ks = data_size.equal_size_sets(pool, args.demos)
    k_mean = sum(ks.values()) / len(ks)
    out += [
        "",
        f"Filtered vs unfiltered at equal size: all seeds + k generated per agent (k = min(accepted, available "
        f"unfiltered) per agent; mean k {k_mean:.1f}, total {len(sets['filtered'])} examples per arm).",
        "",
        "| training data | " + " | ".join(f"{r} acc / macro" for r in routers) + " |",
        "|---|" + "---|" * len(routers),
    ]
    for arm in ("filtered", "unfiltered"):
        cells = []
        for r in routers:
            rep, secs = data_size.evaluate(r, pool, sets[arm], tasks, decide="rank")
            cells.append(f"{rep.accuracy:.1%} / {rep.macro_accuracy:.1%}")
            summary[f"{r}_{arm}"] = rep.accuracy
            print(f"{arm} {r}: {rep.accuracy:.3f} macro {rep.macro_accuracy:.3f} ({secs:.0f} s)", flush=True)
        out.append(f"| seeds + k {'accepted by Algorithm 1' if arm == 'filtered' else 'unfiltered candidates'} | " + " | ".join(cells) + " |")
    text = "\n".join(out) + "\n"
    atomic_write_text(args.results, text)
    print(text)
    print(summary_line(summary), flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("agentlab.experiments").setLevel(logging.INFO)  # one line per trained router
    sys.exit(main())
