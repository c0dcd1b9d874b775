"""Self-instruct's costs: BERTScore filter scoring (naive vs batched vs cached), calibration bands, generation throughput.

Measured in one run on this machine:

1. scoring m candidates against n references (what Algorithm 1 needs every round) with the naive
   loop (one bert-score call per pair, what the pseudocode literally does), bert-score batched
   (``BertScorer.matrix``: all m·n pairs in one call) and the exact cached matrix
   (``FastBertScore``, what the pipeline uses), cold and warm cache; ratios at the same (m, n);
2. the greedy loop of Algorithm 1 on precomputed scores;
3. the Figure-7 analog (pairwise BERTScore of the hand-written demonstrations per domain and the
   bands it gives) and set growth when the shipped run's candidates are replayed with bands of
   different coverage;
4. a live generation sample with the embedded generator (candidates/min, accepted/min,
   acceptance), and the figures of the shipped data's own generation run (``data/demos/report.json``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.experiments.markdown import table

if TYPE_CHECKING:
    from agentlab.pool import AgentPool

#: above this many pairs the naive loop is not run (over a second per pair here)
NAIVE_LIMIT = 100
#: the agents whose shipped candidates are replayed, and the band coverages tried
REPLAY_AGENTS = ("CalcAgent", "SpotifyAgent", "OSAgent")
COVERAGES = (0.9, 0.95, 0.99, 1.0)


class SelfInstructCostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: (m candidates, n references) pairs to score
    sizes: list[tuple[int, int]] = Field(default_factory=lambda: [(8, 12), (16, 25), (16, 50), (16, 100), (32, 100), (64, 100)])
    #: the live generation sample (None: skipped) and its prompts per round
    live_agents: list[str] | None = Field(default_factory=lambda: ["SpotifyAgent", "WriterAgent", "OSAgent", "MapsAgent"])
    live_prompts: int = Field(2, ge=1)


def _timed(fn: Callable[[], object], repeat: int = 1) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


@dataclass
class ScoringRow:
    """Median seconds to score m candidates against n references, each way."""

    m: int
    n: int
    naive_s: float | None
    batched_s: float
    cold_s: float
    warm_s: float

    def cells(self) -> list[str]:
        ratio_naive = f"{self.naive_s / self.cold_s:.1f}x" if self.naive_s else "-"
        return [str(self.m), str(self.n), str(self.m * self.n),
                f"{self.naive_s * 1000:.0f} ms" if self.naive_s else "not run", f"{self.batched_s * 1000:.0f} ms",
                f"{self.cold_s * 1000:.0f} ms", f"{self.warm_s * 1000:.1f} ms", ratio_naive,
                f"{self.batched_s / self.cold_s:.1f}x", f"{self.batched_s / self.warm_s:.0f}x"]

    def summary(self) -> dict[str, float]:
        size = f"{self.m}x{self.n}"
        out = {f"batched_over_cold_{size}": self.batched_s / self.cold_s, f"batched_over_warm_{size}": self.batched_s / self.warm_s}
        if self.naive_s:
            out |= {f"naive_over_cold_{size}": self.naive_s / self.cold_s, f"naive_over_batched_{size}": self.naive_s / self.batched_s}
        return out


@dataclass
class Band:
    """One domain's pairwise BERTScore distribution of hand-written demonstrations (a Figure-7 row)."""

    domain: str
    demos: int
    pairs: int
    mean: float
    #: coverage -> (tau1, tau2)
    bands: dict[float, tuple[float, float]]

    def cells(self) -> list[str]:
        b = {c: f"[{lo:.3f}, {hi:.3f}]" for c, (lo, hi) in self.bands.items()}
        return [self.domain, str(self.demos), str(self.pairs), f"{self.mean:.3f}", b[0.95], b[0.99], b[1.0]]


@dataclass
class Replay:
    """Set sizes after each round when one agent's shipped candidates are replayed, per band coverage."""

    agent: str
    candidates: int
    #: coverage -> set size after every round
    sizes: dict[float, list[int]]
    #: coverage -> the set's final size
    final: dict[float, int]


@dataclass
class LiveSample:
    agents: int
    prompts: int
    sequences: int
    max_new_tokens: int
    candidates: int
    accepted: int
    round_s: float
    wall_s: float

    def summary(self) -> dict[str, float]:
        return {"live_candidates_per_min": 60 * self.candidates / self.round_s,
                "live_accepted_per_min": 60 * self.accepted / self.round_s,
                "live_acceptance": self.accepted / max(self.candidates, 1)}


