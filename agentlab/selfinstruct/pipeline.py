"""The self-instruct loop: generate, leakage-check and filter in rounds until each agent has N demos.

Agents are served round-robin (one round each, then the next round), so a run cut short by a
time budget or Ctrl-C leaves every agent equally advanced; each finished round is committed to
the journal before the next starts, and a rerun resumes from there.

On several workers (``scale``, :mod:`agentlab.parallel`) each agent is a shard: a worker loads its
own generator and scorer, runs that agent's rounds until it stops, and hands the rounds back; only
this process writes the journal, committing a shard's rounds when it ends. An agent's rounds depend
only on its own state and seed, so the journal equals a serial run's with ``agents_per_batch: 1``
(the seconds aside); batching agents into one generate call is a serial-only throughput trick.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentlab.dialogue.templates import load_template
from agentlab.errors import ConfigError
from agentlab.record.manifest import open_run
from agentlab.parallel import Scale, map_unordered
from agentlab.pool import AgentDocument, AgentPool
from agentlab.selfinstruct.calibrate import calibrate
from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds
from agentlab.selfinstruct.filter import score_and_filter
from agentlab.selfinstruct.generate import (
    GenerationSettings,
    make_prompts,
    normalize,
    parse_outputs,
    run_generator,
    sampling_params,
)
from agentlab.selfinstruct.leakage import LeakageFilter
from agentlab.selfinstruct.manifest import selfinstruct_manifest
from agentlab.selfinstruct.quality import QualityCheck
from agentlab.selfinstruct.report import SelfInstructReport, build_agent_report
from agentlab.selfinstruct.scorer import load_scorer
from agentlab.selfinstruct.store import AgentState, Journal, seeds_hash, write_datasets
from agentlab.llm.similarity import SimilarityScorer

log = logging.getLogger(__name__)


def resolve_thresholds(cfg: SelfInstructConfig, pool: AgentPool, scorer: SimilarityScorer) -> Thresholds:
    """Load the configured thresholds (checked against the scorer) or calibrate from the pool."""
    desc = scorer.describe()
    if cfg.thresholds is not None:
        th = Thresholds.load(cfg.thresholds)
        if (th.scorer, th.num_layers) != (desc["scorer"], desc["num_layers"]):
            raise ConfigError(
                f"thresholds were calibrated for {th.scorer} layer {th.num_layers} but the scorer is "
                f"{desc['scorer']} layer {desc['num_layers']}; recalibrate (omit --thresholds)",
                where=cfg.thresholds,
            )
        if cfg.leakage_tau is not None:
            th = th.model_copy(update={"leakage_tau": cfg.leakage_tau})
        return th
    return calibrate(
        pool, scorer, coverage=cfg.coverage, per_domain=cfg.per_domain,
        leakage_tau=cfg.leakage_tau, leakage_quantile=cfg.leakage_quantile, target_size=cfg.per_agent,
    )


def _seed_rows(doc: AgentDocument, scorer: SimilarityScorer, leak: LeakageFilter | None) -> list[dict[str, Any]]:
    texts = [d.text for d in doc.demonstrations]
    mat = scorer.matrix(texts, texts)
    off = ~np.eye(len(texts), dtype=bool)
    leak_scores = leak.check(texts).max_score if leak else np.full(len(texts), np.nan)
    rows = []
    for i, t in enumerate(texts):
        others = mat[i][off[i]] if len(texts) > 1 else np.array([np.nan])
        rows.append(
            dict(
                agent=doc.name, domain=doc.domain, text=t, source="seed", round=0, generator="human",
                min_score=float(others.min()), max_score=float(others.max()), mean_score=float(others.mean()),
                priority=None, leak_score=float(leak_scores[i]),
            )
        )
    return rows


@dataclass
class _Run:
    cfg: SelfInstructConfig
    pool: AgentPool
    docs: list[AgentDocument]
    scorer: Any
    thresholds: Thresholds
    journal: Journal
    leak: LeakageFilter | None
    generator_id: str
    quality: dict[str, QualityCheck] = field(default_factory=dict)
    states: dict[str, AgentState] = field(default_factory=dict)
    seed_rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    backend: Any = None
    run_candidates: int = 0
    run_accepted: int = 0


def _generator_id(cfg: SelfInstructConfig) -> str:
    g = cfg.generator
    return f"{g.kind}:{g.model}" + (f"@{g.base_url}" if g.base_url else "")


def run_selfinstruct(
    cfg: SelfInstructConfig | None = None,
    *,
    pool: AgentPool | None = None,
    backend: Any = None,
    scorer: Any = None,
    progress: bool = True,
    scale: Scale | None = None,
) -> SelfInstructReport:
    """Run (or resume) self-instruct for the configured agents; return the run report.

    ``backend``/``scorer`` may be passed in to share already-loaded models (tests, notebooks).
    Nothing already accepted is ever lost: each round is committed before the next begins.
    ``scale`` with several workers runs one shard per agent on Ray workers (each loads its own
    generator and scorer from ``cfg``).
    """
    cfg = cfg or SelfInstructConfig()
    t0 = time.monotonic()
    pool = pool or AgentPool.from_dir()
    docs = [pool.get(n) for n in cfg.agents] if cfg.agents else list(pool)
    scorer = scorer or load_scorer(cfg)
    thresholds = resolve_thresholds(cfg, pool, scorer)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    template = load_template(cfg.template_name)
    journal = Journal(out)
    resumed = not cfg.fresh and journal.header() is not None
    checks = {d.name: QualityCheck.for_agent(d, pool.names, cfg.copy_ratio) for d in pool} if cfg.quality else {}
    if cfg.fit_bands and not cfg.fresh:
        thresholds = _fit_bands(cfg, pool, docs, scorer, thresholds, journal, checks)
    header = {
        "thresholds": thresholds.model_dump(exclude_none=True),
        "prompt_sha": template.sha256,
        "prompt_style": cfg.prompt_style,
        "generator": _generator_id(cfg),
        "quality": cfg.quality,
        "seeds": {d.name: seeds_hash([x.text for x in d.demonstrations]) for d in docs},
    }
    journal.start(header, fresh=cfg.fresh, revise=cfg.revise or cfg.fit_bands)
    open_run(out, selfinstruct_manifest(cfg, pool, backend), resume=resumed, refuse=False)  # the journal's header rules resume
    thresholds.save(out / "thresholds.json")
    leak = LeakageFilter.from_benchmarks(scorer, thresholds.leakage_tau) if cfg.leakage else None
    run = _Run(cfg, pool, docs, scorer, thresholds, journal, leak, _generator_id(cfg), quality=checks, backend=backend)
    _withdraw(run, journal.state())
    run.states = journal.state()
    # Agents already in the journal but not selected now stay in the dataset untouched.
    all_docs = {d.name: d for d in docs}
    for name in run.states:
        if name not in all_docs and name in pool:
            all_docs[name] = pool.get(name)
    for d in all_docs.values():
        run.seed_rows[d.name] = _seed_rows(d, scorer, leak)
        run.states.setdefault(d.name, AgentState(d.name))

    settings = GenerationSettings(
        prompts=cfg.prompts_per_round if cfg.prompt_style == "completion" else 1,
        per_prompt=cfg.sequences_per_prompt,
        shots=cfg.shots,
        max_new_tokens=cfg.max_new_tokens,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        min_words=cfg.min_words,
        max_chars=cfg.max_chars,
    )
    if cfg.torch_threads:
        import torch

        torch.set_num_threads(cfg.torch_threads)
    if scale is not None and scale.distributed:
        budget_hit = _sharded_loop(run, settings, scale, progress, time.time() + 60 * cfg.time_budget_min
                                   if cfg.time_budget_min is not None else None)
    else:
        budget_hit = _loop(run, settings, template, progress, t0)
    _materialise(run, all_docs)
    elapsed = time.monotonic() - t0
    # every agent of the dataset, not only this run's selection: a run that adds one agent to the
    # shipped dataset must not drop the others from its report
    for name, d in all_docs.items():  # agents not selected this run: the same stop rule, for the report
        if name not in {x.name for x in docs}:
            run.states[name].stopped = _stop_reason(cfg, d, run.states[name])
    reports = [
        build_agent_report(
            d, run.states[d.name], run.seed_rows[d.name], thresholds.band(d.domain), scorer, cfg.report_samples
        )
        for d in all_docs.values()
    ]
    report = SelfInstructReport(
        agents=reports,
        thresholds=thresholds,
        generator=run.generator_id,
        out_dir=str(out),
        elapsed_s=elapsed,
        run_candidates=run.run_candidates,
        run_accepted=run.run_accepted,
        time_budget_hit=budget_hit,
        candidates=[c for d in all_docs.values() for c in run.states[d.name].candidates],
        leakage=leak.coverage() if leak is not None else {"checked": [], "missing": [], "leakage_free": False,
                                                           "disabled": True},
    )
    report.write(out)
    return report


def _fit_bands(
    cfg: SelfInstructConfig,
    pool: AgentPool,
    docs: list[AgentDocument],
    scorer: SimilarityScorer,
    thresholds: Thresholds,
    journal: Journal,
    checks: dict[str, QualityCheck],
) -> Thresholds:
    """Widen the bands of domains whose selected agents are short of ``per_agent`` (see bandfit)."""
    from agentlab.selfinstruct.bandfit import AgentSample, fit_thresholds
    from agentlab.selfinstruct.calibrate import pairwise_distribution

    states = journal.state()
    samples: dict[str, list[AgentSample]] = {}
    for d in docs:
        st = states.get(d.name)
        seeds = [x.text for x in d.demonstrations]
        if st is None or st.stopped or len(seeds) + len(st.rows) >= cfg.per_agent:
            continue
        check = checks.get(d.name)
        cands = [
            c["text"] for c in st.candidates
            if c["status"] != "leak" and (check is None or check.reason(c["text"], seeds) is None)
        ]
        samples.setdefault(d.domain, []).append(AgentSample(d.name, seeds, cands))
    if not samples:
        return thresholds
    fitted, fits = fit_thresholds(thresholds, samples, pairwise_distribution(pool, scorer), scorer, cfg.per_agent)
    for f in fits:
        log.warning("band for %s: %s", f.domain, f.describe())
    return fitted


def _withdraw(run: _Run, states: dict[str, AgentState]) -> None:
    """Withdraw accepted rows that a current rule rejects: a leakage source added since they were
    accepted (always), and the quality check (with ``purge_quality``). Recorded in the journal."""
    for name, st in states.items():
        if not st.rows or name not in run.pool:
            continue
        texts = [r["text"] for r in st.rows]
        if run.leak is not None:
            lk = run.leak.check(texts)
            gone = [t for t, bad in zip(texts, lk.leaked) if bad]
            if gone:
                log.warning("%s: withdrawing %d accepted row(s) now too close to a test task", name, len(gone))
                run.journal.commit_removal(name, gone, "leak")
                texts = [t for t in texts if t not in set(gone)]
        check = run.quality.get(name)
        if run.cfg.purge_quality and check is not None:
            current = [d.text for d in run.pool.get(name).demonstrations]
            gone = []
            for t in texts:
                if check.reason(t, current) is None:
                    current.append(t)
                else:
                    gone.append(t)
            if gone:
                log.warning("%s: withdrawing %d accepted row(s) that fail the quality check", name, len(gone))
                run.journal.commit_removal(name, gone, "quality")


def _materialise(run: _Run, all_docs: dict[str, AgentDocument]) -> None:
    seeds = [r for name in all_docs for r in run.seed_rows[name]]
    write_datasets(Path(run.cfg.out_dir), seeds, run.states)


def _stop_reason(cfg: SelfInstructConfig, doc: AgentDocument, st: AgentState) -> str | None:
    """Why an agent generates no more (None: it would go on)."""
    if st.stopped:
        return st.stopped
    if len(doc.demonstrations) + len(st.rows) >= cfg.per_agent:
        return f"reached {cfg.per_agent} demonstrations"
    if st.rounds >= cfg.max_rounds:
        return f"round budget spent ({cfg.max_rounds} rounds)"
    return None


def _active(run: _Run) -> list[AgentDocument]:
    out = []
    for d in run.docs:
        st = run.states[d.name]
        st.stopped = _stop_reason(run.cfg, d, st)
        if st.stopped is None:
            out.append(d)
    return out


def _loop(run: _Run, settings: GenerationSettings, template: Any, progress: bool, t0: float) -> bool:
    """Round-robin over active agents, ``agents_per_batch`` agents per generate call."""
    from agentlab.progress import Progress

    cfg = run.cfg
    active = _active(run)
    if not active:
        return False
    if run.backend is None:
        from agentlab.llm import load_backend

        run.backend = load_backend(cfg.generator)
    remaining = sum(cfg.max_rounds - run.states[d.name].rounds for d in active)
    with Progress(remaining, "self-instruct", "round", enabled=progress) as shown:
        while active:
            for g in range(0, len(active), cfg.agents_per_batch):
                if cfg.time_budget_min is not None and time.monotonic() - t0 > 60 * cfg.time_budget_min:
                    log.warning("time budget of %.1f min reached; rerun to resume", cfg.time_budget_min)
                    return True
                group = active[g : g + cfg.agents_per_batch]
                before = {d.name: _tally(run.states[d.name]) for d in group}
                _group_round(run, group, settings, template)
                _materialise_one(run)
                for d in group:
                    st = run.states[d.name]
                    kept, generated, seconds = (a - b for a, b in zip(_tally(st), before[d.name]))
                    shown.done(f"{d.name} round {st.rounds}/{cfg.max_rounds}", f"kept {kept:.0f}/{generated:.0f}", seconds)
            active = _active(run)
            # an agent that stopped early (enough demonstrations, nothing usable) has no rounds left
            shown.retotal(shown.count + sum(cfg.max_rounds - run.states[d.name].rounds for d in active))
    return False


def _tally(st: AgentState) -> tuple[float, float, float]:
    """An agent's accepted rows, candidates generated (lines that parsed) and seconds so far."""
    return float(len(st.rows)), float(st.raw_lines - sum(st.parse.values())), st.seconds


