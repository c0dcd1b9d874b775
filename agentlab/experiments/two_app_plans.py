"""The manager on two-application requests in plain words: AgentMatch with and without the plan grammar.

``data/benchmarks/two_app_requests.jsonl`` holds requests written for this study (frozen: not the
synthesized templates of ``data/tasks/multi-*``), each naming two applications in everyday words,
with the gold pair of domains and the agents that serve them. Each *variant* is a manager setting
(:class:`~agentlab.metaagent.manager.HashManager` keywords: the default constrained manager over
the top-K specialists, ``constrained=False`` the prompt-only ablation, ``generalists=True`` with
general agents among the candidates); all use the same router ranking, prompt and backbone.
The ``clause*`` variants add multi-application detection by clause routing
(:class:`~agentlab.metaagent.multiapp.ClauseDetector`, ``clauses`` names the router that routes
the request's parts: ``agenttoken`` the study's own, ``embedding`` MiniLM on the seeds): the
candidates are the parts' agents when they land in different applications (the top-2 of
different domains otherwise); ``clause_steps`` writes the plan from the parts without the model.
Their threshold is the manager's default, 0 (a request sent to the planner is expected to need
several applications; the store policy's detector fits a stricter one on held-out data:
:mod:`agentlab.experiments.generalist_fallback`).

Scores per variant: AgentMatch (the set of the plan's agent domains equals the gold pair; a task
without a plan is a miss), agent-level match (additionally every step's agent is one of the gold
agents), the share of plans with a general-agent step, no-plan failures, plan length and
seconds per task. Plans are appended per task to ``preds/<variant>.jsonl`` when a folder is
given, so an interrupted run resumes (and variants can run in separate processes first).
"""

from __future__ import annotations

import logging
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import DataError
from agentlab.eval.metrics import agent_match, topk_recall
from agentlab.experiments.markdown import pct, table
from agentlab.fileio import append_jsonl, read_jsonl
from agentlab.metaagent.manager import HashManager
from agentlab.metaagent.multiapp import ClauseDetector
from agentlab.metaagent.router import Router
from agentlab.metaagent.store_policy import is_generalist
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.llm.base import LLMBackend

log = logging.getLogger(__name__)

#: name -> HashManager keywords (beyond the shared ones; ``k`` overrides the config's top-K)
VARIANTS: dict[str, dict[str, Any]] = {
    "constrained": {},
    "unconstrained": {"constrained": False},
    "constrained+generalists": {"generalists": True},
    # the router picks the applications, the model writes the split: two candidates of different domains, <= 2 steps
    "constrained-top2": {"k": 2, "distinct_domains": True, "max_plan_steps": 2},
    # multi-application detection by clause routing picks the candidates (see the module docstring)
    "clauses-top2": {"k": 2, "distinct_domains": True, "max_plan_steps": 2, "clauses": "embedding"},
    "clause-steps": {"k": 2, "distinct_domains": True, "max_plan_steps": 2, "clauses": "embedding", "clause_steps": True},
    "clause-steps-agenttoken": {"k": 2, "distinct_domains": True, "max_plan_steps": 2, "clauses": "agenttoken",
                                "clause_steps": True},
}
#: keys of :data:`VARIANTS` that set up the study rather than the manager
STUDY_KEYS = ("k", "clauses")


class TwoAppConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variants: list[str] = Field(default_factory=lambda: list(VARIANTS))
    #: the router's top-K candidates whose documents the manager sees
    k: int = Field(5, ge=1)
    #: at most this many requests (None: all)
    limit: int | None = Field(None, ge=1)


@dataclass(frozen=True)
class Request:
    id: str
    instruction: str
    domains: tuple[str, ...]
    gold_agents: tuple[str, ...]


def load_requests(path: Path, pool: AgentPool) -> list[Request]:
    """The frozen requests; every gold domain and agent must exist in ``pool``."""
    domains = {a.domain for a in pool}
    out = []
    for i, r in enumerate(read_jsonl(path, tolerate_torn_tail=False), start=1):
        req = Request(str(r["id"]), r["instruction"], tuple(r["domains"]), tuple(r.get("gold_agents", ())))
        if len(set(req.domains)) != 2 or not set(req.domains) <= domains:
            raise DataError(f"needs two distinct domains served by the pool, has {list(req.domains)}", where=f"{path}:{i}")
        if unknown := [a for a in req.gold_agents if a not in pool.names]:
            raise DataError(f"gold agent '{unknown[0]}' is not in the pool", where=f"{path}:{i}")
        out.append(req)
    return out


@dataclass
class VariantResult:
    name: str
    settings: dict[str, Any]
    records: list[dict[str, Any]]
    agent_match: float
    agent_level: float
    with_generalist: float
    failed: int
    steps: Counter[int] = field(default_factory=Counter)
    seconds_per_task: float = 0.0
    resumed: int = 0


