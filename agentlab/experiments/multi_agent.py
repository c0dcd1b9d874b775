"""The Table 2 analog: plans and executed plans on multi-agent tasks, method by method.

For each method -- the gold plan, the AgentToken manager (constrained and prompt-only), the ICL
manager, the clause baseline, COLA (when its team is installed), a single generalist agent --
every task goes through the one exec path (a :class:`~agentlab.run.RunSpec` given to
:func:`agentlab.run.execute`, one folder per method), and the rows give:

* **AgentMatch**: the set of domains of the executed plan's agents equals the gold set;
* **SubtaskAcc**: per gold step, a plan step of the same domain whose subtask reaches the
  BERTScore threshold (recalibrated for our scorer by :func:`calibrate_threshold`);
* **SubtaskAcc judged**: each annotated subtask of the task (``subtasks``: the evaluator checks
  that say it was done) judged on the end state, whoever planned; measured, not reported;
* **ExecutionAcc**: the task's evaluator on the end state;
* the cost per task: model calls, tokens, seconds.

:func:`measure` runs the methods and builds the table; with ``plan_only`` it measures the plans without executing them (no ExecutionAcc), on plan items that
need no task files (``data/benchmarks/two_agent_plans.jsonl``: instructions with gold plans).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import logging
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.agents.base import RunnableAgents
from agentlab.run.episode import ExecOptions
from agentlab.run.worker import EpisodeRecipe, RunSpec, Worker, execute
from agentlab.llm.roles import Backends
from agentlab.errors import ConfigError, DataError
from agentlab.eval.benchmarks import domain_map
from agentlab.tasks.spec import ExecTask
from agentlab.eval.metrics import SUBTASK_THRESHOLD, agent_match, subtask_accuracy
from agentlab.eval.variance import wilson_interval
from agentlab.experiments.execution_acc import role_means
from agentlab.llm.base import LLMBackend
from agentlab.tasks.decisions import PlanStep, RouteResult
from agentlab.metaagent.router import DEFAULT_ROUTER, Router
from agentlab.pool import AgentPool
from agentlab.llm.similarity import BertScorer
from agentlab.teams.clauses import split_clauses
from agentlab.metaagent.router import build_router
from agentlab.teams.planning import ManagerOptions, instruction_planner, router_planner

log = logging.getLogger(__name__)

#: methods in table order; "single" runs the general CLI agent on the whole task
METHODS = ("gold", "agenttoken", "agenttoken-unconstrained", "icl", "clauses", "cola", "single")
#: the generalist agent of the "single" row
GENERALIST = "CoderAgent"


@dataclass
class PlanItem:
    """A multi-agent task as the plan metrics see it."""

    id: str
    instruction: str
    gold_domains: tuple[str, ...]
    gold_plan: list[PlanStep] | None = None
    task: ExecTask | None = None


def load_plan_items(path: Path, pool: AgentPool) -> list[PlanItem]:
    """Plan items from a JSONL of ``{"id", "instruction", "plan": [{"agent", "subtask"}]}``."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            plan = [PlanStep(s["agent"], s["subtask"]) for s in rec["plan"]]
            out.append(PlanItem(rec["id"], rec["instruction"], _domains(plan, pool), plan))
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise DataError(f"not a plan item ({exc})", where=f"{path}:{i}") from None
    return out


def _domains(plan: Sequence[PlanStep], pool: AgentPool) -> tuple[str, ...]:
    out: list[str] = []
    for s in plan:
        d = pool.domain_of(s.agent) if s.agent in pool else s.agent
        if d not in out:
            out.append(d)
    return tuple(out)


def items_from_tasks(tasks: Sequence[ExecTask], pool: AgentPool) -> list[PlanItem]:
    """Plan items of task files: the gold plan's domains, else the task's ``apps`` mapped to domains
    (the pc-* desktop tasks: no gold subtasks, so no SubtaskAcc for them)."""
    apps = domain_map()["osworld_apps"]
    out = []
    for t in tasks:
        if t.plan:
            out.append(PlanItem(t.id, t.instruction, _domains(t.plan, pool), list(t.plan), t))
            continue
        doms: list[str] = []
        for a in t.apps:
            d = apps.get(a.lower().replace("-", "_"))
            if d and d not in doms:
                doms.append(d)
        out.append(PlanItem(t.id, t.instruction, tuple(doms) or (t.domain,), None, t))
    return out


def cola_available() -> bool:
    """Is the COLA team (``--team cola``) installed in this checkout?"""
    return importlib.util.find_spec("agentlab.teams.cola") is not None


# -- SubtaskAcc threshold ------------------------------------------------------------------

