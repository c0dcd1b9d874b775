"""AgentToken tuning: which hidden state, prompt, initialisation and bias make AgentToken route well.

The driver of :mod:`agentlab.experiments.tuning` (the study, with its evaluation and data, is
described there and in ``benchmarks/results/agenttoken_tuning.md``). Logs every row as JSON while
it runs, optionally writes all rows as JSON (``--out``) and as a Markdown table (``--md``), and ends with
one ``key=value`` summary line.

    python benchmarks/agenttoken_tuning.py [--quick] [--templates T ...] [--chat 0 1] [--source seed|all|generated]
        [--per-agent N] [--grid quick|train|full] [--out rows.json] [--md rows.md]

``--heldout`` runs :mod:`agentlab.experiments.heldout_demos` instead: AgentToken settings (the default
and the shrinkage-discriminant rows of ``TrainConfig.preset("lda")`` at several shrinkages) trained on
the routing table's data (``--train table``: 16 per agent + document requests, as ``benchmarks/routing.py``)
or on the seed demonstrations (``--train seed``, the shipped tokens' data) and judged on held-out
self-instruct demonstrations; writes ``benchmarks/results/routing_heldout_<backbone>_<train>.md``:

    python benchmarks/agenttoken_tuning.py --heldout [--train table|seed] [--backbone NAME] [--results PATH]
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
    ap.add_argument("--heldout", action="store_true", help="judge AgentToken settings on held-out demonstrations")
    ap.add_argument("--train", default="table", choices=["table", "seed"], help="with --heldout: the training data")
    ap.add_argument("--backbone", default=None, help="with --heldout: smollm2-135m-instruct | gemma3-270m (default: configured)")
    ap.add_argument("--results", type=Path, default=None, help="with --heldout: results file")
    args = ap.parse_args(argv)
    if args.heldout:
        return heldout(args, argv)

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


def heldout(args: argparse.Namespace, argv: list[str] | None) -> int:
    """The ``--heldout`` study (see the module doc)."""
    from _common import RESULTS, command_line, write_result
    from routing import backbone_config, backbone_slug

    from agentlab.experiments import heldout_demos
    from agentlab.experiments.routing_data import benchmark_data
    from agentlab.metaagent.data import load_training_set
    from agentlab.metaagent.train import TrainConfig
    from agentlab.pool import AgentPool

    llm = backbone_config(args.backbone)
    pool = AgentPool.from_dir()
    table = benchmark_data(pool, per_agent=16, documents=True, project=False).train
    _, held = heldout_demos.heldout_split(pool, table)  # never drawn into the table's data
    train = table if args.train == "table" else load_training_set(pool, source="seed")
    lda = TrainConfig.preset("lda")
    settings = {
        "default (name_mean, lr 1e-2, 40 epochs)": TrainConfig(),
        "lda, shrinkage 0.3": lda.model_copy(update={"shrinkage": 0.3}),
        "**lda, shrinkage 0.5 (preset lda: no gradient steps)**": lda,
        "lda, shrinkage 0.7": lda.model_copy(update={"shrinkage": 0.7}),
        "lda, shrinkage 0.5, then 5 epochs at lr 1e-3": lda.model_copy(update={"epochs": 5}),
        "lda, shrinkage 0.5, then 20 epochs at lr 1e-3": lda.model_copy(update={"epochs": 20}),
    }
    if args.quick:
        settings = dict(list(settings.items())[:3])
    rows = heldout_demos.run(pool, train, held, settings, llm=llm)
    slug = backbone_slug(llm)
    body = heldout_demos.markdown(rows, train_examples=len(train), backbone=f"`{llm.model}`")
    values = {r.name.strip("*").split(" (")[0].replace(", then ", "_").replace(", ", "_").replace(" ", "_").replace(".", ""): r.agent_acc
              for r in rows}
    line = summary_line(values)
    write_result(args.results or RESULTS / f"routing_heldout_{slug}_{args.train}.md",
                 f"AgentToken settings on held-out demonstrations -- {slug}, {args.train} data", body, line,
                 command=command_line(__file__, argv))
    print("\n".join(body))
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("agentlab.experiments").setLevel(logging.INFO)  # the reference, then every row as JSON
    sys.exit(main())
