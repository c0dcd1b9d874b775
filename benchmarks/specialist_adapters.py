"""Train the tool specialists: synthesize (request -> calls) pairs, then fit one adapter per agent.

``--pairs``: synthesize ``--candidates`` pairs per tool specialist (every agent whose document
says ``runner: tools``), keep the ones whose calls are decodable, run through the real toolkit and
pass their postcondition, drop near-copies of the evaluation tasks, and write
``data/demos/calls/<Agent>.jsonl`` with ``report.md``/``report.json``.
``--train``: fit a reply-only LoRA adapter per agent on its pairs into ``data/adapters/<Agent>/``
(safetensors + ``adapter.json``: backbone fingerprint, data, settings, training time).
Without either flag both run; ``--report-only`` runs neither. Writes
``benchmarks/results/specialist_adapters.md`` from what is on disk (``--quick``: a smoke run under
``runs/specialist_adapters_quick/``, never over the shipped pairs and adapters).
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, ROOT, command_line, log, summary_line, usage_error, write_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", action="store_true", help="synthesize the pairs")
    ap.add_argument("--train", action="store_true", help="fit the adapters")
    ap.add_argument("--priors", action="store_true", help="fit the tool priors (seconds; also part of --train)")
    ap.add_argument("--priors-dir", type=Path, default=ROOT / "data" / "tool_priors")
    ap.add_argument("--prior-max-cosine", type=float, default=0.8,
                    help="fit the priors only on pairs at most this close (MiniLM cosine) to any evaluation instruction")
    ap.add_argument("--agents", default="", help="comma-separated agent names (default: every tool specialist)")
    ap.add_argument("--candidates", type=int, default=300, help="candidates synthesized per agent")
    ap.add_argument("--two-ops", type=int, default=0,
                    help="candidates per agent asking for two operations (two drafts joined, both checked)")
    ap.add_argument("--two-share", type=float, default=0.4, help="share of the trained pairs that ask for two operations")
    ap.add_argument("--max-pairs", type=int, default=48, help="pairs trained on per agent (0: all)")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--accumulate", type=int, default=2, help="examples per optimiser step")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs-dir", type=Path, default=ROOT / "data" / "demos" / "calls")
    ap.add_argument("--adapters-dir", type=Path, default=ROOT / "data" / "adapters")
    ap.add_argument("--validate", type=int, default=0,
                    help="also decode N synthesized pairs per agent not trained on, with and without its adapter")
    ap.add_argument("--report-only", action="store_true", help="write the results from the pairs and adapters on disk")
    ap.add_argument("--quick", action="store_true", help="12 candidates, 8 pairs, 1 epoch (a smoke run)")
    ap.add_argument("--results", type=Path, default=RESULTS / "specialist_adapters.md")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.quick:  # a smoke run: never over the shipped pairs, adapters or results
        args.candidates, args.max_pairs, args.epochs, args.two_ops = 12, 8, 1, 6
        quick = ROOT / "runs" / "specialist_adapters_quick"
        if args.pairs_dir == ROOT / "data" / "demos" / "calls":
            args.pairs_dir = quick / "calls"
        if args.adapters_dir == ROOT / "data" / "adapters":
            args.adapters_dir = quick / "adapters"
        if args.priors_dir == ROOT / "data" / "tool_priors":
            args.priors_dir = quick / "tool_priors"
        if args.results == RESULTS / "specialist_adapters.md":
            args.results = quick / "specialist_adapters.md"
    both = not (args.pairs or args.train or args.priors or args.report_only)
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    docs = [d for d in pool if d.runner == "tools"]
    if args.agents:
        wanted = [a.strip() for a in args.agents.split(",") if a.strip()]
        unknown = [a for a in wanted if a not in {d.name for d in docs}]
        if unknown:
            return usage_error(f"not a tool specialist: {', '.join(unknown)}; they are {', '.join(d.name for d in docs)}")
        docs = [d for d in docs if d.name in wanted]
    from agentlab.selfinstruct.calls.build import DOMAINS, Specialist

    # only a toolkit with request generators can be synthesized for (every shipped toolkit has them;
    # a toolkit added without them runs on the prompt alone until it gets some)
    kits = {d.name: Specialist.from_document(d).kit.name for d in docs}
    without = sorted(n for n, k in kits.items() if k not in DOMAINS)
    if without and args.agents:
        return usage_error(f"no request generators for the toolkit of {', '.join(without)}; "
                           f"synthesis covers {', '.join(sorted(DOMAINS))}")
    if without:
        log(f"left out (no request generators for their toolkit): {', '.join(without)}")
    docs = [d for d in docs if kits[d.name] in DOMAINS]
    summary: dict[str, float | int | str | None] = {}
    if args.pairs or both:
        from agentlab.selfinstruct.calls.build import build
        from agentlab.selfinstruct.calls.leakage import NearCopyFilter, evaluation_instructions
        from agentlab.llm.similarity import default_encoder

        t0 = time.perf_counter()
        leak = NearCopyFilter(default_encoder(), evaluation_instructions())
        build([Specialist.from_document(d) for d in docs], args.candidates, args.pairs_dir, leakage=leak, seed=args.seed,
              two_ops=args.two_ops)
        log(f"synthesis took {time.perf_counter() - t0:.0f} s")
    if args.train or both:
        from agentlab.agents.tools import ToolAgent
        from agentlab.llm import load_local
        from agentlab.selfinstruct.calls.fit import FitSettings, fit

        backend = load_local()
        settings = FitSettings(r=args.rank, alpha=2 * args.rank, lr=args.lr, epochs=args.epochs,
                               max_pairs=args.max_pairs, accumulate=args.accumulate, seed=args.seed,
                               two_share=args.two_share)
        for d in docs:
            pairs = args.pairs_dir / f"{d.name}.jsonl"
            if not pairs.is_file():
                return usage_error(f"{pairs} is missing; synthesize the pairs first (--pairs)")
            card = fit(ToolAgent(d, d.runner_options), backend, pairs.relative_to(ROOT) if pairs.is_relative_to(ROOT)
                       else pairs, args.adapters_dir / d.name, settings)
            log(f"{d.name}: loss by epoch {card.metrics['loss_by_epoch']}, {card.train_seconds:.0f} s")
    if args.priors or args.train or both:
        from agentlab.selfinstruct.calls.prior import fit_priors
        from agentlab.llm.similarity import default_encoder

        fit_priors(args.pairs_dir, args.priors_dir, [d.name for d in docs], default_encoder(),
                   max_cosine=args.prior_max_cosine)
    body, summary = report(args.pairs_dir, args.adapters_dir, [d.name for d in docs])
    body += priors_report(args.priors_dir, [d.name for d in docs], summary)
    if args.validate:
        body += validate(docs, args.pairs_dir, args.adapters_dir, args.validate, summary)
    made = ("" if not args.report_only else " (this report reads the pairs and adapters on disk, made with this "
            "script's defaults: `OMP_NUM_THREADS=1 python benchmarks/specialist_adapters.py --pairs`, then `--train`)")
    write_result(args.results, "Training the tool specialists (synthesized pairs, adapters)", body,
                 summary_line(summary), command=command_line(__file__, argv), note=made)
    log(summary_line(summary))
    return 0


def priors_report(priors_dir: Path, agents: list[str], summary: dict[str, float | int | str | None]) -> list[str]:
    """The tool priors' cards (:mod:`agentlab.toolkits.prior`) as a table."""
    from agentlab.toolkits.prior import ToolPrior

    rows = ["| agent | tools | pairs fitted | left out (near an evaluation instruction) | training accuracy | seconds |",
            "|---|---|---|---|---|---|"]
    cut = None
    for name in agents:
        if not (priors_dir / name).is_dir():
            continue
        card = ToolPrior.load(priors_dir / name).card
        cut = card.get("max_cosine", cut)
        rows.append(f"| {name} | {len(card.get('counts', {}))} | {card['examples']} | {card.get('left_out_near_evaluation', '')} "
                    f"| {100 * card['train_accuracy']:.1f} % | {card.get('train_seconds', '')} |")
    if len(rows) == 2:
        return []
    summary["priors"] = len(rows) - 2
    return ["Tool priors (multinomial logistic regression of the first call's tool on the request's MiniLM "
            f"embedding, L2 1e-3, on the agent's kept pairs at most {cut} MiniLM cosine from every evaluation "
            "instruction; `data/tool_priors/<Agent>/`):", "", *rows, ""]


