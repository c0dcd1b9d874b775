"""Table-4 analog: routing accuracy of AgentToken, the hybrid and every baseline on both task sets, same backbone and data.

Test tasks: OSWorld single-app (268) and AppAgent (45), judged by domain (the chosen
agent's domain must equal the task's; ``agentlab.eval.metrics.routing_accuracy``): their
gold *agent* is unknown (the benchmarks label applications). The project's own set
(``data/benchmarks/routing_set_v2.jsonl``, 134 tasks written for this workbench) is judged by
domain and by agent (``agent_accuracy``), with the CLI/GUI confusion.
Training data: the pool's demonstrations plus the self-instruct data in ``data/demos``
(``load_training_set``), capped at ``--per-agent`` per agent, plus each document's requests
(``--documents``, :mod:`agentlab.metaagent.augment`), so every router sees the identical set --
never benchmark tasks (exact overlaps abort the run).

Routers (each ``route()``, i.e. what ``agentlab route`` would answer):
agenttoken (greedy decoding over V ∪ A, A's default training config), embedding (MiniLM
centroid), hybrid (AgentToken decoding with the MiniLM prior), icl (all documents in context,
generated ``###Name###``; also the answer-likelihood ranking as ``icl_rank``), lora and
prompt (peft on the frozen backbone). ICL is evaluated on a stratified subset
(``--icl-per-domain``) because every task attends over ~7,500 prompt tokens on CPU.

    python benchmarks/routing.py [--quick] [--routers agenttoken,embedding,hybrid,icl,lora,prompt]
        [--per-agent 16] [--per-domain N] [--icl-per-domain 4] [--icl-max N] [--epochs 2]
        [--no-documents] [--no-project] [--results PATH]
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

from _common import RESULTS, evenly, log, pct, stratified, summary_line, write_result

ALL = ["agenttoken", "embedding", "hybrid", "icl", "lora", "prompt"]
OSWORLD_ORDER = ["os", "calc", "impress", "writer", "vlc", "thunderbird", "chrome", "vscode", "gimp"]
APPAGENT_ORDER = ["maps", "x", "telegram", "temu", "youtube", "spotify", "yelp", "gmail", "clock"]


def build(kind: str, pool, epochs: int, cache: bool):  # type: ignore[no-untyped-def]
    """The router of ``kind`` through ``ROUTERS``: no progress bars; LoRA / prompt tuning with ``epochs``."""
    from agentlab.experiments.routing_data import ADAPTED_LM_ROUTERS
    from agentlab.metaagent.router import router_class

    if kind not in ALL:
        raise SystemExit(f"unknown router '{kind}'; choose from {', '.join(ALL)}")
    # ``cache``: reuse a trained adapter; AgentToken keeps its hidden-state cache either way.
    own = {"epochs": epochs, "use_cache": cache} if kind in ADAPTED_LM_ROUTERS else {}
    return router_class(kind)(pool, progress=False, **own)


def leak_check(train, tasks) -> None:  # type: ignore[no-untyped-def]
    seen = {t.strip().lower() for t in train.texts}
    leaks = [t.instruction for t in tasks if t.instruction.strip().lower() in seen]
    if leaks:
        raise SystemExit(f"{len(leaks)} benchmark task(s) appear verbatim in the training data, e.g. {leaks[0]!r}")


def ordered_domains(tasks) -> list[str]:  # type: ignore[no-untyped-def]
    """The tasks' domains in the paper's table order, any others after them, sorted."""
    domains = [d for d in OSWORLD_ORDER + APPAGENT_ORDER if any(t.domain == d for t in tasks)]
    return domains + sorted({t.domain for t in tasks} - set(domains))


def project_tables(cols, labels, own, pool) -> list[str]:  # type: ignore[no-untyped-def]
    """The project set: per domain, domain-level / agent-level accuracy of every router, then the CLI/GUI confusion."""
    out = [
        f"Project set (`data/benchmarks/routing_set_v2.jsonl`, {len(own)} tasks written for this workbench, gold agents "
        "known): accuracy (%) per domain as **domain-level / agent-level** (agent level: the chosen agent is one of the "
        "task's gold agents, e.g. SheetAgent vs CalcAgent is scored). ICL on a stratified subset (n in parentheses).",
        "",
        "| domain | n | " + " | ".join(labels) + " |",
        "|---|---|" + "---|" * len(labels),
    ]
    for d in ordered_domains(own):
        n = sum(t.domain == d for t in own)
        cells = []
        for lb in labels:
            p = cols[lb].get("project")
            s = None if p is None or p.agent is None else p.agent.domain.per_domain.get(d)
            a = None if s is None else p.agent.agent.per_domain[d]
            cells.append("-" if s is None else f"{pct(s.accuracy)} / {pct(a.accuracy)}" + ("" if s.total == n else f" ({s.total})"))
        out.append(f"| {d} | {n} | " + " | ".join(cells) + " |")
    cells = []
    for lb in labels:
        p = cols[lb].get("project")
        cells.append("-" if p is None or p.agent is None else f"**{pct(p.agent.domain.accuracy)} / {pct(p.agent.accuracy)}**")
    out.append("| **all** | | " + " | ".join(cells) + " |")
    out += [
        "",
        "| router | tasks | domain % | agent % | gold CLI -> GUI agent | gold GUI -> CLI agent | right domain, wrong interface |",
        "|---|---|---|---|---|---|---|",
    ]
    for lb in labels:
        p = cols[lb].get("project")
        if p is None or p.agent is None:
            continue
        r, c = p.agent, p.agent.interface.counts
        out.append(f"| {lb} | {r.agent.overall.total} | {pct(r.domain.accuracy)} | {pct(r.accuracy)} | {c['CLI']['GUI']} | "
                   f"{c['GUI']['CLI']} | {r.interface.right_domain_wrong_interface} |")
    return out


def main(argv: list[str] | None = None) -> dict[str, float | None]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 task/domain, 4 demos/agent, 1 epoch, 6 ICL tasks")
    ap.add_argument("--routers", default=",".join(ALL))
    ap.add_argument("--per-agent", type=int, default=None, help="training examples per agent (default 16; quick 4)")
    ap.add_argument("--per-domain", type=int, default=None, help="test tasks per domain (default all; quick 2)")
    ap.add_argument("--icl-per-domain", type=int, default=None, help="ICL test tasks per domain (default 4; quick 1)")
    ap.add_argument("--icl-max", type=int, default=None, help="at most this many ICL test tasks (quick 6)")
    ap.add_argument("--epochs", type=int, default=None, help="LoRA / prompt-tuning epochs (default 2; quick 1)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many test tasks (smoke tests)")
    ap.add_argument("--all-data", action=argparse.BooleanOptionalAction, default=None,
                    help="also train agenttoken/embedding on ALL demonstrations (default: on unless --quick)")
    ap.add_argument("--no-cache", action="store_true", help="retrain LoRA / prompt tuning even if a trained adapter is cached")
    ap.add_argument("--documents", action=argparse.BooleanOptionalAction, default=True,
                    help="add every document's requests to the training data (agentlab.metaagent.augment)")
    ap.add_argument("--project", action=argparse.BooleanOptionalAction, default=None,
                    help="also route the project's own set, by domain and by agent (default: on unless --quick)")
    ap.add_argument("--ablation", choices=["none", "table", "seed"], default="none",
                    help="also run the AgentToken ablation (agentlab.experiments.router_ablation) on the table's "
                         "training data without document requests ('table') or on the seed demonstrations ('seed')")
    ap.add_argument("--results", type=Path, default=RESULTS / "routing.md")
    args = ap.parse_args(argv)
    q = args.quick
    per_agent = args.per_agent if args.per_agent is not None else (4 if q else 16)
    per_domain = args.per_domain if args.per_domain is not None else (1 if q else None)
    icl_max = args.icl_max if args.icl_max is not None else (6 if q else None)
    icl_per_domain = args.icl_per_domain if args.icl_per_domain is not None else (1 if q else 4)
    epochs = args.epochs if args.epochs is not None else (1 if q else 2)
    all_data = args.all_data if args.all_data is not None else not q
    routers = [r.strip() for r in args.routers.split(",") if r.strip()]

    from agentlab.eval.benchmarks import load_appagent, load_osworld, load_project_set
    from agentlab.eval.metrics import routing_accuracy
    from agentlab.experiments.routing_table import measure_router, score_set
    from agentlab.metaagent.augment import add_document_requests
    from agentlab.metaagent.data import load_training_set
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    tasks = stratified(load_osworld(), per_domain) + stratified(load_appagent(), per_domain)
    if args.limit:
        tasks = tasks[: args.limit]
    project = args.project if args.project is not None else not q
    own = stratified(load_project_set(), per_domain) if project else []
    if args.limit:
        own = own[: args.limit]

    def data_for(n: int | None):  # type: ignore[no-untyped-def]
        ts = load_training_set(pool, per_agent=n, seed=0)
        ts = add_document_requests(ts, pool) if args.documents else ts
        leak_check(ts, tasks + own)
        return ts

    train = data_for(per_agent)
    log(f"{len(tasks)} test tasks + {len(own)} project tasks; {len(train)} training examples "
        f"({per_agent} per agent at most{', plus document requests' if args.documents else ''})")

    runs: list[tuple[str, str, object]] = [(r, r, train) for r in routers]
    if all_data:
        full = data_for(None)
        runs += [(f"{r}@all", r, full) for r in ("agenttoken", "embedding", "hybrid") if r in routers]

    cols: dict[str, dict[str, object]] = {}
    for label, kind, data in runs:
        router = build(kind, pool, epochs, cache=not args.no_cache)
        evaluated = evenly(stratified(tasks, icl_per_domain), icl_max) if kind == "icl" else tasks
        m = measure_router(router, data, evaluated, pool)
        res, rep = m.results, m.report
        pred = [r.agent for r in res]
        gold = [t.domain for t in evaluated]
        col: dict[str, object] = {
            "report": rep,
            "n": len(evaluated),
            "train_n": len(data),  # type: ignore[arg-type]
            "fit_s": float(m.fit_metrics.get("seconds", m.cost.seconds)),
            "cached": bool(m.fit_metrics.get("cached")),
            "per_task_s": m.route_seconds_per_task,
            "warnings": sum(r.agent is not None and r.error is not None for r in res),
        }
        for bench in ("osworld", "appagent"):
            idx = [i for i, t in enumerate(evaluated) if t.benchmark == bench]
            if idx:
                col[bench] = routing_accuracy([pred[i] for i in idx], [gold[i] for i in idx], pool).accuracy
        if own:
            own_eval = evenly(stratified(own, icl_per_domain), icl_max) if kind == "icl" else own
            col["project"] = score_set(router, own_eval, pool)
        if kind == "icl":
            top = [r.ranking[0][0] if r.ranking else None for r in res]
            col["rank_acc"] = routing_accuracy(top, gold, pool).accuracy
            col["strict"] = sum(r.agent is not None and r.error is None for r in res) / max(len(res), 1)
            col["prompt_tokens"] = len(router.prefix_ids)  # type: ignore[attr-defined]
            col["demos"] = router.demos_used  # type: ignore[attr-defined]
        cols[label] = col
        log(
            f"{label}: acc {rep.accuracy:.3f} on {len(evaluated)} tasks (failures {rep.failures}); "
            f"fit {col['fit_s']:.1f}s{' (cached)' if col['cached'] else ''}, {col['per_task_s']:.2f}s/task"
        )
        del router
        gc.collect()

    # ------------------------------------------------------------------ report
    labels = list(cols)
    body = [
        f"Test tasks: {len(tasks)} ({sum(t.benchmark == 'osworld' for t in tasks)} OSWorld single-app, "
        f"{sum(t.benchmark == 'appagent' for t in tasks)} AppAgent), judged by domain. Training: "
        f"{len(train)} demonstrations ({per_agent} per agent at most: seeds first, then self-instruct), "
        f"identical for every router; `@all` rows use all {len(full) if all_data else '-'} demonstrations"
        f"{' (both with every document' + chr(39) + 's requests)' if args.documents else ''}. "
        f"LoRA / prompt tuning: {epochs} epoch(s). Backbone: embedded SmolLM2-135M-Instruct (CPU).",
        "",
        "Routing accuracy (%) per domain; ICL on a stratified subset (n per cell in parentheses where it differs).",
        "",
        "| domain | n | " + " | ".join(labels) + " |",
        "|---|---|" + "---|" * len(labels),
    ]
    for d in ordered_domains(tasks):
        n = sum(t.domain == d for t in tasks)
        cells = []
        for lb in labels:
            s = cols[lb]["report"].per_domain.get(d)  # type: ignore[attr-defined]
            cells.append("-" if s is None else pct(s.accuracy) + ("" if s.total == n else f" ({s.total})"))
        body.append(f"| {d} | {n} | " + " | ".join(cells) + " |")
    for bench, name in (("osworld", "OSWorld"), ("appagent", "AppAgent")):
        body.append(f"| **{name}** | | " + " | ".join(pct(cols[lb].get(bench)) for lb in labels) + " |")  # type: ignore[arg-type]
    body.append("| **all** | | " + " | ".join(f"**{pct(cols[lb]['report'].accuracy)}**" for lb in labels) + " |")  # type: ignore[attr-defined]
    body += [
        "",
        "| router | tasks | train examples | fit s | route s/task | no agent | warnings |",
        "|---|---|---|---|---|---|---|",
    ]
    for lb in labels:
        c = cols[lb]
        body.append(
            f"| {lb} | {c['n']} | {c['train_n']} | {c['fit_s']:.1f}{' (cached adapter)' if c['cached'] else ''} | "
            f"{c['per_task_s']:.2f} | {c['report'].failures} | {c['warnings']} |"  # type: ignore[attr-defined]
        )
    if "icl" in cols:
        c = cols["icl"]
        body += [
            "",
            f"ICL: {c['prompt_tokens']} prompt tokens for {len(pool)} documents with {c['demos']} demonstration(s) each "
            f"(more do not fit the 8,192-token context with room for the task). Strict `###Name###` answers naming a "
            f"pool agent: {pct(c['strict'])}%; accuracy of the answer-likelihood ranking's top-1 (`icl_rank`): "
            f"{pct(c['rank_acc'])}%.",  # type: ignore[arg-type]
        ]
    body += [
        "",
        "fit s: wall time of `fit()` in this run, or of the original training when a cached adapter was reused. "
        "route s/task: wall time of `route()` divided by tasks. Machine shared with other jobs: times are indicative.",
    ]
    if own:
        body += ["", *project_tables(cols, labels, own, pool)]
    if args.ablation != "none":
        from agentlab.experiments import router_ablation

        base = load_training_set(pool, per_agent=per_agent, seed=0) if args.ablation == "table" else load_training_set(pool, source="seed")
        sets = {"313": tasks, "project": own} if own else {"313": tasks}
        ablation = router_ablation.run(pool, base, sets)
        body += [
            "",
            f"### Ablation: each change side by side ({len(base)} base examples: "
            f"{'the table' + chr(39) + 's sample, without document requests' if args.ablation == 'table' else 'seed demonstrations only'})",
            "",
            "Each AgentToken change alone, then the encoder and the hybrid; `313`: the benchmark tasks (domain level), "
            "`project`: the project set. temperature: the calibrated AgentToken temperature (1.00 = not calibrated).",
            "",
            *router_ablation.table(ablation, list(sets)),
        ]
    summary = {lb.replace("@", "_"): cols[lb]["report"].accuracy for lb in labels}  # type: ignore[attr-defined]
    for lb in labels:
        if "project" in cols[lb]:
            p = cols[lb]["project"]
            summary[f"{lb.replace('@', '_')}_v2_domain"] = p.domain.accuracy  # type: ignore[attr-defined]
            summary[f"{lb.replace('@', '_')}_v2_agent"] = p.agent.accuracy if p.agent else None  # type: ignore[attr-defined]
    if "icl" in cols:
        summary["icl_rank"] = cols["icl"]["rank_acc"]  # type: ignore[assignment]
    head = {k: summary.get(k) for k in ALL if k in summary}
    line = summary_line({**head, **{k: v for k, v in summary.items() if k not in head}})
    write_result(args.results, "Routing accuracy per domain (Table-4 analog)", body, line)
    print("\n".join(body))
    print(line, flush=True)
    return summary


if __name__ == "__main__":
    main()