@dataclass
class Calibration:
    """BERTScore F1 of matching vs non-matching subtask pairs, and the threshold chosen."""

    matching: list[float]
    other: list[float]
    threshold: float
    balanced_accuracy: float

    def describe(self) -> list[str]:
        def q(v: list[float]) -> str:
            if not v:
                return "n/a"
            s = sorted(v)
            pick = lambda f: s[min(len(s) - 1, int(f * (len(s) - 1) + 0.5))]  # noqa: E731
            return f"n={len(s)} min {s[0]:.3f} p25 {pick(.25):.3f} median {pick(.5):.3f} p75 {pick(.75):.3f} max {s[-1]:.3f}"

        return [f"- matching pairs (a gold subtask vs the clause of its own instruction): {q(self.matching)}",
                f"- non-matching pairs (a gold subtask vs the clauses of the other instructions): {q(self.other)}",
                f"- threshold {self.threshold:.3f} (best balanced accuracy between the two: {self.balanced_accuracy:.3f}); "
                f"the paper's 0.77 is on another scorer's scale"]


def _aligned_clause(subtask: str, clauses: list[str]) -> str:
    words = set(subtask.lower().split())
    return max(clauses, key=lambda c: len(words & set(c.lower().split())) / (len(words | set(c.lower().split())) or 1))


def calibrate_threshold(items: Sequence[PlanItem], scorer: BertScorer) -> Calibration:
    """Matching pairs: each gold subtask and the clause of its own instruction sharing most of its
    words; non-matching: the same subtask against every clause of the other instructions. The
    threshold maximises balanced accuracy between the two."""
    pos_c, pos_r, neg_c, neg_r = [], [], [], []
    clauses = {it.id: split_clauses(it.instruction) for it in items}
    for it in items:
        for step in it.gold_plan or []:
            pos_c.append(_aligned_clause(step.subtask, clauses[it.id]))
            pos_r.append(step.subtask)
            for other in items:
                if other.id != it.id:
                    neg_c += clauses[other.id]
                    neg_r += [step.subtask] * len(clauses[other.id])
    if not pos_c:
        raise DataError("no gold subtasks to calibrate the SubtaskAcc threshold on")
    pos = [float(x) for x in scorer.pairs(pos_c, pos_r)]
    neg = [float(x) for x in scorer.pairs(neg_c, neg_r)] if neg_c else []
    best = (0.0, 0.5)
    values = sorted(set(pos + neg))
    # candidates halfway between neighbouring scores, so the threshold sits in the gap, not on a pair
    for t in [(a + b) / 2 for a, b in zip(values, values[1:])] or values:
        tpr = sum(p >= t for p in pos) / len(pos)
        tnr = sum(n < t for n in neg) / len(neg) if neg else 1.0
        if (tpr + tnr) / 2 > best[0]:
            best = ((tpr + tnr) / 2, t)
    return Calibration(pos, neg, best[1], best[0])


# -- measuring -----------------------------------------------------------------------------

@dataclass
class MethodResult:
    """One method's plans (and, when executed, its rows)."""

    method: str
    plans: list[list[PlanStep]]
    rows: list[dict[str, Any]] = field(default_factory=list)
    failures: int = 0
    seconds: list[float] = field(default_factory=list)
    skipped: str | None = None
    example: str | None = None


def plan_only_run(method: str, items: Sequence[PlanItem], planner: Callable[[str], RouteResult]) -> MethodResult:
    """Every item's plan from ``planner`` (instruction -> RouteResult), no execution."""
    res = MethodResult(method, [])
    for it in items:
        t0 = time.perf_counter()
        decided = planner(it.instruction)
        res.seconds.append(time.perf_counter() - t0)
        res.plans.append(list(decided.plan))
        res.failures += not decided.plan
        if res.example is None and decided.raw:
            res.example = decided.raw
    return res


def from_rows(method: str, items: Sequence[PlanItem], rows: Sequence[dict[str, Any]]) -> MethodResult:
    """A method's result from its exec rows (matched to items by task id)."""
    by_id = {r["id"]: r for r in rows}
    res = MethodResult(method, [])
    for it in items:
        r = by_id.get(it.id, {})
        plan = [PlanStep(s["agent"], s["subtask"]) for s in r.get("plan") or []]
        if not plan and r.get("agents"):  # a single-agent row: its agent on the whole task
            plan = [PlanStep(a, it.instruction) for a in r["agents"]]
        res.plans.append(plan)
        res.rows.append(r)
        res.failures += r.get("status") == "no_plan"
        res.seconds.append(float(r.get("seconds", 0.0)))
        if res.example is None and r.get("manager_raw"):
            res.example = str(r["manager_raw"])
    return res


