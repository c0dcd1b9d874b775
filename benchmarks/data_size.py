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
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentlab.fileio import atomic_write_text  # noqa: E402


def make_router(kind: str, pool):  # type: ignore[no-untyped-def]
    if kind == "embedding":
        from agentlab.metaagent.baselines.embedding import EmbeddingRouter

        return EmbeddingRouter(pool)
    from agentlab.metaagent.agenttoken import AgentTokenRouter

    return AgentTokenRouter(pool, progress=False)


def evaluate(kind: str, pool, train, tasks) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    from agentlab.eval.metrics import routing_accuracy

    t = time.perf_counter()
    router = make_router(kind, pool)
    router.fit(train)
    ranked = router.rank([x.instruction for x in tasks])
    pred = [r[0][0] if r else None for r in ranked]
    rep = routing_accuracy(pred, [x.domain for x in tasks], pool)
    return rep.accuracy, rep.macro_accuracy, time.perf_counter() - t


def unfiltered_vs_filtered(pool, demos: Path):  # type: ignore[no-untyped-def]
    """Two training sets of equal size per agent: seeds + k accepted vs seeds + k unfiltered."""
    from agentlab.metaagent.data import TrainingSet
    from agentlab.selfinstruct.store import load_candidates, load_demos

    ds, cands = load_demos(demos), load_candidates(demos)
    accepted: dict[str, list[str]] = {n: [] for n in pool.names}
    for a, t, s in zip(ds["agent"], ds["text"], ds["source"]):
        if s == "generated" and a in accepted:
            accepted[a].append(t)
    raw: dict[str, list[str]] = {n: [] for n in pool.names}
    for a, t, s in zip(cands["agent"], cands["text"], cands["status"]):
        if s != "leak" and a in raw and t not in raw[a]:
            raw[a].append(t)  # generation order, whatever Algorithm 1 decided
    sets = {}
    ks = {n: min(len(accepted[n]), len(raw[n])) for n in pool.names}
    for arm, source in (("filtered", accepted), ("unfiltered", raw)):
        texts, labels, domains = [], [], []
        for i, doc in enumerate(pool.agents):
            items = [d.text for d in doc.demonstrations] + source[doc.name][: ks[doc.name]]
            texts += items
            labels += [i] * len(items)
            domains += [doc.domain] * len(items)
        sets[arm] = TrainingSet(agents=pool.names, texts=texts, labels=labels, domains=domains)
    return sets, ks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="embedding router only, sizes 10 and 25")
    ap.add_argument("--routers", default="embedding,agenttoken")
    ap.add_argument("--demos", type=Path, default=ROOT / "data" / "demos")
    args = ap.parse_args()
    routers = ["embedding"] if args.quick else [r.strip() for r in args.routers.split(",") if r.strip()]
    sizes = [10, 25] if args.quick else [10, 25, 50, 100]

    from agentlab.eval.benchmarks import load_appagent, load_osworld
    from agentlab.metaagent.data import load_training_set
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    tasks = load_osworld() + load_appagent()
    cmd = "python benchmarks/data_size.py" + (" --quick" if args.quick else f" --routers {','.join(routers)}")
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
    for n in sizes:
        train = load_training_set(pool, args.demos, per_agent=n, source="all", seed=0)
        used = len(train) / len(pool)
        cells = []
        for r in routers:
            acc, macro, secs = evaluate(r, pool, train, tasks)
            cells.append(f"{acc:.1%} / {macro:.1%}")
            summary[f"{r}_{n}"] = acc
            print(f"size {n} ({used:.1f} used/agent) {r}: {acc:.3f} macro {macro:.3f} ({secs:.0f} s)", flush=True)
        out.append(f"| {n}{' (seeds only)' if n == 10 else ''} | {used:.1f} | " + " | ".join(cells) + " |")

    sets, ks = unfiltered_vs_filtered(pool, args.demos)
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
            acc, macro, secs = evaluate(r, pool, sets[arm], tasks)
            cells.append(f"{acc:.1%} / {macro:.1%}")
            summary[f"{r}_{arm}"] = acc
            print(f"{arm} {r}: {acc:.3f} macro {macro:.3f} ({secs:.0f} s)", flush=True)
        out.append(f"| seeds + k {'accepted by Algorithm 1' if arm == 'filtered' else 'unfiltered candidates'} | " + " | ".join(cells) + " |")
    text = "\n".join(out) + "\n"
    atomic_write_text(ROOT / "benchmarks" / "results" / "data_size.md", text)
    print(text)
    print(" ".join(f"{k}={v:.4f}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