def _group_round(run: _Run, group: list[AgentDocument], settings: GenerationSettings, template: Any) -> None:
    """One round for each agent of ``group``: one batched generate call, then per-agent filtering."""
    cfg = run.cfg
    t = time.monotonic()
    prompts: list[str] = []
    spans: list[tuple[int, int]] = []
    contexts = []
    for doc in group:
        st = run.states[doc.name]
        rnd = st.rounds + 1
        current = [d.text for d in doc.demonstrations] + [r["text"] for r in st.rows]
        known = {normalize(x) for x in current} | {normalize(c["text"]) for c in st.candidates}
        rng = random.Random(f"{cfg.seed}:{doc.name}:{rnd}")
        ps = make_prompts(template, doc, _shot_pool(run, doc, current), settings, rng)
        spans.append((len(prompts), len(prompts) + len(ps)))
        prompts.extend(ps)
        contexts.append((doc, rnd, current, known))
    seed = cfg.seed * 100_003 + sum(run.states[d.name].rounds for d in group) * 7919 + sum(map(ord, group[0].name))
    outs = run_generator(run.backend, prompts, sampling_params(settings, seed), cfg.prompt_style)
    gen_seconds = (time.monotonic() - t) / len(group)
    for (doc, rnd, current, known), (a, b) in zip(contexts, spans):
        parsed = parse_outputs(outs[a:b], settings, known, cfg.prompt_style)
        if doc.name in run.quality:
            parsed = run.quality[doc.name].filter(parsed, current)
        _finish_round(run, doc, rnd, current, parsed, gen_seconds)