def table_row(res: MethodResult, items: Sequence[PlanItem], pool: AgentPool, scorer: BertScorer | None,
              threshold: float) -> dict[str, Any]:
    """AgentMatch, SubtaskAcc, ExecutionAcc and the costs of one method (None where not measured)."""
    if res.skipped:
        return {"method": res.method, "skipped": res.skipped}
    match = agent_match([[s.agent for s in p] for p in res.plans], [list(it.gold_domains) for it in items], pool)
    with_gold = [(p, it) for p, it in zip(res.plans, items) if it.gold_plan]
    sub = None
    if with_gold and scorer is not None:
        sub = subtask_accuracy([[(s.agent, s.subtask) for s in p] for p, _ in with_gold],
                               [[(s.agent, s.subtask) for s in it.gold_plan or []] for _, it in with_gold],
                               pool, scorer, threshold=threshold).accuracy
    rows = res.rows
    judged = [j for r in rows for j in (r.get("judged_subtasks") or ())]
    mean = lambda key: statistics.mean(float(r.get(key) or 0) for r in rows) if rows else None  # noqa: E731
    return {
        "method": res.method, "tasks": len(items), "agent_match": match.accuracy, "subtask_acc": sub,
        # each annotated subtask judged by its own checks on the end state (docs/multi_agent.md)
        "judged_subtask_acc": sum(bool(j.get("success")) for j in judged) / len(judged) if judged else None,
        "judged_subtasks": len(judged),
        "execution_acc": (sum(bool(r.get("success")) for r in rows) / len(rows)) if rows else None,
        # Wilson 95 % intervals of the two executed proportions (Table 2 at n = 40 is wide either way)
        "execution_ci": wilson_interval(sum(bool(r.get("success")) for r in rows), len(rows)) if rows else None,
        "judged_subtask_ci": (wilson_interval(sum(bool(j.get("success")) for j in judged), len(judged))
                              if judged else None),
        "no_plan": res.failures, "harness_errors": sum(1 for r in rows if r.get("error")),
        "llm_calls": mean("llm_calls"), "tokens_in": mean("tokens_in"), "tokens_out": mean("tokens_out"),
        "seconds": statistics.mean(res.seconds) if res.seconds else None,
        **({"team": team_counts(rows)} if any("reviews" in r for r in rows) else {}),
        **({"roles": role_means(rows)} if rows else {}),
    }


