"""Routing metrics: accuracy per domain, AgentMatch, SubtaskAcc and top-K recall.

A routing prediction is judged at the level of *domains*: it is correct when the chosen
agent's domain equals the task's domain, because several agents may serve one application
(SheetAgent and CalcAgent both handle spreadsheets) and benchmarks only label the
application. Predictions with no agent (a router failure) count as wrong and are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentlab.errors import DataError
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.similarity import BertScorer

SUBTASK_THRESHOLD = 0.77


@dataclass
class Score:
    correct: int = 0
    total: int = 0

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def add(self, ok: bool) -> None:
        self.total += 1
        self.correct += int(ok)


@dataclass
class RoutingReport:
    """Overall and per-domain routing accuracy."""

    overall: Score
    per_domain: dict[str, Score] = field(default_factory=dict)
    failures: int = 0  # predictions without an agent

    @property
    def accuracy(self) -> float:
        return self.overall.accuracy

    @property
    def macro_accuracy(self) -> float:
        scores = [s.accuracy for s in self.per_domain.values() if s.total]
        return sum(scores) / len(scores) if scores else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "accuracy": self.accuracy,
            "macro_accuracy": self.macro_accuracy,
            "n": self.overall.total,
            "failures": self.failures,
            "per_domain": {d: {"accuracy": s.accuracy, "n": s.total} for d, s in sorted(self.per_domain.items())},
        }

    def table(self) -> str:
        """A plain-text table (domain, n, accuracy) ending with the overall line."""
        lines = [f"{'domain':<12} {'n':>5} {'acc':>7}"]
        for d, s in sorted(self.per_domain.items()):
            lines.append(f"{d:<12} {s.total:>5} {100 * s.accuracy:>6.1f}%")
        lines.append(f"{'overall':<12} {self.overall.total:>5} {100 * self.accuracy:>6.1f}%")
        if self.failures:
            lines.append(f"(no agent returned for {self.failures} task(s))")
        return "\n".join(lines)


def _domain(pool: AgentPool, agent: str | None) -> str | None:
    if agent is None:
        return None
    return pool.domain_of(agent) if agent in pool else None


def routing_accuracy(predicted: Sequence[str | None], gold_domains: Sequence[str], pool: AgentPool) -> RoutingReport:
    """Accuracy of single-agent routing; an agent not in the pool counts as wrong."""
    if len(predicted) != len(gold_domains):
        raise DataError(f"{len(predicted)} predictions for {len(gold_domains)} gold tasks")
    report = RoutingReport(overall=Score())
    for agent, gold in zip(predicted, gold_domains):
        ok = _domain(pool, agent) == gold
        report.overall.add(ok)
        report.per_domain.setdefault(gold, Score()).add(ok)
        report.failures += int(agent is None)
    return report


def agent_match(plans: Sequence[Sequence[str]], gold_sets: Sequence[Sequence[str]], pool: AgentPool) -> Score:
    """AgentMatch: the set of the plan's agent domains equals the gold domain set."""
    score = Score()
    for agents, gold in zip(plans, gold_sets, strict=True):
        pred = {_domain(pool, a) for a in agents}
        score.add(bool(agents) and pred == set(gold))
    return score


def topk_recall(rankings: Sequence[Sequence[str]], gold_sets: Sequence[Sequence[str]], pool: AgentPool, k: int) -> float:
    """Mean fraction of gold domains covered by the domains of the top-``k`` ranked agents."""
    fracs = []
    for ranking, gold in zip(rankings, gold_sets, strict=True):
        top = {_domain(pool, a) for a in list(ranking)[:k]}
        fracs.append(len(top & set(gold)) / len(set(gold)) if gold else 0.0)
    return sum(fracs) / len(fracs) if fracs else 0.0


def subtask_accuracy(
    predicted: Sequence[Sequence[tuple[str, str]]],
    gold: Sequence[Sequence[tuple[str, str]]],
    pool: AgentPool,
    scorer: BertScorer,
    threshold: float = SUBTASK_THRESHOLD,
) -> Score:
    """SubtaskAcc over gold steps ``(agent or domain, subtask)``.

    A gold step is solved when the plan holds a step whose agent has the same domain and
    whose subtask reaches BERTScore F1 ≥ ``threshold`` against the gold subtask (the best such
    step counts). The threshold is the paper's; note the embedded MiniLM scorer's F1 runs on a
    lower scale than the paper's scorer, so compare methods, not absolute values.
    """
    pairs: list[tuple[int, str, str]] = []  # (gold step id, predicted subtask, gold subtask)
    n_gold = 0
    for plan, ref in zip(predicted, gold, strict=True):
        for g_agent, g_sub in ref:
            g_dom = g_agent if g_agent not in pool else pool.domain_of(g_agent)
            for p_agent, p_sub in plan:
                if _domain(pool, p_agent) == g_dom:
                    pairs.append((n_gold, p_sub, g_sub))
            n_gold += 1
    best = [0.0] * n_gold
    if pairs:
        f1 = scorer.pairs([p for _, p, _ in pairs], [g for _, _, g in pairs])
        for (gid, _, _), s in zip(pairs, f1):
            best[gid] = max(best[gid], float(s))
    score = Score()
    for s in best:
        score.add(s >= threshold)
    return score
