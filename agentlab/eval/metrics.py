"""Routing metrics: accuracy per domain and per agent, CLI/GUI confusion, AgentMatch, SubtaskAcc, top-K recall.

A routing prediction is judged at the level of *domains* by :func:`routing_accuracy`: it is
correct when the chosen agent's domain equals the task's domain, because several agents may
serve one application (SheetAgent and CalcAgent both handle spreadsheets) and the public
benchmarks only label the application. Predictions with no agent (a router failure) count as
wrong and are counted.

Domain-level scoring never sees the choice that decides *how* a task is carried out: SheetAgent
(CLI, writes openpyxl code) and CalcAgent (GUI, clicks through Calc) are both "calc". Where the
gold agents are known (the project's own routing set, the execution tasks),
:func:`agent_accuracy` scores at the agent level (correct when the chosen agent is one of the
task's gold agents) and reports the CLI/GUI confusion: gold interface against the chosen
agent's interface, and how many tasks reached the right domain through the wrong interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentlab.errors import DataError
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.llm.similarity import BertScorer

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


INTERFACES: tuple[str, ...] = ("CLI", "GUI")


@dataclass
class InterfaceConfusion:
    """Gold interface (rows) against the chosen agent's interface (columns), a 2x2 count.

    Predictions without an agent, or naming an agent outside the pool, have no interface and
    are counted in ``no_agent`` instead. ``right_domain_wrong_interface`` counts the tasks routed
    to an agent of the gold domain but of the other interface (CalcAgent for a SheetAgent task):
    correct by domain, wrong by agent.
    """

    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {g: {p: 0 for p in INTERFACES} for g in INTERFACES})
    no_agent: int = 0
    right_domain_wrong_interface: int = 0
    total: int = 0

    @property
    def right_domain_wrong_interface_share(self) -> float:
        """The share of all scored tasks routed to the right domain through the wrong interface."""
        return self.right_domain_wrong_interface / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "gold_vs_predicted": {g: dict(row) for g, row in self.counts.items()},
            "no_agent": self.no_agent,
            "right_domain_wrong_interface": self.right_domain_wrong_interface,
            "right_domain_wrong_interface_share": self.right_domain_wrong_interface_share,
            "n": self.total,
        }

    def lines(self) -> list[str]:
        out = ["CLI/GUI confusion (rows: gold interface; columns: the chosen agent's interface)"]
        out.append(f"{'':<9}" + "".join(f"{'pred ' + p:>10}" for p in INTERFACES))
        for g in INTERFACES:
            out.append(f"{'gold ' + g:<9}" + "".join(f"{self.counts[g][p]:>10}" for p in INTERFACES))
        if self.no_agent:
            out.append(f"(no agent in the pool chosen for {self.no_agent} task(s))")
        out.append(
            f"right domain, wrong interface: {self.right_domain_wrong_interface} of {self.total} task(s) "
            f"({100 * self.right_domain_wrong_interface_share:.1f}%)")
        return out


@dataclass
class AgentRoutingReport:
    """Agent-level accuracy next to domain-level accuracy on the same tasks, and the CLI/GUI confusion.

    Both reports break down by the task's gold domain, so the gap between them shows where a
    router finds the application but not the agent that should work on it.
    """

    agent: RoutingReport
    domain: RoutingReport
    interface: InterfaceConfusion

    @property
    def accuracy(self) -> float:
        return self.agent.accuracy

    def as_dict(self) -> dict[str, object]:
        return {
            "accuracy": self.agent.accuracy,
            "macro_accuracy": self.agent.macro_accuracy,
            "domain_accuracy": self.domain.accuracy,
            "n": self.agent.overall.total,
            "failures": self.agent.failures,
            "per_domain": {
                d: {"accuracy": s.accuracy, "domain_accuracy": self.domain.per_domain[d].accuracy, "n": s.total}
                for d, s in sorted(self.agent.per_domain.items())
            },
            "interface": self.interface.as_dict(),
        }

    def table(self) -> str:
        """Plain text: domain, n, domain-level and agent-level accuracy, then the CLI/GUI confusion."""
        lines = [f"{'domain':<12} {'n':>5} {'dom acc':>8} {'agent acc':>10}"]
        for d, s in sorted(self.agent.per_domain.items()):
            lines.append(f"{d:<12} {s.total:>5} {100 * self.domain.per_domain[d].accuracy:>7.1f}% {100 * s.accuracy:>9.1f}%")
        lines.append(
            f"{'overall':<12} {self.agent.overall.total:>5} {100 * self.domain.accuracy:>7.1f}% {100 * self.agent.accuracy:>9.1f}%")
        return "\n".join(lines + self.interface.lines())


def _interface(pool: AgentPool, agent: str | None) -> str | None:
    return pool.get(agent).interface if agent is not None and agent in pool else None


def _gold_interface(pool: AgentPool, agents: Sequence[str], given: str | None, task: int) -> str:
    if given is None:
        known = [pool.get(a).interface for a in agents if a in pool]
        if not known:
            raise DataError(f"gold task {task}: none of the gold agents {list(agents)} is in the pool and no interface is given")
        given = known[0]
    if given not in INTERFACES:
        raise DataError(f"gold task {task}: interface {given!r} is not one of {', '.join(INTERFACES)}")
    return given


def agent_accuracy(
    predicted: Sequence[str | None],
    gold_agents: Sequence[Sequence[str]],
    gold_domains: Sequence[str],
    pool: AgentPool,
    gold_interfaces: Sequence[str | None] | None = None,
) -> AgentRoutingReport:
    """Agent-level routing accuracy (the chosen agent is one of the task's gold agents).

    Returned with the domain-level report on the same tasks and the CLI/GUI confusion. The
    gold interface is ``gold_interfaces[i]`` when given, else the interface of the task's first
    gold agent found in the pool. A prediction that is ``None`` or not in the pool is wrong at
    both levels and is counted in ``failures`` (``None``) and ``interface.no_agent`` (both).
    """
    n = len(predicted)
    if len(gold_agents) != n or len(gold_domains) != n or (gold_interfaces is not None and len(gold_interfaces) != n):
        raise DataError(f"{n} predictions for {len(gold_agents)} gold agent sets and {len(gold_domains)} gold domains")
    agent_rep, domain_rep = RoutingReport(overall=Score()), RoutingReport(overall=Score())
    conf = InterfaceConfusion()
    for i, (agent, golds, dom) in enumerate(zip(predicted, gold_agents, gold_domains)):
        if not golds:
            raise DataError(f"gold task {i}: the gold agent set is empty")
        gold_iface = _gold_interface(pool, golds, gold_interfaces[i] if gold_interfaces is not None else None, i)
        ok_agent = agent is not None and agent in golds and agent in pool
        ok_domain = _domain(pool, agent) == dom
        for rep, ok in ((agent_rep, ok_agent), (domain_rep, ok_domain)):
            rep.overall.add(ok)
            rep.per_domain.setdefault(dom, Score()).add(ok)
            rep.failures += int(agent is None)
        conf.total += 1
        iface = _interface(pool, agent)
        if iface is None:
            conf.no_agent += 1
            continue
        conf.counts[gold_iface][iface] += 1
        conf.right_domain_wrong_interface += int(ok_domain and iface != gold_iface)
    return AgentRoutingReport(agent=agent_rep, domain=domain_rep, interface=conf)


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
