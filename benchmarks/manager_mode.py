"""HashManager mode (hash-manager plans, not executed): AgentMatch and top-K recall on OSWorld multi-app tasks.

Gold: each ``multi_apps`` task's ``related_apps`` mapped to our domains
(``load_osworld(multi=True)``, 2-4 domains per task). Both methods use the same manager
prompt (``data/prompts/metaagent/manager.txt``, Appendix G.3 structure) on the same backbone:

- AgentToken (shipped tokens): the top-K agents by agent-token probability, only their
  documents in the manager prompt (``Router.plan``; K=5 default).
- ICL: every document in the manager prompt (the paper's ICL manager; ``ICLRouter.plan``),
  with as many demonstrations per document as fit the context (room kept for the answer
  and one retry); its top-K recall comes from the ICL answer-likelihood ranking. Documents
  are in pool order so their key/value cache is computed once for all tasks.

AgentMatch: the set of domains of the plan's agents equals the gold set. Top-K recall: the
fraction of gold domains among the top-K ranked agents' domains. SubtaskAcc needs gold
subtasks, which OSWorld's multi-app tasks do not have, so it is not reported here.

    python benchmarks/manager_mode.py [--quick] [--tasks 12] [--k 5] [--max-new-tokens 128] [--results PATH]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from _common import RESULTS, evenly, log, pct, summary_line, write_result

def main(argv: list[str] | None = None) -> dict[str, float | None]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 tasks")
    ap.add_argument("--tasks", type=int, default=None, help="multi-app tasks, spread over the list (default 12; quick 2)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-new-tokens", type=int, default=128, help="manager answer budget (both methods)")
    ap.add_argument("--methods", default="agenttoken,icl")
    ap.add_argument("--tokens", type=Path, default=None, help="AgentToken checkpoint (default: shipped data/tokens)")
    ap.add_argument("--results", type=Path, default=RESULTS / "manager_mode.md")
    args = ap.parse_args(argv)
    n_tasks = args.tasks if args.tasks is not None else (2 if args.quick else 12)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]

    from agentlab.eval.benchmarks import load_osworld
    from agentlab.eval.metrics import agent_match, topk_recall
    from agentlab.llm import load_local
    from agentlab.metaagent.manager import HashManager
    from agentlab.metaagent.router import router_class
    from agentlab.paths import data_dir
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    backend = load_local()
    tasks = evenly(load_osworld(multi=True), n_tasks)
    texts, gold = [t.instruction for t in tasks], [list(t.domains) for t in tasks]
    log(f"{len(tasks)} multi-app tasks; gold domains per task: {statistics.mean(len(g) for g in gold):.1f} on average")

    rows: dict[str, dict[str, object]] = {}
    for method in methods:
        if method not in ("agenttoken", "icl"):
            raise SystemExit(f"unknown method '{method}' (agenttoken, icl)")
        t0 = time.perf_counter()
        cls = router_class(method)
        # AgentToken routes with trained tokens (the shipped ones by default); ICL trains nothing.
        if method == "agenttoken":
            router = cls.load(args.tokens or (data_dir() / "tokens"), pool, progress=False)  # type: ignore[call-arg]
        else:
            router = cls(pool, progress=False)
        manager = HashManager(backend, max_new_tokens=args.max_new_tokens)
        results = router.plan(texts, manager, k=args.k)
        rankings = [[n for n, _ in r.ranking] for r in results]
        used = router.manager_for(manager)
        if router.manager_uses_all_documents:
            docs_note = f"all {len(pool)}"
            prompts = [used.prompt(t, list(pool.agents)) for t in texts]
        else:
            docs_note = f"top-{args.k}"
            prompts = [used.prompt(t, [pool.get(n) for n in rk[: args.k]]) for t, rk in zip(texts, rankings)]
        tokens = statistics.mean(backend.count_tokens(p) for p in prompts)
        demos = used.max_demos
        secs = (time.perf_counter() - t0) / len(tasks)
        plans = [[s.agent for s in r.plan] for r in results]
        row: dict[str, object] = {
            "docs": docs_note,
            "demos": demos,
            "tokens": tokens,
            "agent_match": agent_match(plans, gold, pool).accuracy,
            "failures": sum(r.agent is None for r in results),
            "s_per_task": secs,
            "example": next((r.raw for r in results if r.raw), None),
        }
        for k in sorted({2, 3, args.k}):
            row[f"top{k}"] = topk_recall(rankings, gold, pool, k)
        rows[method] = row
        log(f"{method}: AgentMatch {row['agent_match']:.3f}, top-{args.k} recall {row[f'top{args.k}']:.3f}, "
            f"failures {row['failures']}, {secs:.1f} s/task")

    ks = sorted({2, 3, args.k})
    body = [
        f"{len(tasks)} OSWorld multi-app tasks (of {len(load_osworld(multi=True))}, spread over the list), gold = related "
        f"apps mapped to domains. Same manager prompt, backbone (SmolLM2-135M) and answer budget "
        f"({args.max_new_tokens} new tokens, one corrective retry) for both methods.",
        "",
        "| method | documents in prompt | demos/doc | prompt tokens (mean) | AgentMatch % | "
        + " | ".join(f"top-{k} recall %" for k in ks)
        + " | manager failures | s/task |",
        "|---|---|---|---|---|" + "---|" * len(ks) + "---|---|",
    ]
    for m, r in rows.items():
        body.append(
            f"| {m} | {r['docs']} | {r['demos']} | {r['tokens']:.0f} | {pct(r['agent_match'])} | "  # type: ignore[str-format]
            + " | ".join(pct(r[f"top{k}"]) for k in ks)  # type: ignore[arg-type]
            + f" | {r['failures']} | {r['s_per_task']:.1f} |"
        )
    body += [
        "",
        "A manager failure is an answer that stayed unusable after the corrective retry (no `###Agent: subtask###` "
        "line, unknown agent, or the same agent twice in a row); it counts as a miss for AgentMatch.",
    ]
    for m, r in rows.items():
        if r["example"]:
            body += ["", f"Example {m} manager answer (first task with output):", "", "```", str(r["example"]).strip()[:600], "```"]
    values: dict[str, float | None] = {}
    for m, r in rows.items():
        values[f"{m}_agentmatch"] = r["agent_match"]  # type: ignore[assignment]
        values[f"{m}_top{args.k}_recall"] = r[f"top{args.k}"]  # type: ignore[assignment]
        values[f"{m}_failures"] = r["failures"]  # type: ignore[assignment]
    line = summary_line(values)
    write_result(args.results, "HashManager mode on OSWorld multi-app tasks (plans only, not executed)", body, line)
    print("\n".join(body))
    print(line, flush=True)
    return values


if __name__ == "__main__":
    main()