def _shot_pool(run: _Run, doc: AgentDocument, current: list[str]) -> list[str]:
    """The demonstrations the prompt's examples are sampled from: with the quality check on, only
    those that pass it (an accepted non-request shown as an example begets more of its kind)."""
    check = run.quality.get(doc.name)
    if check is None:
        return current
    seeds = [d.text for d in doc.demonstrations]
    return seeds + [t for t in current[len(seeds) :] if check.reason(t, seeds) is None]


def _finish_round(
    run: _Run, doc: AgentDocument, rnd: int, current: list[str], parsed: Any, gen_seconds: float
) -> None:
    """Leakage check, Algorithm 1 against the agent's current set, then commit the round."""
    cfg, st = run.cfg, run.states[doc.name]
    t = time.monotonic()
    raw_lines = len(parsed.candidates) + sum(parsed.reasons.values())
    cands = parsed.candidates
    band = run.thresholds.band(doc.domain)
    cand_rows: list[dict[str, Any]] = []
    accepted_rows: list[dict[str, Any]] = []
    leaked = 0
    if cands:
        lk = run.leak.check(cands) if run.leak else None
        keep = [i for i in range(len(cands)) if lk is None or not lk.leaked[i]]
        leaked = len(cands) - len(keep)
        base = dict(agent=doc.name, domain=doc.domain, round=rnd, generator=run.generator_id)
        if lk is not None:
            for i in range(len(cands)):
                if lk.leaked[i]:
                    cand_rows.append(dict(base, text=cands[i], status="leak", leak_score=float(lk.max_score[i]),
                                          nearest_task=lk.nearest[i]))
        kept = [cands[i] for i in keep]
        res, ce, cc = score_and_filter(run.scorer, kept, current, band.tau1, band.tau2)
        room = cfg.per_agent - len(current)
        taken = res.accepted[: max(0, room)]
        for dec in res.decisions:
            i = keep[dec.index]
            status = dec.reason if not dec.accepted else ("accepted" if dec.index in taken else "surplus")
            cand_rows.append(dict(
                base, text=dec.text, status=status, priority=dec.d, rank=dec.rank,
                min_existing=dec.min_existing, max_existing=dec.max_existing, mean_existing=dec.mean_existing,
                violating_score=dec.violating_score,
                leak_score=float(lk.max_score[i]) if lk is not None else None,
                nearest_task=lk.nearest[i] if lk is not None else None,
            ))
        for k, j in enumerate(taken):
            # scores against everything it was checked with: S_i and the items accepted before it
            scores = np.concatenate([ce[j], cc[j, taken[:k]]])
            accepted_rows.append(dict(
                agent=doc.name, domain=doc.domain, text=kept[j], source="generated", round=rnd,
                generator=run.generator_id, min_score=float(scores.min()), max_score=float(scores.max()),
                mean_score=float(scores.mean()), priority=float(res.decisions[j].d),
                leak_score=float(lk.max_score[keep[j]]) if lk is not None else None,
            ))
    empty_streak = 0 if cands else st.empty_streak + 1
    record = dict(
        agent=doc.name, round=rnd, accepted=accepted_rows, candidates=cand_rows,
        parse=dict(parsed.reasons), samples_dropped=parsed.dropped, raw_lines=raw_lines,
        leaked=leaked, empty_streak=empty_streak, seconds=round(gen_seconds + time.monotonic() - t, 3),
    )
    run.journal.commit_round(record)
    _apply_round(run, st, record)
    if empty_streak >= cfg.patience:
        msg = (
            f"generator returned nothing usable for {empty_streak} rounds in a row "
            f"(dropped lines: {dict(parsed.reasons) or 'none returned'}); stopped {doc.name}, "
            f"keeping its {len(st.rows)} accepted demonstrations"
        )
        log.warning("%s: %s", doc.name, msg)
        st.stopped = msg
        run.journal.commit_stop(doc.name, msg)