@dataclass
class TwoAppPlans:
    requests: int
    k: int
    topk_recall: float
    variants: list[VariantResult]
    model: str = ""
    #: reference without the manager: the two best-ranked specialists of different domains as the "plan"
    router_pair: float = 0.0
    #: when variants cover different requests: (how many all cover, each variant's AgentMatch on those)
    common: tuple[int, dict[str, float]] | None = None
    #: clause detection without a manager (threshold 0): router kind -> the share of requests whose detected
    #: applications are the gold pair, and the share detected as multi-application at all
    detection: dict[str, tuple[float, float]] = field(default_factory=dict)

    def summary(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"requests": self.requests, f"top{self.k}_recall": self.topk_recall,
                                       "router_pair_agentmatch": self.router_pair}
        for v in self.variants:
            out |= {f"{v.name}_agentmatch": v.agent_match, f"{v.name}_agent_level": v.agent_level, f"{v.name}_failed": v.failed}
        for kind, (pair, _multi) in self.detection.items():
            out[f"clause_pair_{kind}"] = pair
        return out

    def markdown(self, source: str) -> list[str]:
        body = [
            f"{self.requests} two-application requests in plain words (`{source}`, written for this study, gold = the two "
            f"applications' domains and their agents); router: shipped AgentToken tokens, top-{self.k} candidates; "
            f"manager backbone `{self.model}`; plans only (not executed). Top-{self.k} recall of the gold domains in the "
            f"router's full ranking: {pct(self.topk_recall)} %.",
            "",
            *table(["manager", "requests", "AgentMatch %", "agent-level match %", "plans with a generalist step %", "no plan",
                    "steps (1/2/3)", "s/task"],
                   [[v.name, len(v.records), pct(v.agent_match), pct(v.agent_level), pct(v.with_generalist), v.failed,
                     "/".join(str(v.steps.get(n, 0)) for n in (1, 2, 3)), f"{v.seconds_per_task:.1f}"] for v in self.variants]),
            "",
            "constrained: the default everywhere (plan grammar over the top-K specialists: only their names, never one agent "
            "twice in a row, at most 3 steps). unconstrained: the same prompt without the grammar (`--unconstrained`), one "
            "corrective retry. +generalists: general agents (AgentS2, PCAgent, AppAgent) among the top-K candidates "
            "(`--generalists`). constrained-top2: the router's two best specialists of different domains as the only "
            "candidates and at most 2 steps (`--k 2 --distinct-domains --max-plan-steps 2`): the router picks the "
            "applications, the model writes the split. clauses-top2: the same, but the candidates are the agents of the "
            "request's parts routed one by one with the MiniLM embedding router when they land in different applications "
            "(`--clauses --clause-router embedding`; multi-application detection, `agentlab.metaagent.multiapp`). "
            "clause-steps: the parts themselves are the steps, no generation (`--clause-steps`); -agenttoken: the parts "
            "routed by the study's AgentToken router. AgentMatch: the set of the plan's agent domains equals the gold pair; agent-level: also every "
            "step's agent is a gold agent. s/task: wall time on a 2-core machine shared with other jobs (indicative). "
            "The plans in `--preds` were made by this script (one variant per process, side by side), then scored "
            "together; without the folder the same command plans everything serially.",
            "",
            f"Reference without a manager (no generation): the router's two best-ranked specialists of different domains, "
            f"taken as the plan's agents, match the gold pair on {pct(self.router_pair)} % of the requests.",
        ]
        if self.detection:
            body += ["", "Clause detection alone (no manager, threshold 0 as in `--clauses`): the request's parts routed one "
                     "by one (`agentlab.metaagent.multiapp.ClauseDetector`); pair = the detected applications are exactly the "
                     "gold pair; multi = detected as needing more than one application.", "",
                     *table(["parts routed by", "pair matches gold %", "detected multi-application %"],
                            [[kind, pct(pair), pct(multi)] for kind, (pair, multi) in self.detection.items()])]
        if self.common is not None:
            n, scores = self.common
            body += ["", f"Not every variant planned every request (its row says how many, in file order); on the {n} "
                     "requests all variants planned: " + ", ".join(f"{k} {pct(a)} %" for k, a in scores.items()) + "."]
        for v in self.variants:
            ex = next((r for r in v.records if r.get("plan")), None)
            if ex is not None:
                body += ["", f"Example {v.name} plan ({ex['id']}):", "", "```",
                         *(f"###{s['agent']}: {s['subtask'][:100]}###" for s in ex["plan"]), "```"]
        return body


def router_pair(ranking: Sequence[str], pool: AgentPool) -> list[str]:
    """The two best-ranked specialists of different domains (fewer if the ranking has fewer)."""
    out: list[str] = []
    for name in ranking:
        doc = pool.get(name)
        if not is_generalist(doc) and all(pool.get(o).domain != doc.domain for o in out):
            out.append(name)
        if len(out) == 2:
            break
    return out