def validate(docs: list[Any], pairs_dir: Path, adapters_dir: Path, n: int,
             summary: dict[str, float | int | str | None]) -> list[str]:
    """Exact-match of the greedy constrained reply on ``n`` unseen synthesized pairs per agent,
    with the agent's adapter and without (:mod:`agentlab.selfinstruct.calls.validate`)."""
    import random

    from agentlab.agents.tools import ToolAgent
    from agentlab.fileio import read_jsonl
    from agentlab.llm import load_local
    from agentlab.llm.adapters import AdapterCard, with_adapter
    from agentlab.selfinstruct.calls.fit import choose
    from agentlab.selfinstruct.calls.validate import exact_match

    backend = load_local()
    rows = ["| agent | unseen pairs | exact calls, adapter | exact calls, none |", "|---|---|---|---|"]
    both = [0.0, 0.0]
    for d in docs:
        card = AdapterCard.read(adapters_dir / d.name)
        pairs = read_jsonl(pairs_dir / f"{d.name}.jsonl")
        used = {(p["family"], p["seed"]) for p in choose(pairs, card.settings["max_pairs"], card.settings["seed"])}
        unseen = [p for p in pairs if (p["family"], p["seed"]) not in used]
        sample = random.Random(0).sample(unseen, min(n, len(unseen)))
        agent = ToolAgent(d, d.runner_options)
        adapted, why = with_adapter(backend, adapters_dir / d.name, d.name)
        if adapted is None:
            raise SystemExit(why)
        with_a, without = exact_match(agent, adapted, sample), exact_match(agent, backend, sample)
        both[0] += with_a * len(sample) / (n * len(docs))
        both[1] += without * len(sample) / (n * len(docs))
        rows.append(f"| {d.name} | {len(sample)} | {100 * with_a:.0f} % | {100 * without:.0f} % |")
        log(rows[-1])
    summary |= {"unseen_exact_adapter": round(both[0], 4), "unseen_exact_none": round(both[1], 4)}
    return [f"Synthesized pairs not trained on ({n} per agent, greedy, the episode's call grammar): share whose "
            "calls equal the target's (a diagnostic of the synthesized distribution, not of the tasks):", "", *rows, ""]