def _apply_round(run: _Run, st: AgentState, record: dict[str, Any]) -> None:
    """The in-memory state follows the journal exactly: one committed round's record laid onto it."""
    st.rows.extend(record["accepted"])
    st.candidates.extend(record["candidates"])
    st.rounds, st.empty_streak = record["round"], record["empty_streak"]
    st.raw_lines += record["raw_lines"]
    st.leaked += record["leaked"]
    st.seconds += record["seconds"]
    for k, v in record["parse"].items():
        st.parse[k] = st.parse.get(k, 0) + v
    run.run_candidates += record["raw_lines"] - sum(record["parse"].values())
    run.run_accepted += len(record["accepted"])


def _materialise_one(run: _Run) -> None:
    seeds = [r for name in run.seed_rows for r in run.seed_rows[name]]
    write_datasets(Path(run.cfg.out_dir), seeds, run.states)


class _Collected:
    """A worker's stand-in for the journal: keeps the entries for the driver to commit."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any]] = []

    def commit_round(self, record: dict[str, Any]) -> None:
        self.entries.append(("round", record))

    def commit_stop(self, agent: str, reason: str) -> None:
        self.entries.append(("stop", reason))


@dataclass
class _Shard:
    """One agent's share of a parallel run: its document and its state so far (from the journal)."""

    doc: AgentDocument
    state: AgentState


