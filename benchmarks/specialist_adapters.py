"""Train the tool specialists: synthesize (request -> calls) pairs, then fit one adapter per agent.

``--pairs``: synthesize ``--candidates`` pairs per tool specialist (every agent whose document
says ``runner: tools``), keep the ones whose calls are decodable, run through the real toolkit and
pass their postcondition, drop near-copies of the evaluation tasks, and write
``data/demos/calls/<Agent>.jsonl`` with ``report.md``/``report.json``.
``--train``: fit a reply-only LoRA adapter per agent on its pairs into ``data/adapters/<Agent>/``
(safetensors + ``adapter.json``: backbone fingerprint, data, settings, training time).
Without either flag both run. Writes ``benchmarks/results/specialist_adapters.md``.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

from _common import RESULTS, ROOT, command_line, log, summary_line, usage_error, write_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", action="store_true", help="synthesize the pairs")
    ap.add_argument("--train", action="store_true", help="fit the adapters")
    ap.add_argument("--agents", default="", help="comma-separated agent names (default: every tool specialist)")
    ap.add_argument("--candidates", type=int, default=300, help="candidates synthesized per agent")
    ap.add_argument("--max-pairs", type=int, default=80, help="pairs trained on per agent (0: all)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs-dir", type=Path, default=ROOT / "data" / "demos" / "calls")
    ap.add_argument("--adapters-dir", type=Path, default=ROOT / "data" / "adapters")
    ap.add_argument("--quick", action="store_true", help="12 candidates, 8 pairs, 1 epoch (a smoke run)")
    ap.add_argument("--results", type=Path, default=RESULTS / "specialist_adapters.md")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.quick:
        args.candidates, args.max_pairs, args.epochs = 12, 8, 1
    both = not (args.pairs or args.train)
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    docs = [d for d in pool if d.runner == "tools"]
    if args.agents:
        wanted = [a.strip() for a in args.agents.split(",") if a.strip()]
        unknown = [a for a in wanted if a not in {d.name for d in docs}]
        if unknown:
            return usage_error(f"not a tool specialist: {', '.join(unknown)}; they are {', '.join(d.name for d in docs)}")
        docs = [d for d in docs if d.name in wanted]
    body: list[str] = []
    summary: dict[str, float | int | str | None] = {}
    if args.pairs or both:
        from agentlab.selfinstruct.calls.build import Specialist, build
        from agentlab.selfinstruct.calls.leakage import NearCopyFilter, evaluation_instructions
        from agentlab.similarity import default_encoder

        t0 = time.perf_counter()
        leak = NearCopyFilter(default_encoder(), evaluation_instructions())
        reports = build([Specialist.from_document(d) for d in docs], args.candidates, args.pairs_dir,
                        leakage=leak, seed=args.seed)
        body += (args.pairs_dir / "report.md").read_text(encoding="utf-8").splitlines()[2:]
        body += ["", f"Synthesis took {time.perf_counter() - t0:.0f} s.", ""]
        summary |= {"generated": sum(r.generated for r in reports.values()), "kept": sum(r.kept for r in reports.values()),
                    "leaked": sum(r.dropped.get("leakage", 0) for r in reports.values())}
    if args.train or both:
        from agentlab.agents.tools import ToolAgent
        from agentlab.llm import load_local
        from agentlab.selfinstruct.calls.fit import FitSettings, fit

        backend = load_local()
        settings = FitSettings(r=args.rank, alpha=2 * args.rank, lr=args.lr, epochs=args.epochs,
                               max_pairs=args.max_pairs, seed=args.seed)
        rows = []
        for d in docs:
            pairs = args.pairs_dir / f"{d.name}.jsonl"
            if not pairs.is_file():
                return usage_error(f"{pairs} is missing; synthesize the pairs first (--pairs)")
            card = fit(ToolAgent(d, d.runner_options), backend, pairs.relative_to(ROOT) if pairs.is_relative_to(ROOT)
                       else pairs, args.adapters_dir / d.name, settings)
            size = os.path.getsize(args.adapters_dir / d.name / "adapter_model.safetensors")
            rows.append(f"| {d.name} | {card.data['pairs_used']} | {card.data['prompt_tokens_mean']:.0f} | "
                        f"{' -> '.join(str(x) for x in card.metrics['loss_by_epoch'])} | {card.train_seconds:.0f} | {size / 1e6:.1f} |")
            log(rows[-1])
        body += [f"Adapters (reply-only LoRA r={args.rank} on q_proj/v_proj, {args.epochs} epochs, lr {args.lr}, "
                 f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}), backbone {backend.model_id} "
                 f"({backend.fingerprint}):", "",
                 "| agent | pairs | mean prompt tokens | mean loss per epoch | seconds | MB |", "|---|---|---|---|---|---|", *rows, ""]
        summary["adapters"] = len(rows)
    write_result(args.results, "Training the tool specialists (synthesized pairs, adapters)", body,
                 summary_line(summary), command=command_line(__file__, argv))
    log(summary_line(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
