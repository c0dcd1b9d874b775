"""Run reports: per agent rounds, candidates, rejections by reason, acceptance, diversity, samples.

Written as ``report.json`` (machine-readable) and ``report.md`` (for a researcher to eyeball:
a few accepted and rejected candidates per agent with their scores).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentlab.fileio import atomic_write_json, atomic_write_text
from agentlab.pool import AgentDocument
from agentlab.selfinstruct.config import Band, Thresholds
from agentlab.selfinstruct.quality import QUALITY_REASONS
from agentlab.selfinstruct.store import AgentState
from agentlab.llm.similarity import SimilarityScorer


@dataclass
class AgentReport:
    agent: str
    domain: str
    tau1: float
    tau2: float
    seeds: int
    generated: int
    total: int
    rounds: int
    raw_lines: int
    #: parsed, scored candidates (after the parser, before leakage and Algorithm 1)
    candidates: int
    parse_rejects: dict[str, int]
    leaked: int
    band_rejects: dict[str, int]
    surplus: int
    acceptance_rate: float
    mean_pairwise: float
    seconds: float
    stopped: str | None
    samples_accepted: list[dict[str, Any]] = field(default_factory=list)
    samples_rejected: list[dict[str, Any]] = field(default_factory=list)
    samples_dropped: dict[str, list[str]] = field(default_factory=dict)
    #: accepted rows withdrawn later, by reason (``leak``: a new test-task source; ``quality``)
    withdrawn: dict[str, int] = field(default_factory=dict)

    @property
    def quality_rejects(self) -> dict[str, int]:
        """The part of ``parse_rejects`` the quality check made (the rest is the line parser's)."""
        return {k: v for k, v in self.parse_rejects.items() if k in QUALITY_REASONS}


def build_agent_report(
    doc: AgentDocument,
    st: AgentState,
    seed_rows: list[dict[str, Any]],
    band: Band,
    scorer: SimilarityScorer,
    samples: int,
) -> AgentReport:
    texts = [r["text"] for r in seed_rows] + [r["text"] for r in st.rows]
    mat = scorer.matrix(texts, texts) if len(texts) > 1 else np.zeros((1, 1))
    iu = np.triu_indices(len(texts), k=1)
    statuses: dict[str, int] = {}
    for c in st.candidates:
        statuses[c["status"]] = statuses.get(c["status"], 0) + 1
    n_cands = len(st.candidates)
    accepted = [c for c in st.candidates if c["status"] == "accepted"]
    rejected = [c for c in st.candidates if c["status"] in ("below_tau1", "above_tau2", "leak")]
    pick = lambda rows: [  # noqa: E731 - evenly spread sample, deterministic
        rows[int(i)] for i in np.unique(np.linspace(0, len(rows) - 1, num=min(samples, len(rows))).astype(int))
    ] if rows and samples else []
    keep = ("text", "status", "round", "priority", "min_existing", "max_existing", "violating_score", "leak_score")
    return AgentReport(
        agent=doc.name,
        domain=doc.domain,
        tau1=band.tau1,
        tau2=band.tau2,
        seeds=len(seed_rows),
        generated=len(st.rows),
        total=len(seed_rows) + len(st.rows),
        rounds=st.rounds,
        raw_lines=st.raw_lines,
        candidates=n_cands,
        parse_rejects=dict(sorted(st.parse.items())),
        leaked=st.leaked,
        band_rejects={k: statuses.get(k, 0) for k in ("below_tau1", "above_tau2")},
        surplus=statuses.get("surplus", 0),
        acceptance_rate=(len(st.rows) / n_cands) if n_cands else 0.0,
        mean_pairwise=float(mat[iu].mean()) if iu[0].size else float("nan"),
        seconds=st.seconds,
        stopped=st.stopped,
        samples_accepted=[{k: c.get(k) for k in keep} for c in pick(accepted)],
        samples_rejected=[{k: c.get(k) for k in keep} for c in pick(rejected)],
        samples_dropped=st.samples_dropped,
        withdrawn=dict(st.removed),
    )


@dataclass
class SelfInstructReport:
    """What a run produced; ``candidates`` holds every scored candidate of the run's agents."""

    agents: list[AgentReport]
    thresholds: Thresholds
    generator: str
    out_dir: str
    elapsed_s: float
    run_candidates: int
    run_accepted: int
    time_budget_hit: bool = False
    candidates: list[dict[str, Any]] = field(default_factory=list)
    #: what the leakage filter checked (``LeakageFilter.coverage``): ``leakage_free`` only when
    #: every public list was there
    leakage: dict[str, Any] = field(default_factory=dict)

    @property
    def candidates_per_min(self) -> float:
        return 60.0 * self.run_candidates / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def accepted_per_min(self) -> float:
        return 60.0 * self.run_accepted / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def agent(self, name: str) -> AgentReport:
        return next(a for a in self.agents if a.agent == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "generator": self.generator,
            "out_dir": self.out_dir,
            "thresholds": self.thresholds.model_dump(exclude_none=True),
            "elapsed_s": round(self.elapsed_s, 1),
            "run_candidates": self.run_candidates,
            "run_accepted": self.run_accepted,
            "candidates_per_min": round(self.candidates_per_min, 2),
            "accepted_per_min": round(self.accepted_per_min, 2),
            "time_budget_hit": self.time_budget_hit,
            "leakage": self.leakage,
            "totals": self.totals(),
            "agents": [asdict(a) for a in self.agents],
        }

    def totals(self) -> dict[str, Any]:
        a = self.agents
        cands = sum(x.candidates for x in a)
        gen = sum(x.generated for x in a)
        return {
            "agents": len(a),
            "demonstrations": sum(x.total for x in a),
            "generated": gen,
            "candidates": cands,
            "leaked": sum(x.leaked for x in a),
            "acceptance_rate": round(gen / cands, 4) if cands else 0.0,
            "min_total": min((x.total for x in a), default=0),
            "max_total": max((x.total for x in a), default=0),
        }

    def to_markdown(self) -> str:
        th = self.thresholds
        t = self.totals()
        lines = [
            "# Self-instruct generation report",
            "",
            f"Generator `{self.generator}`; scorer `{th.scorer}` layer {th.num_layers}; "
            f"global band [{th.tau1:.4f}, {th.tau2:.4f}] (coverage {th.coverage}); leakage_tau {th.leakage_tau:.4f}.",
            f"This run: {self.elapsed_s / 60:.1f} min, {self.run_candidates} candidates scored "
            f"({self.candidates_per_min:.1f}/min), {self.run_accepted} accepted ({self.accepted_per_min:.1f}/min)"
            + (" — stopped by the time budget (resumable)." if self.time_budget_hit else "."),
            f"Totals over the agents below: {t['demonstrations']} demonstrations ({t['generated']} generated), "
            f"{t['candidates']} candidates, acceptance {t['acceptance_rate']:.1%}, {t['leaked']} dropped as leakage; "
            f"per agent {t['min_total']}–{t['max_total']}.",
            leakage_sentence(self.leakage),
            "",
            "| agent | domain | band | seeds | generated | total | rounds | lines | candidates | parser drops | quality drops | leaked | withdrawn | <τ1 | >τ2 | accept | mean pairwise | stopped |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for a in self.agents:
            quality = a.quality_rejects
            drops = ", ".join(f"{k} {v}" for k, v in a.parse_rejects.items() if k not in quality) or "-"
            qdrops = ", ".join(f"{k} {v}" for k, v in quality.items()) or "-"
            withdrawn = ", ".join(f"{k} {v}" for k, v in a.withdrawn.items()) or "-"
            lines.append(
                f"| {a.agent} | {a.domain} | [{a.tau1:.3f}, {a.tau2:.3f}] | {a.seeds} | {a.generated} | {a.total} | "
                f"{a.rounds} | {a.raw_lines} | {a.candidates} | {drops} | {qdrops} | {a.leaked} | {withdrawn} | "
                f"{a.band_rejects['below_tau1']} | "
                f"{a.band_rejects['above_tau2']} | {a.acceptance_rate:.1%} | {a.mean_pairwise:.3f} | {a.stopped or ('not finished (time budget)' if self.time_budget_hit else 'not finished')} |"
            )
        lines += ["", "## Samples (accepted and rejected, with scores against the set at the time)", ""]
        fmt = lambda v: "-" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3f}"  # noqa: E731
        for a in self.agents:
            lines.append(f"### {a.agent}")
            for s in a.samples_accepted:
                lines.append(f"- ✅ r{s['round']} min {fmt(s['min_existing'])} max {fmt(s['max_existing'])}: {s['text']}")
            for s in a.samples_rejected:
                lines.append(
                    f"- ❌ {s['status']} (violating {fmt(s['violating_score'])}, leak {fmt(s['leak_score'])}): {s['text']}"
                )
            for reason, texts in a.samples_dropped.items():
                for x in texts[:1]:
                    lines.append(f"- 🗑 parser {reason}: {x.strip()[:160]!r}")
            lines.append("")
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> None:
        out = Path(out_dir)
        atomic_write_json(out / "report.json", self.to_dict())
        atomic_write_text(out / "report.md", self.to_markdown() + "\n")


def leakage_sentence(cov: dict[str, Any]) -> str:
    """One sentence on what the leakage filter checked; never "leakage-free" when a list was missing."""
    if not cov or cov.get("disabled"):
        return "Leakage filter: off (`leakage: false`); these demonstrations are not checked against any test task."
    text = f"Leakage filter: checked against {', '.join(cov.get('checked', []))}"
    if cov.get("missing"):
        return text + (f"; **not** against {', '.join(cov['missing'])} (not fetched: `agentlab benchmarks fetch`), "
                       "so this set is not leakage-free.")
    return text + "; leakage-free against every test list."