@dataclass
class SelfInstructCost:
    scoring: list[ScoringRow]
    greedy_ms: float
    #: the scored matrix size of the greedy loop
    greedy_size: tuple[int, int]
    bands: list[Band]
    replays: list[Replay] = field(default_factory=list)
    live: LiveSample | None = None
    #: the shipped data's generation report (data/demos/report.json), when there is one
    shipped: dict[str, Any] | None = None

    def summary(self) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {}
        for row in self.scoring:
            out |= row.summary()
        out["greedy_ms"] = self.greedy_ms
        for r in self.replays:
            out |= {f"replay_{r.agent}_{c}": float(size) for c, size in r.final.items()}
        if self.live is not None:
            out |= self.live.summary()
        if self.shipped is not None:
            t = self.shipped["totals"]
            out |= {"shipped_acceptance": t["acceptance_rate"], "shipped_demos": t["demonstrations"]}
        return out

    def markdown(self) -> list[str]:
        m, n = self.greedy_size
        out = [
            "Scoring m candidates against n references (F1 of every pair), median wall time. `cold` embeds every "
            "sentence first; `warm` is the pipeline's steady state (the set and the benchmark tasks are already embedded, "
            "only the scoring runs). The naive loop (one bert-score call per pair) is run at the smallest size only:",
            "",
            *table(["m cand.", "n refs", "pairs", "naive loop", "bert-score batched", "exact cached, cold", "exact cached, warm",
                    "naive / cold", "batched / cold", "batched / warm"], [r.cells() for r in self.scoring]),
            "",
            f"Greedy loop of Algorithm 1 on precomputed scores (m={m}, n={n}): {self.greedy_ms:.2f} ms.",
            "",
            "Pairwise BERTScore F1 between hand-written demonstrations of the same domain (Figure-7 analog) and the "
            "central bands it gives:",
            "",
            *table(["domain", "demos", "pairs", "mean", "95% band", "99% band", "min..max"], [b.cells() for b in self.bands]),
        ]
        if self.replays:
            out += [
                "",
                "Set growth when the same real candidates (the shipped run's, non-leaking, in generation order) are "
                "replayed through the pipeline (Algorithm 1 per round of 16, the set growing) with bands of different "
                "coverage. Candidates were generated while the 0.99 band was in force, so this is indicative:",
                "",
                *table(["agent", "candidates", *(f"coverage {c}" for c in COVERAGES)],
                       [[r.agent, r.candidates, *(" / ".join(map(str, r.sizes[c])) for c in COVERAGES)] for r in self.replays]),
                "",
                "(each cell: set size after every round of 16 candidates, starting from 12 seeds)",
            ]
        out.append("")
        if self.live is not None:
            lv = self.live
            out += [
                f"Live sample ({lv.agents} agents x 1 round, {lv.prompts} prompt(s) x {lv.sequences} "
                f"sequences x {lv.max_new_tokens} tokens each, one batched generate call, 1 torch thread): "
                f"{lv.candidates} candidates and {lv.accepted} accepted in {lv.round_s:.0f} s of round time "
                f"({60 * lv.candidates / lv.round_s:.1f} candidates/min, {60 * lv.accepted / lv.round_s:.1f} accepted/min, "
                f"acceptance {lv.accepted / max(lv.candidates, 1):.0%}); {lv.wall_s:.0f} s wall including model loads and "
                "calibration.",
                "",
            ]
        if self.shipped is None:
            out.append("No shipped generation report (data/demos/report.json) yet.")
        else:
            rep, t = self.shipped, self.shipped["totals"]
            out.append(
                f"Shipped data (`data/demos/report.json`, generated with `{rep['generator']}`): {t['demonstrations']} "
                f"demonstrations for {t['agents']} agents ({t['generated']} generated; per agent {t['min_total']}-"
                f"{t['max_total']}), {t['candidates']} scored candidates, acceptance {t['acceptance_rate']:.1%}, "
                f"{t['leaked']} dropped as leakage. Its last run: {rep['candidates_per_min']} candidates/min, "
                f"{rep['accepted_per_min']} accepted/min over {rep['elapsed_s'] / 60:.0f} min.")
        return out


def _shipped_candidates() -> Any | None:
    """The shipped run's scored candidates (``data/demos/candidates``), or None where there are none."""
    from agentlab.selfinstruct.store import load_candidates

    try:
        return load_candidates()
    except OSError:
        return None


