"""Self-instruct benchmark: generation throughput, filter cost and scaling, batched vs naive scoring.

Measured in one run on this machine:

1. scoring m candidates against n references (what Algorithm 1 needs every round) with
   - the naive loop: one bert-score call per pair (what the pseudocode literally does),
   - bert-score batched: ``BertScorer.matrix`` (all m·n pairs in one call),
   - the exact cached matrix (``FastBertScore``, what the pipeline uses), cold and warm cache;
   ratios are taken at the same (m, n) in the same run;
2. the greedy loop of Algorithm 1 on those scores;
3. a live generation sample with the embedded generator (candidates/min, accepted/min,
   acceptance), plus the figures of the shipped data's own generation run (data/demos/report.json).

    python benchmarks/selfinstruct.py [--quick]

Writes ``benchmarks/results/selfinstruct.md`` and ends with one ``key=value`` summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent

from agentlab.fileio import atomic_write_text  # noqa: E402  (after the offline switches above)


def _texts(pool):  # type: ignore[no-untyped-def]
    """Real sentences: generated candidates of the shipped data when present, else seeds."""
    seeds = [d.text for a in pool for d in a.demonstrations]
    try:
        from agentlab.selfinstruct.store import load_candidates

        cands = list(dict.fromkeys(load_candidates()["text"]))
    except Exception:
        cands = []
    return seeds, (cands or seeds[::-1])


def _timed(fn, repeat: int = 1) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def scoring(quick: bool) -> tuple[list[str], dict[str, float]]:
    import numpy as np

    from agentlab.pool import AgentPool
    from agentlab.selfinstruct.fastscore import FastBertScore
    from agentlab.selfinstruct.filter import greedy_filter
    from agentlab.similarity import default_scorer

    pool = AgentPool.from_dir()
    refs_all, cands_all = _texts(pool)
    scorer = default_scorer()
    scorer.matrix(["warm up"], ["the model"])
    lines = ["| m cand. | n refs | pairs | naive loop | bert-score batched | exact cached, cold | exact cached, warm | naive / cold | batched / cold | batched / warm |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    summary: dict[str, float] = {}
    sizes = [(8, 12), (16, 25), (16, 50)] if quick else [(8, 12), (16, 25), (16, 50), (16, 100), (32, 100), (64, 100)]
    naive_limit = 100  # pairs; larger sizes skip the naive loop (over a second per pair here)
    for m, n in sizes:
        c, r = cands_all[:m], refs_all[:n]
        pairs = m * n
        t_naive = None
        if pairs <= naive_limit:
            t_naive = _timed(lambda: [scorer.pairs([a], [b]) for a in c for b in r])
        t_batched = _timed(lambda: scorer.matrix(c, r))
        t_cold = _timed(lambda: FastBertScore(scorer).matrix(c, r))
        warm = FastBertScore(scorer)
        warm.matrix(c, r)
        t_warm = _timed(lambda: warm.matrix(c, r), repeat=5)
        ratio_naive = f"{t_naive / t_cold:.1f}x" if t_naive else "-"
        lines.append(
            f"| {m} | {n} | {pairs} | {f'{t_naive * 1000:.0f} ms' if t_naive else 'not run'} | {t_batched * 1000:.0f} ms | "
            f"{t_cold * 1000:.0f} ms | {t_warm * 1000:.1f} ms | {ratio_naive} | {t_batched / t_cold:.1f}x | {t_batched / t_warm:.0f}x |"
        )
        summary[f"batched_over_cold_{m}x{n}"] = t_batched / t_cold
        summary[f"batched_over_warm_{m}x{n}"] = t_batched / t_warm
        if t_naive:
            summary[f"naive_over_cold_{m}x{n}"] = t_naive / t_cold
            summary[f"naive_over_batched_{m}x{n}"] = t_naive / t_batched
    # Algorithm 1's greedy loop itself, on a full round's worth of scores
    m, n = (64, 100)
    rng = np.random.default_rng(0)
    ce, cc = rng.uniform(0, 0.6, (m, n)), rng.uniform(0, 0.6, (m, m))
    t_greedy = _timed(lambda: greedy_filter([str(i) for i in range(m)], ce, cc, 0.05, 0.55), repeat=5)
    lines.append("")
    lines.append(f"Greedy loop of Algorithm 1 on precomputed scores (m={m}, n={n}): {t_greedy * 1000:.2f} ms.")
    summary["greedy_ms"] = t_greedy * 1000
    return lines, summary


def calibration() -> tuple[list[str], dict[str, float]]:
    """Figure-7 analog per domain, and set growth vs band coverage replayed on real candidates."""
    from agentlab.pool import AgentPool
    from agentlab.selfinstruct.calibrate import acceptance_curve, pairwise_distribution
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.scorer import load_scorer

    pool = AgentPool.from_dir()
    fast = load_scorer(SelfInstructConfig())
    dists = pairwise_distribution(pool, fast)
    lines = [
        "Pairwise BERTScore F1 between hand-written demonstrations of the same domain (Figure-7 analog) and the "
        "central bands it gives:",
        "",
        "| domain | demos | pairs | mean | 95% band | 99% band | min..max |",
        "|---|---|---|---|---|---|---|",
    ]
    for d, dist in sorted(dists.items()):
        b95, b99, b100 = dist.band(0.95), dist.band(0.99), dist.band(1.0)
        lines.append(
            f"| {d} | {dist.n_items} | {dist.scores.size} | {dist.scores.mean():.3f} | [{b95.tau1:.3f}, {b95.tau2:.3f}] | "
            f"[{b99.tau1:.3f}, {b99.tau2:.3f}] | [{b100.tau1:.3f}, {b100.tau2:.3f}] |"
        )
    summary: dict[str, float] = {}
    try:
        from agentlab.selfinstruct.store import load_candidates

        cands = load_candidates()
    except Exception:
        return lines, summary
    covs = (0.9, 0.95, 0.99, 1.0)
    lines += [
        "",
        "Set growth when the same real candidates (the shipped run's, non-leaking, in generation order) are replayed "
        "through the pipeline (Algorithm 1 per round of 16, the set growing) with bands of different coverage. "
        "Candidates were generated while the 0.99 band was in force, so this is indicative:",
        "",
        "| agent | candidates | " + " | ".join(f"coverage {c}" for c in covs) + " |",
        "|---|---|" + "---|" * len(covs),
    ]
    for agent in ("CalcAgent", "SpotifyAgent", "OSAgent"):
        texts = [t for a, t, st in zip(cands["agent"], cands["text"], cands["status"]) if a == agent and st != "leak"]
        if not texts:
            continue
        doc = pool.get(agent)
        bands = {c: dists[doc.domain].band(c) for c in covs}
        curves = acceptance_curve([d.text for d in doc.demonstrations], texts, fast, bands, round_size=16)
        cells = [" / ".join(str(p.set_size) for p in cur.points[1:]) for cur in curves]
        lines.append(f"| {agent} | {len(texts)} | " + " | ".join(cells) + " |")
        for cur in curves:
            summary[f"replay_{agent}_{cur.coverage}"] = float(cur.final_size)
    lines.append("")
    lines.append("(each cell: set size after every round of 16 candidates, starting from 12 seeds)")
    return lines, summary


def live_generation(quick: bool) -> tuple[list[str], dict[str, float]]:
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    agents = ["SpotifyAgent", "WriterAgent"] if quick else ["SpotifyAgent", "WriterAgent", "OSAgent", "MapsAgent"]
    th = ROOT / "data" / "demos" / "thresholds.json"
    with tempfile.TemporaryDirectory() as tmp:
        cfg = SelfInstructConfig(
            agents=agents, max_rounds=1, prompts_per_round=1 if quick else 2, sequences_per_prompt=4,
            agents_per_batch=len(agents), out_dir=Path(tmp), thresholds=th if th.is_file() else None,
            torch_threads=1,
        )
        t = time.perf_counter()
        rep = run_selfinstruct(cfg, progress=False)
        wall = time.perf_counter() - t
    gen_s = sum(a.seconds for a in rep.agents)
    cands = rep.run_candidates
    lines = [
        f"Live sample ({len(agents)} agents x 1 round, {cfg.prompts_per_round} prompt(s) x {cfg.sequences_per_prompt} "
        f"sequences x {cfg.max_new_tokens} tokens each, one batched generate call, 1 torch thread): "
        f"{cands} candidates and {rep.run_accepted} accepted in {gen_s:.0f} s of round time "
        f"({60 * cands / gen_s:.1f} candidates/min, {60 * rep.run_accepted / gen_s:.1f} accepted/min, "
        f"acceptance {rep.run_accepted / max(cands, 1):.0%}); {wall:.0f} s wall including model loads and calibration.",
    ]
    return lines, {
        "live_candidates_per_min": 60 * cands / gen_s,
        "live_accepted_per_min": 60 * rep.run_accepted / gen_s,
        "live_acceptance": rep.run_accepted / max(cands, 1),
    }


def shipped() -> tuple[list[str], dict[str, float]]:
    path = ROOT / "data" / "demos" / "report.json"
    if not path.is_file():
        return ["No shipped generation report (data/demos/report.json) yet."], {}
    rep = json.loads(path.read_text())
    t = rep["totals"]
    return [
        f"Shipped data (`data/demos/report.json`, generated with `{rep['generator']}`): {t['demonstrations']} demonstrations "
        f"for {t['agents']} agents ({t['generated']} generated; per agent {t['min_total']}-{t['max_total']}), "
        f"{t['candidates']} scored candidates, acceptance {t['acceptance_rate']:.1%}, {t['leaked']} dropped as leakage. "
        f"Its last run: {rep['candidates_per_min']} candidates/min, {rep['accepted_per_min']} accepted/min over "
        f"{rep['elapsed_s'] / 60:.0f} min.",
    ], {"shipped_acceptance": t["acceptance_rate"], "shipped_demos": t["demonstrations"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, 2 agents for the live sample")
    ap.add_argument("--no-live", action="store_true", help="skip the live generation sample")
    args = ap.parse_args()
    cmd = "python benchmarks/selfinstruct.py" + (" --quick" if args.quick else "") + (" --no-live" if args.no_live else "")
    out = ["## Self-instruct: generation throughput and BERTScore filter cost", "", f"Command: `{cmd}`", ""]
    summary: dict[str, float] = {}
    lines, s = scoring(args.quick)
    out += [
        "Scoring m candidates against n references (F1 of every pair), median wall time. `cold` embeds every "
        "sentence first; `warm` is the pipeline's steady state (the set and the benchmark tasks are already embedded, "
        "only the scoring runs). The naive loop (one bert-score call per pair) is run at the smallest size only:",
        "",
    ] + lines + [""]
    summary.update(s)
    lines, s = calibration()
    out += lines + [""]
    summary.update(s)
    if not args.no_live:
        lines, s = live_generation(args.quick)
        out += lines + [""]
        summary.update(s)
    lines, s = shipped()
    out += lines
    summary.update(s)
    text = "\n".join(out) + "\n"
    atomic_write_text(ROOT / "benchmarks" / "results" / "selfinstruct.md", text)
    print(text)
    print(" ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