def _score(name: str, settings: dict[str, Any], records: list[dict[str, Any]], reqs: Sequence[Request],
           pool: AgentPool, resumed: int) -> VariantResult:
    by_id = {r["id"]: r for r in records}
    plans = [[s["agent"] for s in by_id[q.id].get("plan", [])] for q in reqs]
    match = agent_match(plans, [list(q.domains) for q in reqs], pool)
    level = sum(bool(p) and set(p) <= set(q.gold_agents) and {pool.get(a).domain for a in p} == set(q.domains)
                for p, q in zip(plans, reqs)) / len(reqs)
    general = sum(any(is_generalist(pool.get(a)) for a in p) for p in plans) / len(reqs)
    secs = [float(by_id[q.id].get("seconds", 0.0)) for q in reqs]
    return VariantResult(name, settings, [by_id[q.id] for q in reqs], match.accuracy, level, general,
                         sum(not p for p in plans), Counter(len(p) for p in plans if p), statistics.mean(secs), resumed)


def run(router: Router, backend: LLMBackend, reqs: Sequence[Request], config: TwoAppConfig, *,
        preds: Path | None = None, plan_missing: bool = True) -> TwoAppPlans:
    """Every variant's plans for ``reqs`` (resumed from ``preds/<variant>.jsonl`` where present).

    ``plan_missing=False`` plans nothing: each variant is scored on the requests ``preds`` holds
    for it (its row says how many), and :attr:`TwoAppPlans.common` on those all variants hold."""
    reqs = list(reqs[: config.limit] if config.limit else reqs)
    pool = router.pool
    rankings = router.rank([q.instruction for q in reqs])
    recall = topk_recall([[n for n, _ in r] for r in rankings], [list(q.domains) for q in reqs], pool, config.k)
    pair = agent_match([router_pair([n for n, _ in r], pool) for r in rankings], [list(q.domains) for q in reqs], pool)
    detectors: dict[str, ClauseDetector] = {}

    def detector(kind: str) -> ClauseDetector:
        """One detector per router kind (its routed parts are cached), built as ``agentlab route`` builds one."""
        if kind not in detectors:
            from agentlab.metaagent.router import build_router

            detectors[kind] = ClauseDetector(router if kind == router.name else build_router(kind, pool, progress=False))
        return detectors[kind]

    detection: dict[str, tuple[float, float]] = {}
    for kind in dict.fromkeys(str(VARIANTS[n]["clauses"]) for n in config.variants if "clauses" in VARIANTS[n]):
        found = detector(kind).detect_many([q.instruction for q in reqs])
        detection[kind] = (sum(set(f.domains) == set(q.domains) for f, q in zip(found, reqs)) / len(reqs),
                           sum(f.multi for f in found) / len(reqs))
    out = []
    for name in config.variants:
        settings = VARIANTS[name]
        k = int(settings.get("k", config.k))
        extra: dict[str, Any] = {}
        if "clauses" in settings:
            extra["clauses"] = detector(str(settings["clauses"]))
        manager = HashManager(backend, **{key: v for key, v in settings.items() if key not in STUDY_KEYS}, **extra)
        path = preds / f"{name}.jsonl" if preds else None
        done = {r["id"]: r for r in read_jsonl(path)} if path and path.exists() else {}
        records = []
        for q in reqs:
            if q.id in done:
                records.append(done[q.id])
                continue
            if not plan_missing:
                continue
            t0 = time.perf_counter()
            res = router.plan([q.instruction], manager, k=k)[0]
            rec = res.as_record(q.id) | {"seconds": round(time.perf_counter() - t0, 2)}
            records.append(rec)
            if path is not None:
                append_jsonl(path, rec)
            log.info("%s %s: %s", name, q.id, [s["agent"] for s in rec["plan"]] or rec.get("error", "")[:120])
        have = {r["id"] for r in records}
        v = _score(name, settings, records, [q for q in reqs if q.id in have], pool, resumed=sum(q.id in done for q in reqs))
        log.info("%s: AgentMatch %.3f (%d resumed)", name, v.agent_match, v.resumed)
        out.append(v)
    study = TwoAppPlans(len(reqs), config.k, recall, out, model=getattr(backend, "model_id", "?"), router_pair=pair.accuracy,
                        detection=detection)
    ids = set.intersection(*({r["id"] for r in v.records} for v in out)) if out else set()
    if any(len(v.records) < len(reqs) for v in out) and ids:
        sub = [q for q in reqs if q.id in ids]
        study.common = (len(sub), {v.name: _score(v.name, v.settings, [r for r in v.records if r["id"] in ids], sub, pool, 0).agent_match
                                 for v in out})
    return study