def report(pairs_dir: Path, adapters_dir: Path, agents: list[str]) -> tuple[list[str], dict[str, float | int | str | None]]:
    """The results body from what is on disk: the pairs report and each adapter's card (so a
    ``--report-only`` run, or one step alone, still shows both)."""
    import json

    from agentlab.llm.adapters import AdapterCard

    body: list[str] = []
    summary: dict[str, float | int | str | None] = {}
    if (pairs_dir / "report.json").is_file():
        meta = json.loads((pairs_dir / "report.json").read_text(encoding="utf-8"))
        body += (pairs_dir / "report.md").read_text(encoding="utf-8").splitlines()[2:] + [""]
        summary |= {"generated": sum(r["generated"] for r in meta["agents"].values()),
                    "kept": sum(r["kept"] for r in meta["agents"].values()),
                    "leaked": sum(r["dropped"]["leakage"] for r in meta["agents"].values())}
    cards = [(a, AdapterCard.read(adapters_dir / a)) for a in agents if (adapters_dir / a / "adapter.json").is_file()]
    if cards:
        first = cards[0][1]
        st = first.settings
        body += [f"Adapters (reply-only LoRA r={st['r']} on {'/'.join(st['targets'])}, {st['epochs']} epochs, lr {st['lr']}, "
                 f"{st['accumulate']} examples per step, {st['max_pairs']} pairs per agent spread over its tools), backbone "
                 f"{first.backbone} ({first.fingerprint}); seconds on one thread of the shared 2-core machine:", "",
                 "| agent | pairs | mean prompt tokens | mean reply tokens | mean loss per epoch | seconds | MB |",
                 "|---|---|---|---|---|---|---|"]
        for a, c in cards:
            size = os.path.getsize(adapters_dir / a / "adapter_model.safetensors") / 1e6
            body.append(f"| {a} | {c.data['pairs_used']} | {c.data['prompt_tokens_mean']:.0f} | {c.data['reply_tokens_mean']:.0f} | "
                        f"{' -> '.join(str(x) for x in c.metrics['loss_by_epoch'])} | {c.train_seconds:.0f} | {size:.1f} |")
        body.append("")
        summary |= {"adapters": len(cards), "train_s": round(sum(c.train_seconds for _, c in cards))}
    return body, summary


if __name__ == "__main__":
    raise SystemExit(main())