def team_counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Totals over a team's rows of its :class:`~agentlab.teams.cola.team.Counters` fields: how often
    its reviewer judged a step, and how often that led to a retry, a reassignment, a backtrack or a
    question to a person (Table 2 asks for COLA's)."""
    from agentlab.teams.cola.team import Counters

    return {f.name: sum(int(r.get(f.name) or 0) for r in rows) for f in dataclasses.fields(Counters)}


def markdown_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The Table 2 analog as markdown lines."""
    def pct(v: Any) -> str:
        return "—" if v is None else f"{100 * v:.1f}"

    def num(v: Any, fmt: str = "{:.1f}") -> str:
        return "—" if v is None else fmt.format(v)

    def ci(v: Any) -> str:
        return "" if not v else f" [{100 * v[0]:.1f}-{100 * v[1]:.1f}]"

    out = ["| method | tasks | AgentMatch % | SubtaskAcc % | SubtaskAcc judged % [95 %] | ExecutionAcc % [95 %] | no plan | "
           "harness errors | model calls/task | tokens in/task | tokens out/task | s/task |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("skipped"):
            out.append(f"| {r['method']} | skipped: {r['skipped']} |" + " |" * 10)
            continue
        judged = ("—" if r.get("judged_subtask_acc") is None
                  else f"{pct(r['judged_subtask_acc'])}{ci(r.get('judged_subtask_ci'))} (of {r['judged_subtasks']})")
        out.append(f"| {r['method']} | {r['tasks']} | {pct(r['agent_match'])} | {pct(r['subtask_acc'])} | {judged} | "
                   f"{pct(r['execution_acc'])}{ci(r.get('execution_ci'))} | {r['no_plan']} | {r['harness_errors']} | {num(r['llm_calls'])} | "
                   f"{num(r['tokens_in'], '{:.0f}')} | {num(r['tokens_out'], '{:.0f}')} | {num(r['seconds'])} |")
    for r in rows:
        if r.get("roles"):
            parts = [f"{role} ({u['model']}): {u['llm_calls']:.1f} calls, {u['tokens_in']:.0f}/{u['tokens_out']:.0f} tokens"
                     for role, u in r["roles"].items()]
            out += ["", f"{r['method']} per role and task: " + "; ".join(parts) + "."]
    for r in rows:
        if r.get("team"):
            c = r["team"]
            out += ["", f"{r['method']} over {r['tasks']} task(s): the reviewer judged {c['reviews']} step(s), which led to "
                        f"{c['retries']} retr{'y' if c['retries'] == 1 else 'ies'}, {c['reassignments']} reassignment(s), "
                        f"{c['backtracks']} backtrack(s) and {c['questions']} question(s) to a person."]
    return out


# -- the whole table -----------------------------------------------------------------------

@dataclass
class Table2:
    """What :func:`measure` found: one row per method, the calibration and example plans."""

    rows: list[dict[str, Any]]
    results: list[MethodResult]
    calibration: Calibration | None
    threshold: float

    def markdown(self) -> list[str]:
        return markdown_table(self.rows)

    def to_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows).set_index("method")


def measure(
    methods: Sequence[str],
    items: Sequence[PlanItem],
    *,
    pool: AgentPool,
    llm: LLMBackend,
    out: Path | None = None,
    plan_only: bool = False,
    manager: ManagerOptions | None = None,
    exec_options: ExecOptions | None = None,
    calibration_items: Sequence[PlanItem] | None = None,
    scorer: BertScorer | None = None,
    routers: dict[str, Router] | None = None,
    resume: bool = False,
) -> Table2:
    """Every method on every item: plans only (``plan_only``), or executed through
    :func:`agentlab.run.execute` into ``out/<method>`` (items need their task). ``manager`` holds the managers' settings (its
    ``kind``/``constrained`` are set per method); ``exec_options`` the per-step budget etc.;
    ``routers`` may hold already-built routers by kind. ``resume``: a method's folder is kept and
    only its unfinished tasks run (its settings must match, as ``agentlab exec --resume`` checks);
    otherwise it is replaced."""
    import shutil

    base = manager or ManagerOptions()
    routers = routers if routers is not None else {}
    opts0 = exec_options or ExecOptions()

    def router(kind: str) -> Router:
        if kind not in routers:
            routers[kind] = build_router(kind, pool, progress=False)
        return routers[kind]

    def manager_options(method: str) -> ManagerOptions:
        return dataclasses.replace(base, kind="clauses" if method == "clauses" else "llm",
                                   constrained=base.constrained and method != "agenttoken-unconstrained")

    results: list[MethodResult] = []
    for method in methods:
        if method not in METHODS:
            raise ConfigError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
        t0 = time.perf_counter()
        kind = "icl" if method == "icl" else "agenttoken"
        if method == "cola" and not cola_available():
            results.append(MethodResult(method, [], skipped="the COLA team (agentlab.teams.cola) is not in this checkout"))
        elif plan_only and method in ("cola", "single"):
            results.append(MethodResult(method, [], skipped="executed only (it writes no separate plan)"))
        elif plan_only:
            if method == "gold":
                results.append(MethodResult("gold", [list(it.gold_plan or []) for it in items], seconds=[0.0] * len(items)))
            else:
                results.append(plan_only_run(method, items, instruction_planner(router(kind), llm, manager_options(method))))
        elif method == "gold" and not all(it.gold_plan for it in items):
            results.append(MethodResult(method, [], skipped="the tasks have no gold plan"))
        else:
            if out is None:
                raise ConfigError("executing the methods needs a run folder (out)")
            folder = out / method
            if folder.exists() and not resume:
                shutil.rmtree(folder)
            managed = method not in ("gold", "single", "cola")
            opts = dataclasses.replace(opts0, router=kind if managed else DEFAULT_ROUTER, mode="manager" if managed else "single",
                                       team="cola" if method == "cola" else None)
            planner = (router_planner(router(kind), llm, manager_options(method), acting=RunnableAgents(pool))
                       if managed else None)
            spec = RunSpec(EpisodeRecipe(folder, opts, agent=GENERALIST if method == "single" else None),
                           resume=resume and folder.exists())
            summary = execute(spec, [it.task for it in items if it.task is not None],
                              worker=Worker(pool, Backends(llm), planner=planner), progress=False)
            results.append(from_rows(method, items, summary.rows))
        log.info("%s: %d item(s) in %.0f s%s", method, len(items), time.perf_counter() - t0,
                 f" (skipped: {results[-1].skipped})" if results[-1].skipped else "")
    scorer = scorer or BertScorer()
    gold = [it for it in (calibration_items if calibration_items is not None else items) if it.gold_plan]
    cal = calibrate_threshold(gold, scorer) if len(gold) >= 2 else None
    threshold = cal.threshold if cal else SUBTASK_THRESHOLD
    rows = [table_row(r, items, pool, scorer, threshold) for r in results]
    return Table2(rows, results, cal, threshold)