@dataclass
class _ShardResult:
    entries: list[tuple[str, Any]]
    budget_hit: bool = False
    lost: str | None = None


@dataclass(frozen=True)
class _ShardRecipe:
    """Builds a self-instruct worker: its own generator, scorer and leakage filter (picklable)."""

    cfg: SelfInstructConfig
    thresholds: Thresholds
    generator_id: str
    settings: GenerationSettings
    #: wall-clock time (``time.time()``) after which no new round starts; None: no budget
    deadline: float | None
    #: every agent name of the pool (the quality check drops lines naming another agent)
    agent_names: tuple[str, ...] = ()

    def __call__(self, index: int) -> Callable[[_Shard], _ShardResult]:
        from agentlab.llm import load_backend

        cfg = self.cfg
        if cfg.torch_threads:
            import torch

            torch.set_num_threads(cfg.torch_threads)
        scorer = load_scorer(cfg)
        leak = LeakageFilter.from_benchmarks(scorer, self.thresholds.leakage_tau) if cfg.leakage else None
        backend = load_backend(cfg.generator)
        template = load_template(cfg.template_name)

        def run_shard(shard: _Shard) -> _ShardResult:
            collected = _Collected()
            # the same quality check as a serial run's (run_selfinstruct builds it over the whole pool)
            quality = {shard.doc.name: QualityCheck.for_agent(shard.doc, self.agent_names, cfg.copy_ratio)} if cfg.quality else {}
            run = _Run(cfg, AgentPool([shard.doc]), [shard.doc], scorer, self.thresholds, collected,  # type: ignore[arg-type]
                       leak, self.generator_id, quality=quality, states={shard.doc.name: shard.state}, backend=backend)
            while _stop_reason(cfg, shard.doc, shard.state) is None:
                if self.deadline is not None and time.time() > self.deadline:
                    return _ShardResult(collected.entries, budget_hit=True)
                _group_round(run, [shard.doc], self.settings, template)
            return _ShardResult(collected.entries)

        return run_shard