def scoring(pool: AgentPool, sizes: list[tuple[int, int]]) -> list[ScoringRow]:
    """Each way of scoring at each (m, n), on real sentences: generated candidates of the shipped
    data when present (else the seeds reversed) against the seeds."""
    from agentlab.selfinstruct.fastscore import FastBertScore
    from agentlab.llm.similarity import default_scorer

    refs_all = [d.text for a in pool for d in a.demonstrations]
    shipped = _shipped_candidates()
    cands_all = list(dict.fromkeys(shipped["text"])) if shipped is not None else []
    cands_all = cands_all or refs_all[::-1]
    scorer = default_scorer()
    scorer.matrix(["warm up"], ["the model"])
    rows = []
    for m, n in sizes:
        c, r = cands_all[:m], refs_all[:n]
        naive = _timed(lambda: [scorer.pairs([a], [b]) for a in c for b in r]) if m * n <= NAIVE_LIMIT else None
        batched = _timed(lambda: scorer.matrix(c, r))
        cold = _timed(lambda: FastBertScore(scorer).matrix(c, r))
        warm = FastBertScore(scorer)
        warm.matrix(c, r)
        rows.append(ScoringRow(m, n, naive, batched, cold, _timed(lambda: warm.matrix(c, r), repeat=5)))
    return rows


def greedy_ms(m: int = 64, n: int = 100) -> float:
    """Algorithm 1's greedy loop itself on a full round's worth of (random) scores, median ms."""
    import numpy as np

    from agentlab.selfinstruct.filter import greedy_filter

    rng = np.random.default_rng(0)
    ce, cc = rng.uniform(0, 0.6, (m, n)), rng.uniform(0, 0.6, (m, m))
    return 1000 * _timed(lambda: greedy_filter([str(i) for i in range(m)], ce, cc, 0.05, 0.55), repeat=5)


def calibration(pool: AgentPool) -> tuple[list[Band], list[Replay]]:
    """The Figure-7 analog per domain, and set growth vs band coverage replayed on the shipped candidates."""
    from agentlab.selfinstruct.calibrate import acceptance_curve, pairwise_distribution
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.scorer import load_scorer

    fast = load_scorer(SelfInstructConfig())
    dists = pairwise_distribution(pool, fast)
    bands = [Band(d, dist.n_items, int(dist.scores.size), float(dist.scores.mean()),
                  {c: (dist.band(c).tau1, dist.band(c).tau2) for c in (0.95, 0.99, 1.0)}) for d, dist in sorted(dists.items())]
    cands = _shipped_candidates()
    if cands is None:
        return bands, []
    replays = []
    for agent in REPLAY_AGENTS:
        texts = [t for a, t, st in zip(cands["agent"], cands["text"], cands["status"]) if a == agent and st != "leak"]
        if not texts:
            continue
        doc = pool.get(agent)
        curves = acceptance_curve([d.text for d in doc.demonstrations], texts, fast,
                                  {c: dists[doc.domain].band(c) for c in COVERAGES}, round_size=16)
        replays.append(Replay(agent, len(texts), {cur.coverage: [p.set_size for p in cur.points[1:]] for cur in curves},
                              {cur.coverage: cur.final_size for cur in curves}))
    return bands, replays


def live_generation(agents: list[str], prompts: int) -> LiveSample:
    """One round of real generation with the embedded generator for ``agents`` (a throwaway output folder)."""
    from agentlab.paths import data_dir
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    th = data_dir() / "demos" / "thresholds.json"
    with tempfile.TemporaryDirectory() as tmp:
        cfg = SelfInstructConfig(
            agents=agents, max_rounds=1, prompts_per_round=prompts, sequences_per_prompt=4, agents_per_batch=len(agents),
            out_dir=Path(tmp), thresholds=th if th.is_file() else None, torch_threads=1,
        )
        t = time.perf_counter()
        rep = run_selfinstruct(cfg, progress=False)
        wall = time.perf_counter() - t
    return LiveSample(len(agents), cfg.prompts_per_round, cfg.sequences_per_prompt, cfg.max_new_tokens, rep.run_candidates,
                      rep.run_accepted, sum(a.seconds for a in rep.agents), wall)


def shipped_report() -> dict[str, Any] | None:
    from agentlab.paths import data_dir

    path = data_dir() / "demos" / "report.json"
    return json.loads(path.read_text()) if path.is_file() else None


def run(pool: AgentPool, config: SelfInstructCostConfig) -> SelfInstructCost:
    """Scoring, the greedy loop, calibration, the live sample (unless off) and the shipped report, in that order."""
    rows = scoring(pool, config.sizes)
    greedy = greedy_ms(64, 100)
    bands, replays = calibration(pool)
    live = live_generation(config.live_agents, config.live_prompts) if config.live_agents else None
    return SelfInstructCost(rows, greedy, (64, 100), bands, replays, live, shipped_report())
