"""Generalists as the fallback they are meant to be: enrolment cost and multi-app share under the store policy.

The enrolment study (:mod:`agentlab.experiments.enrolment`) showed what happens when Agent S2
and PC-Agent simply join the AgentToken store: their tokens take 8.9 % of the single-application
tasks (AgentToken loses 4.8 points) while most two-application desktop tasks still go to a
specialist. This study measures the store's explicit policy
(:class:`~agentlab.metaagent.store_policy.FallbackPolicy`): route among the specialists and fall
back to the best generalist only when a signal says no specialist fits (the best specialist's
calibrated probability is low, or the generalists' summed probability is high), beyond a
threshold fitted on *held-out* demonstrations (:func:`~agentlab.metaagent.store_policy.fit_threshold`);
the signal is the one that separates the held-out demonstrations better (AUC).

Held-out demonstrations: the self-instruct ones (``data/demos``, source ``generated``). The
checkpoint before enrolment (``data/tokens/base30``) and the new agents' rows are trained on the
seed demonstrations only, so no generated demonstration was seen by any row. Specialists' ones
set the cost side of the threshold (at most ``max_specialist_fallback`` of them may fall back);
the generalists' ones show what the threshold gives them. No benchmark task is used to fit.

Multi-application detection by clause routing (:class:`~agentlab.metaagent.multiapp.ClauseDetector`,
``clauses``): each part of a request is routed on its own, and a request whose parts land in
different applications goes to a generalist (``FallbackPolicy.decide(multi_app=True)``). Its
threshold is fitted on held-out data only (:func:`~agentlab.metaagent.multiapp.held_out_requests`:
self-instruct demonstrations must stay whole, at most ``clause_budget`` of them cut; their
synthesized joins and the ``multi-*`` templates show what it catches).

Rows: before (the 30-token checkpoint), after (the generalists enrolled, no policy), after with
the policy, after with clause detection alone, and with both. Single-application tasks: the 313 OSWorld single-app + AppAgent tasks, judged by
domain (as in Table 4). Targets: the 12 two-application desktop tasks (``pc-*``), counted as
reaching a general agent.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.eval.metrics import RoutingReport, routing_accuracy
from agentlab.experiments.enrolment import checkpoint_pool
from agentlab.experiments.markdown import pct, table
from agentlab.experiments.routing_data import single_app_tasks
from agentlab.experiments.two_app_plans import load_requests
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.data import load_training_set
from agentlab.metaagent.mentions import ApplicationLexicon, multi_app_flags
from agentlab.metaagent.store import StoreRule
from agentlab.metaagent.multiapp import ClauseDetector, DetectorFit, fit_detector, held_out_requests
from agentlab.metaagent.store_policy import SIGNALS, FallbackPolicy, ThresholdFit, fallback_score, fit_threshold, separation
from agentlab.pool import AgentPool
from agentlab.tasks.spec import load_tasks

log = logging.getLogger(__name__)


class FallbackConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generalists: list[str] = Field(default_factory=lambda: ["AgentS2", "PCAgent"])
    #: the checkpoint before the generalists joined (None: ``data/tokens/base30``)
    tokens: Path | None = None
    #: the share of held-out specialist demonstrations allowed to fall back (the cost budget)
    max_specialist_fallback: float = Field(0.01, ge=0.0, le=1.0)
    #: the policy's signal (None: the one that separates the held-out demonstrations better, by AUC)
    signal: str | None = None
    #: further budgets measured side by side (the cost / coverage trade-off)
    sweep: list[float] = Field(default_factory=lambda: [0.05, 0.1, 0.2, 0.3, 0.5])
    #: the demonstrations the generalists' tokens train on (as the shipped checkpoint: seeds)
    source: str = "seed"
    #: target tasks: execution-suite ids with this prefix and env
    target_prefix: str = "pc-"
    target_env: str = "desktop"
    #: at most this many single-app tasks (None: all 313) -- for smoke runs
    max_eval_tasks: int | None = Field(None, ge=1)
    #: at most this many held-out specialist demonstrations for the threshold (None: all); every
    #: generalist one is kept -- for smoke runs (ranking ~2,800 new texts dominates a cold run)
    max_held_out: int | None = Field(None, ge=1)
    seed: int = 0
    #: the router that routes each part for multi-application detection: ``embedding`` (MiniLM,
    #: fitted on the seeds), ``agenttoken`` (the enrolled store itself), or None (no detection rows)
    clauses: str | None = "embedding"
    #: the share of held-out single-application requests the detector may cut (fits its threshold)
    clause_budget: float = Field(0.01, ge=0.0, le=1.0)
    #: held-out requests of each kind the detector's threshold is fitted on
    clause_held_out: int = Field(400, ge=10)
    #: also measure multi-application detection by named applications (:mod:`agentlab.metaagent.mentions`):
    #: a request naming two applications of one platform goes to a generalist
    mentions: bool = True


@dataclass
class Row:
    """One configuration of the store."""

    name: str
    agents: int
    single: RoutingReport
    #: single-app tasks routed to a generalist
    single_to_generalist: float
    #: target tasks routed to a generalist
    target_to_generalist: float
    target_routes: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Fallback:
    rows: list[Row]
    fit: ThresholdFit
    generalists: list[str]
    temperature: float
    single_tasks: int
    target_tasks: int
    seconds: float = 0.0
    signal: str = "specialist"
    #: held-out AUC of each signal (generalist vs specialist demonstrations)
    auc: dict[str, float] = field(default_factory=dict)
    #: (budget, fit, single-app accuracy, single-app to generalists, targets to generalists) per swept budget
    sweep: list[tuple[float, ThresholdFit, float, float, float]] = field(default_factory=list)
    #: the clause detector's router and fit (None: no detection rows)
    clauses: str | None = None
    clause_fit: DetectorFit | None = None
    #: the clause detector alone at larger held-out budgets: (budget, fit, single-app accuracy,
    #: single-app to generalists, targets to generalists)
    clause_sweep: list[tuple[float, ThresholdFit, float, float, float]] = field(default_factory=list)
    #: named-application detection on the held-out requests: (single-app ones flagged, two-app ones
    #: flagged, how many of each); None: not measured
    mention_held: tuple[float, float, int, int] | None = None
    #: the frozen plain-word two-application requests (``data/benchmarks/two_app_requests.jsonl``,
    #: which rarely name an application): the share each detector flags, and how many there are
    plain_flagged: dict[str, float] = field(default_factory=dict)
    plain_requests: int = 0

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)

    def to_record(self, *, command: str) -> dict[str, Any]:
        """The figures a notebook plots without measuring (``benchmarks/results/generalist_fallback.json``)."""
        return {"command": command, "single_tasks": self.single_tasks, "target_tasks": self.target_tasks,
                "signal": self.signal, "threshold": self.fit.threshold,
                "rows": [{"name": r.name, "agents": r.agents, "single_accuracy": r.single.accuracy,
                          "single_to_generalist": r.single_to_generalist,
                          "target_to_generalist": r.target_to_generalist, "target_routes": r.target_routes}
                         for r in self.rows],
                "mention_held": list(self.mention_held) if self.mention_held else None,
                "plain_flagged": self.plain_flagged, "plain_requests": self.plain_requests}

    def summary(self) -> dict[str, float | int | str]:
        before, plain, policy = (self.row(n) for n in ("before", "after", "after+policy"))
        out: dict[str, float | int | str] = {"single_before": before.single.accuracy, "single_after": plain.single.accuracy,
                "single_after_policy": policy.single.accuracy,
                "cost_points_policy": round(100 * (before.single.accuracy - policy.single.accuracy), 2),
                "targets_to_generalist_after": plain.target_to_generalist,
                "targets_to_generalist_policy": policy.target_to_generalist, "threshold": self.fit.threshold,
                "signal": self.signal}
        for name, key in (("after+clauses", "clauses"), ("after+policy+clauses", "policy_clauses"),
                          ("after+mentions", "mentions"), ("after+clauses+mentions", "clauses_mentions"),
                          ("after+policy+clauses+mentions", "policy_clauses_mentions"), ("store", "store")):
            if any(r.name == name for r in self.rows):
                r = self.row(name)
                out |= {f"single_after_{key}": r.single.accuracy,
                        f"cost_points_{key}": round(100 * (before.single.accuracy - r.single.accuracy), 2),
                        f"targets_to_generalist_{key}": r.target_to_generalist}
        if self.clause_fit is not None:
            out |= {"clause_threshold": round(self.clause_fit.fit.threshold, 4), "clause_router": str(self.clauses)}
        return out

    def markdown(self) -> list[str]:
        f = self.fit
        what = ("the best specialist's calibrated probability is below" if self.signal == "specialist"
                else "the generalists' summed calibrated probability is above")
        thr = 1 - f.threshold if self.signal == "specialist" else f.threshold
        body = [
            f"Generalists: {', '.join(self.generalists)}, enrolled into the 30-token checkpoint (`data/tokens/base30`) one "
            f"row each (seed demonstrations). Single-application tasks: {self.single_tasks} (judged by domain, as in "
            f"Table 4); targets: the {self.target_tasks} two-application desktop tasks (`pc-*`), counted as reaching a "
            f"general agent. Policy: route among the specialists; fall back to the best generalist when {what} "
            f"**{thr:.4f}** (softmax over all 32 agents at the checkpoint's temperature {self.temperature:.2f}).",
            "",
            f"Fitted on held-out demonstrations only (self-instruct ones; no row was trained on them): the signal that "
            f"separates the {f.n_generalist} generalist from the {f.n_specialist} specialist demonstrations better (AUC "
            + ", ".join(f"{k} {v:.3f}" for k, v in self.auc.items()) + f"), at the threshold where at most "
            f"{100 * f.max_specialist_fallback:.0f} % of the specialist demonstrations fall back ({100 * f.specialist_fallback:.1f} % "
            f"do; {100 * f.generalist_fallback:.1f} % of the generalist ones do).",
            "",
            *table(["store", "agents", "single-app accuracy %", "single-app to a generalist %",
                    f"two-app targets to a generalist % (of {self.target_tasks})"],
                   [[r.name, r.agents, pct(r.single.accuracy), pct(r.single_to_generalist), pct(r.target_to_generalist)]
                    for r in self.rows]),
            "",
        ]
        before, policy = self.row("before"), self.row("after+policy")
        cost = 100 * (before.single.accuracy - policy.single.accuracy)
        body += [f"Enrolment cost on single-app tasks with the policy: {cost:+.1f} points (goal: at most 1); two-app targets "
                 f"reaching a general agent: {pct(policy.target_to_generalist)} % (goal: at least 80 %).", ""]
        if self.clause_fit is not None:
            c = self.clause_fit
            body += [f"Multi-application detection by clause routing (`agentlab.metaagent.multiapp`): each part of a request "
                     f"(cut at sentence ends, ';', 'then', 'and', ...) is routed on its own with the {self.clauses} router; a "
                     f"request whose best cut puts its two halves in different applications with a score above "
                     f"**{c.fit.threshold:.4f}** goes to a generalist. The threshold is fitted on held-out data only: at most "
                     f"{100 * c.fit.max_specialist_fallback:.0f} % of {c.negatives} self-instruct single-application "
                     f"demonstrations may be cut ({100 * c.fit.specialist_fallback:.1f} % are); of {c.positives} two-application "
                     f"requests synthesized from them (and the `multi-*` templates) {100 * c.fit.generalist_fallback:.1f} % are "
                     f"cut (AUC {c.auc:.3f}). Rows `after+clauses` (detection alone) and `after+policy+clauses` (both).", ""]
            for name in ("after+clauses", "after+policy+clauses"):
                r = self.row(name)
                body.append(f"- {name}: cost {100 * (before.single.accuracy - r.single.accuracy):+.1f} points, two-app targets "
                            f"to a general agent {pct(r.target_to_generalist)} %.")
            body.append("")
            if self.clause_sweep:
                body += ["The clause detector alone (`after+clauses`) at larger held-out budgets (each threshold fitted on the "
                         "held-out requests only; the benchmark columns are measured, not used to choose).", "",
                         *table(["held-out single-app budget %", "threshold", "held-out two-app requests cut %",
                                 "single-app accuracy %", "cost (points)", "single-app to a generalist %",
                                 "two-app targets to a generalist %"],
                                [[f"{100 * b:.0f}", f"{fit.threshold:.4f}", pct(fit.generalist_fallback), pct(acc),
                                  f"{100 * (before.single.accuracy - acc):+.1f}", pct(to_gen), pct(tgt)]
                                 for b, fit, acc, to_gen, tgt in self.clause_sweep]), ""]
        if self.mention_held is not None:
            fs, fm, ns, nm = self.mention_held
            body += ["Multi-application detection by named applications (`agentlab.metaagent.mentions`): a request that "
                     "names two applications of one platform (product names and file kinds read from the specialists' "
                     "`# Applications` lines, e.g. 'LibreOffice Calc', '.docx') goes to a generalist. No threshold: on the "
                     f"held-out requests it flags {pct(fs)} % of {ns} single-application and {pct(fm)} % of {nm} "
                     "two-application ones (those rarely name their applications). Rows `after+mentions` (alone), "
                     "`after+clauses+mentions` (either detector) and `after+policy+clauses+mentions` (the store's full policy).",
                     ""]
            for name in ("after+mentions", "after+clauses+mentions", "after+policy+clauses+mentions"):
                r = self.row(name)
                body.append(f"- {name}: cost {100 * (before.single.accuracy - r.single.accuracy):+.1f} points, two-app targets "
                            f"to a general agent {pct(r.target_to_generalist)} %.")
            body.append("")
        if any(r.name == "store" for r in self.rows):
            r = self.row("store")
            body += [f"Row `store`: the store's policy as `agentlab route` and `agentlab exec` apply it by default "
                     "(`agentlab.metaagent.store`: each task among its device's agents, specialists first, a generalist "
                     f"for a request naming two applications): single-app accuracy {pct(r.single.accuracy)} % (the other rows "
                     f"let every device's agents compete, so this one also holds what device-aware routing gains), two-app "
                     f"targets to a general agent {pct(r.target_to_generalist)} %.", ""]
        if self.plain_flagged:
            body += [f"The {self.plain_requests} plain-word two-application requests of the manager study "
                     "(`data/benchmarks/two_app_requests.jsonl`: they describe documents, not applications) flagged as "
                     "multi-application: " + ", ".join(f"{k} {pct(v)} %" for k, v in self.plain_flagged.items())
                     + ". Named applications catch only requests that name them.", ""]
        if self.sweep:
            body += ["The trade-off: the same signal at larger held-out budgets (each threshold still fitted on the "
                     "demonstrations only; the benchmark columns are measured, not used to choose).", "",
                     *table(["held-out specialist budget %", "threshold", "held-out generalist demos falling back %",
                             "single-app accuracy %", "cost (points)", "single-app to a generalist %",
                             "two-app targets to a generalist %"],
                            [[f"{100 * b:.0f}", f"{(1 - fit.threshold) if self.signal == 'specialist' else fit.threshold:.4f}",
                              pct(fit.generalist_fallback), pct(acc), f"{100 * (before.single.accuracy - acc):+.1f}",
                              pct(to_gen), pct(tgt)] for b, fit, acc, to_gen, tgt in self.sweep]), ""]
        body.append("Where the targets went with the policy: " + ", ".join(
            f"{k} -> {v}" for k, v in sorted(policy.target_routes.items())) + ".")
        if self.clause_fit is not None:
            body += ["", "With the policy and clause detection: " + ", ".join(
                f"{k} -> {v}" for k, v in sorted(self.row("after+policy+clauses").target_routes.items())) + "."]
        if self.mention_held is not None:
            body += ["", "With the store's full policy (signal, clauses, named applications): " + ", ".join(
                f"{k} -> {v}" for k, v in sorted(self.row("after+policy+clauses+mentions").target_routes.items())) + "."]
        return body


def load_record(path: Path) -> dict[str, Any]:
    """A record :meth:`Fallback.to_record` wrote; a :class:`~agentlab.errors.DataError` naming the
    file when it is not one."""
    import json

    from agentlab.errors import DataError

    try:
        rec = json.loads(path.read_text())
        rows = rec["rows"]
        for r in rows:
            float(r["single_accuracy"]), float(r["target_to_generalist"]), str(r["name"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"not a generalist-fallback record ({exc.__class__.__name__}: {exc})", where=str(path)) from exc
    return dict(rec)


def bars(record: dict[str, Any]) -> dict[str, dict[str, float]]:
    """What the notebook's grouped bars show, per store configuration: single-application accuracy
    and the two-application targets reaching a generalist (the issue's two goals side by side)."""
    out: dict[str, dict[str, float]] = {"single-app accuracy": {}, "two-app targets to a generalist": {}}
    for r in record["rows"]:
        out["single-app accuracy"][r["name"]] = float(r["single_accuracy"])
        out["two-app targets to a generalist"][r["name"]] = float(r["target_to_generalist"])
    return out


def costs(record: dict[str, Any]) -> dict[str, float]:
    """Each configuration's enrolment cost in points of single-application accuracy against
    ``before`` (positive: worse). ``store`` is left out: it routes each task on its device, the
    others do not, so its difference is not a cost of enrolling."""
    rows = record["rows"]
    before = next((float(r["single_accuracy"]) for r in rows if r["name"] == "before"), None)
    if before is None:
        return {}
    return {r["name"]: round(100 * (before - float(r["single_accuracy"])), 2) for r in rows
            if r["name"] not in ("before", "store")}


def _row(name: str, picks: list[str | None], gold: list[str], pool: AgentPool, gen: set[str],
         target_ids: list[str], target_picks: list[str | None], agents: int) -> Row:
    share = lambda ps: sum(p in gen for p in ps) / len(ps) if ps else 0.0  # noqa: E731
    return Row(name, agents, routing_accuracy(picks, gold, pool), share(picks), share(target_picks),
               dict(zip(target_ids, target_picks)))


def run(pool: AgentPool, config: FallbackConfig, *, router_options: dict[str, Any] | None = None) -> Fallback:
    """Before / after / after with the policy on the same tasks (``pool`` holds the generalists)."""
    from agentlab.paths import data_dir

    t0 = time.perf_counter()
    gen = set(config.generalists)
    for name in config.generalists:
        pool.get(name)
    tokens = config.tokens or data_dir() / "tokens" / "base30"
    pool = checkpoint_pool(pool, tokens, list(config.generalists))
    base_pool = pool.subset([n for n in pool.names if n not in gen])
    opts = {"progress": False, **(router_options or {})}
    before = AgentTokenRouter.load(tokens, base_pool, **opts)
    after = AgentTokenRouter.load(tokens, pool, **opts)
    data = load_training_set(pool, source=config.source, seed=config.seed)  # type: ignore[arg-type]
    for name in config.generalists:
        after.add_agent(name, data)
    single = single_app_tasks(base_pool)[: config.max_eval_tasks] if config.max_eval_tasks else single_app_tasks(base_pool)
    texts, gold = [t.instruction for t in single], [t.domain or "" for t in single]
    targets = {t.id: t.instruction for t in load_tasks()
               if t.id.startswith(config.target_prefix) and getattr(t, "env", None) == config.target_env}
    tids, ttexts = list(targets), list(targets.values())

    # the signal and threshold, from held-out demonstrations only
    held = load_training_set(pool, source="generated", seed=config.seed)
    if config.max_held_out is not None:
        spec_idx = [i for i, y in enumerate(held.labels) if held.agents[y] not in gen]
        keep = set(random.Random(config.seed).sample(spec_idx, min(config.max_held_out, len(spec_idx))))
        held = held.subset([i for i, y in enumerate(held.labels) if held.agents[y] in gen or i in keep])
    is_gen = [held.agents[y] in gen for y in held.labels]
    held_rank = after.rank(held.texts)
    scores = {sig: [fallback_score(r, gen, sig) for r in held_rank] for sig in SIGNALS}
    split = lambda xs, want: [x for x, g in zip(xs, is_gen) if g == want]  # noqa: E731
    auc = {sig: separation(split(xs, False), split(xs, True)) for sig, xs in scores.items()}
    signal = config.signal or max(SIGNALS, key=lambda sig: auc[sig])
    fits = {b: fit_threshold(split(scores[signal], False), split(scores[signal], True), max_specialist_fallback=b)
            for b in [config.max_specialist_fallback, *config.sweep]}
    fit = fits[config.max_specialist_fallback]
    policy = FallbackPolicy(tuple(config.generalists), fit.threshold, signal)

    rows = [_row("before", [r.agent for r in before.route(texts)], gold, base_pool, gen, tids,
                 [r.agent for r in before.route(ttexts)], len(before.agents))]
    routed, troute = after.route(texts), after.route(ttexts)
    rows.append(_row("after", [r.agent for r in routed], gold, pool, gen, tids, [r.agent for r in troute], len(after.agents)))
    # the policy reads the prompt-end ranking (what the threshold was fitted on) and keeps the decoded specialist
    ranks, tranks = after.rank(texts), after.rank(ttexts)

    def apply(p: FallbackPolicy, name: str = "after+policy", multi: list[bool] | None = None,
              tmulti: list[bool] | None = None) -> Row:
        m, tm = multi or [False] * len(ranks), tmulti or [False] * len(tranks)
        decided = [p.decide(rk, r.agent, multi_app=x).agent for rk, r, x in zip(ranks, routed, m)]
        tdecided = [p.decide(rk, r.agent, multi_app=x).agent for rk, r, x in zip(tranks, troute, tm)]
        return _row(name, list(decided), gold, pool, gen, tids, list(tdecided), len(after.agents))

    rows.append(apply(policy))
    clause_fit = None
    clause_sweep: list[tuple[float, ThresholdFit, float, float, float]] = []
    never = FallbackPolicy(tuple(config.generalists), float("inf"), signal)
    if config.clauses is not None or config.mentions:
        single_held, multi_held = held_out_requests(pool, n=config.clause_held_out, seed=config.seed)
    multi = tmulti = None
    if config.clauses is not None:
        from agentlab.metaagent.router import router_class

        if config.clauses == "agenttoken":
            ranker: Any = after
        else:  # fitted on the seeds, like the checkpoint: the self-instruct demonstrations stay held out for the fit
            ranker = router_class(config.clauses)(pool, progress=False)
            ranker.fit(data)
        detector = ClauseDetector(ranker)
        clause_fit = fit_detector(detector, single_held, multi_held, max_false_multi=config.clause_budget)
        multi = [d.multi for d in detector.detect_many(texts)]
        tmulti = [d.multi for d in detector.detect_many(ttexts)]
        rows.append(apply(never, "after+clauses", multi, tmulti))
        rows.append(apply(policy, "after+policy+clauses", multi, tmulti))
        # the same detector at larger budgets: with two parts, a request is cut exactly when its score passes
        neg, pos = detector.scores(single_held), detector.scores(multi_held)  # routed already: cached
        cs, tcs = detector.scores(texts), detector.scores(ttexts)
        for b in [x for x in config.sweep if x > config.clause_budget][:3]:
            f = fit_threshold(neg, pos, max_specialist_fallback=b)
            r = apply(never, "after+clauses", [x > f.threshold for x in cs], [x > f.threshold for x in tcs])
            clause_sweep.append((b, f, r.single.accuracy, r.single_to_generalist, r.target_to_generalist))
    plain = load_requests(data_dir() / "benchmarks" / "two_app_requests.jsonl", pool)
    ptexts = [r.instruction for r in plain]
    plain_flagged: dict[str, float] = {}
    pmulti: list[bool] | None = None
    if config.clauses is not None:
        pmulti = [d.multi for d in detector.detect_many(ptexts)]
        plain_flagged["clauses"] = sum(pmulti) / max(len(pmulti), 1)
    mention_held = None
    if config.mentions:
        lexicon = ApplicationLexicon.from_pool(pool)
        named, tnamed = multi_app_flags(lexicon, texts), multi_app_flags(lexicon, ttexts)
        hs, hm = multi_app_flags(lexicon, single_held), multi_app_flags(lexicon, multi_held)
        mention_held = (sum(hs) / max(len(hs), 1), sum(hm) / max(len(hm), 1), len(hs), len(hm))
        rows.append(apply(never, "after+mentions", named, tnamed))
        either = [a or b for a, b in zip(multi or named, named)]
        teither = [a or b for a, b in zip(tmulti or tnamed, tnamed)]
        rows.append(apply(never, "after+clauses+mentions", either, teither))
        rows.append(apply(policy, "after+policy+clauses+mentions", either, teither))
        pnamed = multi_app_flags(lexicon, ptexts)
        plain_flagged["named applications"] = sum(pnamed) / max(len(pnamed), 1)
        plain_flagged["either"] = sum(a or b for a, b in zip(pmulti or pnamed, pnamed)) / max(len(pnamed), 1)
    # what `agentlab route` and `agentlab exec` do by default: the device, specialists first, named applications
    rule = StoreRule(pool)
    store = [rule.decide(r, t, task.platform).agent for r, t, task in zip(routed, texts, single)]
    tstore = [rule.decide(r, t, "desktop").agent for r, t in zip(troute, ttexts)]
    rows.append(_row("store", store, gold, pool, gen, tids, tstore, len(after.agents)))
    sweep = []
    for b in config.sweep:
        r = apply(FallbackPolicy(tuple(config.generalists), fits[b].threshold, signal))
        sweep.append((b, fits[b], r.single.accuracy, r.single_to_generalist, r.target_to_generalist))
    for r in rows:
        log.info("%s: single-app %.3f, to generalists %.3f, targets to generalists %.3f", r.name, r.single.accuracy,
                 r.single_to_generalist, r.target_to_generalist)
    return Fallback(rows, fit, list(config.generalists), float(after.temperature), len(single), len(ttexts),
                    time.perf_counter() - t0, signal=signal, auc=auc, sweep=sweep, clauses=config.clauses,
                    clause_fit=clause_fit, clause_sweep=clause_sweep, mention_held=mention_held,
                    plain_flagged=plain_flagged, plain_requests=len(plain))