def _lost_shard(shard: _Shard, why: str) -> _ShardResult:
    return _ShardResult([], lost=why)


def _sharded_loop(run: _Run, settings: GenerationSettings, scale: Scale, progress: bool, deadline: float | None) -> bool:
    """One shard per active agent on the workers; each shard's rounds committed as it ends."""
    from agentlab.progress import Progress

    shards = [_Shard(d, run.states[d.name]) for d in _active(run)]
    if not shards:
        return False
    if run.cfg.agents_per_batch != 1:
        log.info("self-instruct on %d workers: one shard per agent, so agents_per_batch=%d is not used "
                 "(the journal equals a serial run's with agents_per_batch: 1)", scale.workers, run.cfg.agents_per_batch)
    recipe = _ShardRecipe(run.cfg, run.thresholds, run.generator_id, settings, deadline, tuple(run.pool.names))
    budget_hit = False
    shown = Progress(len(shards), "self-instruct shards", "agent", enabled=progress)
    for shard, res in map_unordered(recipe, shards, scale, lost=_lost_shard):
        st = run.states[shard.doc.name]
        before = _tally(st)
        for kind, entry in res.entries:
            if kind == "round":
                run.journal.commit_round(entry)
                _apply_round(run, st, entry)
            else:
                st.stopped = entry
                run.journal.commit_stop(shard.doc.name, entry)
        if res.lost:
            log.warning("%s: %s; its rounds of this run are not kept (rerun to resume)", shard.doc.name, res.lost)
        budget_hit |= res.budget_hit
        _materialise_one(run)
        kept, generated, seconds = (a - b for a, b in zip(_tally(st), before))
        shown.done(f"{shard.doc.name} ({st.rounds}/{run.cfg.max_rounds} rounds)",
                   f"lost: {res.lost}" if res.lost else f"kept {kept:.0f}/{generated:.0f}", seconds)
    shown.close()
    return budget_hit
