"""``agentlab train`` and ``agentlab route``: the MetaAgent from the shell (``agentlab eval routing``
scores what ``route`` wrote: :mod:`agentlab.eval.cli`).

File formats (JSON lines):
  tasks  ``{"id", "instruction"}`` (+ optional ``"state"``, a text rendering of the initial
         screen; other fields ignored)
  pred   ``{"id", "agent", "ranking": [[name, prob], ...], "plan": [{"agent", "subtask"}], "error"?}``
  gold   ``{"id", "domain"}`` for single-agent tasks or ``{"id", "domains": [...]}`` for
         multi-agent ones (+ optional ``"plan"`` of gold subtasks for SubtaskAcc; + optional
         ``"gold_agents": [...]`` and ``"interface"`` (CLI|GUI) for agent-level scoring)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from agentlab.errors import DataError
from agentlab.pool.document import FIELD_CHOICES

#: the devices ``agentlab route --platform`` accepts (the documents' ``platform`` values)
PLATFORMS: tuple[str, ...] = FIELD_CHOICES["platform"]

if TYPE_CHECKING:
    from agentlab.metaagent.features import Query
    from agentlab.pool import AgentPool

log = logging.getLogger(__name__)


def _default_tokens() -> Path:
    """The shipped checkpoint of the configured backbone (``data/tokens``; Gemma: ``data/tokens/gemma3-270m``)."""
    from agentlab.metaagent.shipped import shipped_tokens

    return shipped_tokens()


def _pool(agents: Path | None) -> AgentPool:
    from agentlab.pool import AgentPool

    return AgentPool.from_dir(agents)


def train(
    demos: Path | None = typer.Option(None, "--demos", help="Self-instruct dataset folder (default: data/demos if it holds one, else the documents' seed demonstrations)."),
    out: Path = typer.Option(..., "--out", help="Checkpoint folder to write (tokens.safetensors + tokens.json)."),
    add: str | None = typer.Option(None, "--add", help="Enrol one new agent: train only its token on top of --tokens (default: --out if it exists, else the shipped tokens of the configured backbone)."),
    tokens: Path | None = typer.Option(None, "--tokens", help="Existing checkpoint to extend with --add."),
    config: Path | None = typer.Option(None, "--config", help="AgentTokenConfig YAML (template, feature, train, ...)."),
    preset: str | None = typer.Option(None, "--preset", help="Training preset: default, paper (lr 4e-5, wd 1.0, 10 epochs) or lda (rows from a shrinkage linear discriminant, no gradient steps)."),
    per_agent: int | None = typer.Option(None, "--per-agent", help="At most this many demonstrations per agent (seeds first)."),
    source: str | None = typer.Option(None, "--source", help="all | seed | generated"),
    agents: Path | None = typer.Option(None, "--agents", help="Agent documents folder (default data/agents)."),
    documents: bool | None = typer.Option(None, "--documents/--no-documents", help="Add each document's requests to the training data (config default: off)."),
    hybrid: bool = typer.Option(False, "--hybrid", help="Also fit the hybrid router's encoder temperature and λ on the same data and write hybrid.json next to the tokens (for `agentlab route --router hybrid`)."),
) -> None:
    """Train AgentToken agent tokens on a frozen backbone (or add one agent's token)."""
    from agentlab.config import with_overrides
    from agentlab.metaagent.agenttoken import AgentTokenConfig, AgentTokenRouter
    from agentlab.metaagent.data import load_training_set
    from agentlab.metaagent.train import TrainConfig

    cfg = AgentTokenConfig.from_yaml(config) if config else AgentTokenConfig()
    cfg = with_overrides(AgentTokenConfig, cfg, {"train": TrainConfig.preset(preset) if preset else None, "demos": demos,
                                                 "per_agent": per_agent, "source": source, "documents": documents})
    pool = _pool(agents)
    data = load_training_set(pool, cfg.demos, per_agent=cfg.per_agent, source=cfg.source, seed=cfg.train.seed)
    if cfg.documents:
        from agentlab.metaagent.augment import add_document_requests

        data = add_document_requests(data, pool)
    if add:
        from agentlab.metaagent.checkpoint import paths_for

        base = tokens or (out if paths_for(out)[1].exists() else _default_tokens())
        router = AgentTokenRouter.load(base, pool)
        m = router.add_agent(add, data)
        router.save(out)
        from agentlab.metaagent.hybrid import carry_sidecar

        carry_sidecar(base, out)  # `--router hybrid --tokens OUT` keeps the store's λ and temperature
        typer.echo(f"added {add} to {base} -> {out}: train_acc={m['train_acc']:.3f} loss={m['loss']:.3f} seconds={m['seconds']:.1f}")
        return
    if hybrid:
        from agentlab.metaagent.hybrid import HybridRouter

        both = HybridRouter(pool, agenttoken=cfg.router_options())
        m = both.fit(data)
        router = both.token
    else:
        router = AgentTokenRouter(pool, **cfg.router_options())
        m = router.fit(data)
    router.history[-1].update(source=cfg.source, demos=str(cfg.demos) if cfg.demos else None, per_agent=cfg.per_agent,
                              documents=cfg.documents)
    if hybrid:
        both.save(out, encoder=False)  # the encoder is refitted from the seeds on load
    else:
        router.save(out)
    typer.echo(
        f"trained {len(router.agents)} agent tokens on {len(data)} demonstrations -> {out}: "
        f"train_acc={m['train_acc']:.3f} loss={m['loss']:.3f} seconds={m['seconds_total']:.1f} "
        f"temperature={router.temperature:.2f}" + (f" hybrid_weight={m['weight']:.2f}" if hybrid else "")
    )


def _read_tasks(path: Path) -> list[dict]:
    from agentlab.fileio import read_jsonl

    tasks = read_jsonl(path, tolerate_torn_tail=False)
    if not tasks:
        raise DataError("the tasks file holds no tasks; one JSON object per line: {\"id\", \"instruction\"}", where=path)
    seen: set[str] = set()
    for i, t in enumerate(tasks, start=1):
        if "id" not in t or not isinstance(t.get("instruction"), str) or not t["instruction"].strip():
            raise DataError("each line needs an 'id' and a non-empty 'instruction'", where=f"{path}:{i}")
        if t.get("state") is not None and not isinstance(t["state"], str):
            raise DataError("'state' must be a string (a text rendering of the screen)", where=f"{path}:{i}")
        if t.get("platform") is not None and t["platform"] not in PLATFORMS:
            raise DataError(f"'platform' must be one of {', '.join(PLATFORMS)}, not {t['platform']!r}", where=f"{path}:{i}")
        t["id"] = str(t["id"])
        if t["id"] in seen:
            raise DataError(f"duplicate id '{t['id']}'", where=f"{path}:{i}")
        seen.add(t["id"])
    return tasks


def _check_out(out: Path, *, overwrite: bool, resume: bool) -> None:
    """An existing result file is replaced only when asked (``--overwrite``) or resumed."""
    if out.is_dir():
        raise DataError("--out is a folder; expected a predictions file (e.g. runs/pred.jsonl)", where=out)
    if out.exists() and not (overwrite or resume):
        raise DataError("already exists; pass --overwrite to replace it, or choose another --out", where=out)
    if not out.parent.exists():
        return  # created when writing
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise DataError("cannot write here (permission denied); choose another --out", where=out)


def route(
    tasks: Path = typer.Option(..., "--tasks", help="JSONL of {id, instruction[, state]}."),
    out: Path = typer.Option(..., "--out", help="Predictions JSONL to write (an existing file is kept unless --overwrite; manager mode resumes it)."),
    tokens: Path | None = typer.Option(None, "--tokens", help="Trained router state (AgentToken / hybrid checkpoint; default for those: the shipped tokens of the configured backbone, data/tokens or data/tokens/gemma3-270m)."),
    router: str = typer.Option("agenttoken", "--router", help="agenttoken | hybrid | icl | lora | prompt | embedding"),
    mode: str = typer.Option("router", "--mode", help="router (one agent) | manager (multi-agent plan)"),
    k: int = typer.Option(5, "--k", help="HashManager mode: documents of the top-K agents go into the prompt."),
    demos: Path | None = typer.Option(None, "--demos", help="Training data for baselines without saved state."),
    agents: Path | None = typer.Option(None, "--agents", help="Agent documents folder (default data/agents)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out (manager mode: start afresh)."),
    workers: int = typer.Option(1, "--workers", min=1, help="HashManager mode: plan tasks on N Ray workers (default 1: serial, in-process)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="HashManager mode: plan on this existing Ray cluster."),
    unconstrained: bool = typer.Option(False, "--unconstrained", help="HashManager mode: prompt only, no plan-grammar decoding (the ablation; default: plans decoded inside the grammar over the top-K agents)."),
    generalists: bool = typer.Option(False, "--generalists", help="HashManager mode: general agents (AgentS2, PCAgent, AppAgent) may be plan steps (ablation; default: the top-K specialists)."),
    distinct_domains: bool = typer.Option(False, "--distinct-domains", help="HashManager mode: at most one candidate per domain (the best-ranked)."),
    max_plan_steps: int = typer.Option(3, "--max-plan-steps", min=1, help="HashManager mode: at most this many plan steps (the grammar's bound)."),
    clauses: bool = typer.Option(False, "--clauses", help="HashManager mode: route each part of the request on its own (multi-application detection); when the parts land in different applications, their agents are the plan's candidates instead of the top-K."),
    clause_router: str | None = typer.Option(None, "--clause-router", help="With --clauses: the router that routes the parts (default: --router)."),
    clause_threshold: float = typer.Option(0.0, "--clause-threshold", min=0.0, max=1.0, help="With --clauses: a cut counts when both halves' share of their application is above this (default 0: whenever the parts land in different applications; the store policy's fitted value is stricter)."),
    clause_steps: bool = typer.Option(False, "--clause-steps", help="With --clauses: the request's parts, in order, are the plan's steps (no generation)."),
    platform: str | None = typer.Option(None, "--platform", help="Router mode: the device the tasks run on (desktop | mobile); only its agents may take them (a task line's own 'platform' wins). Default: every agent."),
    policy: str = typer.Option("store", "--policy", help="Router mode: store (specialists first; a general agent takes a request only when it names two applications) | open (every agent competes: the paper's tables)."),
) -> None:
    """Route tasks to agents (router mode) or plan them over the top-K agents (manager mode).

    Manager mode decodes each plan inside the plan grammar (only the top-K specialists' names, never
    one agent twice in a row, at most 3 steps); ``--unconstrained`` asks by prompt alone and
    ``--generalists`` lets general agents take steps; ``--clauses`` takes the candidates from the
    request's parts routed one by one (``--clause-steps``: the parts are the steps).

    A task that cannot be routed (e.g. longer than the model's context) is reported and
    written with an ``error``; the others are routed, and the exit status is 1."""
    from agentlab.errors import ConfigError
    from agentlab.fileio import append_jsonl, read_jsonl, write_jsonl
    from agentlab.metaagent.router import CHECKPOINT_ROUTERS, build_router

    if mode not in ("router", "manager"):
        raise ConfigError(f"--mode must be router or manager, not '{mode}'")
    manager_flags = {"--unconstrained": unconstrained, "--generalists": generalists, "--distinct-domains": distinct_domains,
                     "--max-plan-steps": max_plan_steps != 3, "--clauses": clauses, "--clause-steps": clause_steps,
                     "--clause-router": clause_router is not None, "--clause-threshold": clause_threshold != 0.0}
    if mode != "manager" and (given := [f for f, on in manager_flags.items() if on]):
        raise ConfigError(f"{given[0]} is about manager plans; add --mode manager or leave it out")
    if not clauses and (given := [f for f in ("--clause-steps", "--clause-router", "--clause-threshold") if manager_flags[f]]):
        raise ConfigError(f"{given[0]} sets up the clause detector; add --clauses or leave it out")
    if platform is not None and platform not in PLATFORMS:
        raise ConfigError(f"--platform must be one of {', '.join(PLATFORMS)}, not '{platform}'")
    if platform is not None and mode != "router":
        raise ConfigError("--platform is about router mode; leave it out with --mode manager")
    from agentlab.metaagent.store import check_policy

    check_policy(policy)
    if policy != "store" and mode != "router":
        raise ConfigError("--policy is about router mode (plans take specialists; see --generalists)")
    if clause_router is not None:
        from agentlab.metaagent.router import check_router

        check_router(clause_router, option="--clause-router")
    _check_out(out, overwrite=overwrite, resume=mode == "manager")
    items = _read_tasks(tasks)
    done: set[str] = set()
    if mode == "manager" and out.exists() and not overwrite:
        done = {str(rec.get("id")) for rec in read_jsonl(out)}
        foreign = sorted(done - {t["id"] for t in items})
        if foreign:
            raise DataError(f"holds predictions for task(s) not in {tasks} (e.g. '{foreign[0]}'); "
                            "pass --overwrite to replace it, or choose another --out", where=out)
    from agentlab.parallel import Scale

    scale = Scale(workers=workers, address=ray_address)
    if scale.distributed and mode != "manager":
        raise ConfigError("--workers/--ray-address shard manager mode's per-task plans; router mode routes all tasks "
                          "in one batch (add --mode manager, or leave --workers out)")
    pool = _pool(agents)
    rejected: dict[str, str] = {}
    r = build_router(router, pool, tokens, demos=demos, default_tokens=_default_tokens())
    if router in CHECKPOINT_ROUTERS:
        from agentlab.metaagent.agenttoken import AgentTokenRouter

        at = getattr(r, "token", r)  # the hybrid decodes with its AgentToken expert
        assert isinstance(at, AgentTokenRouter)
        for i, t in enumerate(items, start=1):
            try:
                at.extractor.check_length([_query(t)])
            except DataError as exc:
                rejected[t["id"]] = exc.message
                typer.echo(f"error: {tasks}:{i}: {exc.message}", err=True)
    ok_items = [t for t in items if t["id"] not in rejected]
    texts = [t["instruction"] for t in ok_items]
    states = [t.get("state") for t in ok_items]
    states_arg = states if any(states) else None
    skipped = f", {len(rejected)} rejected" if rejected else ""
    if mode == "router":
        platforms = [t.get("platform") or platform for t in ok_items]
        from agentlab.metaagent.store import StoreRule

        rule = StoreRule(pool) if policy == "store" else None
        results = iter(r.route(texts, states_arg, platforms=platforms, policy=rule))
        from agentlab.tasks.decisions import RouteResult

        records = [RouteResult(None, [], error=rejected[t["id"]]).as_record(t["id"]) if t["id"] in rejected
                   else next(results).as_record(t["id"]) for t in items]
        write_jsonl(out, records)
        failed = sum(rec["agent"] is None for rec in records) - len(rejected)
        warned = sum(rec["agent"] is not None and "error" in rec for rec in records)
        typer.echo(f"routed {len(ok_items)} tasks with {router} ({policy} policy) -> {out} ({failed} failed, "
                   f"{warned} with a warning{skipped})")
        if rejected:
            raise SystemExit(1)  # typer.Exit is swallowed by the root CLI (standalone_mode=False)
        return
    # HashManager mode generates per task: append each result so an interrupted run resumes.
    from agentlab.llm import load_backend
    from agentlab.metaagent.manager import HashManager
    from agentlab.metaagent.plan_workers import PlanRecipe, lost_plan, plan_record
    from agentlab.parallel import map_unordered

    if overwrite and out.exists():
        out.unlink()
    todo = [t for t in ok_items if t["id"] not in done]
    detector_router = (clause_router or router) if clauses else None
    if scale.distributed:
        recipe: Any = PlanRecipe(router, k, _default_tokens(), tokens, demos, agents, llm=r.llm, constrained=not unconstrained,
                                 generalists=generalists, distinct_domains=distinct_domains, max_plan_steps=max_plan_steps,
                                 clause_router=detector_router, clause_threshold=clause_threshold, clause_steps=clause_steps)
    else:
        from agentlab.metaagent.plan_workers import clause_detector

        detector = clause_detector(detector_router, r, pool, tokens, demos, _default_tokens(), clause_threshold)
        manager = HashManager(load_backend(r.llm), constrained=not unconstrained, generalists=generalists,
                              distinct_domains=distinct_domains, max_plan_steps=max_plan_steps, clauses=detector,
                              clause_steps=clause_steps)
        recipe = lambda index: lambda t: plan_record(r, manager, t, k)  # noqa: E731 -- the serial worker
    from agentlab.progress import Progress

    failed = 0
    with Progress(len(todo), "manager", "task") as shown:  # a bar on a terminal, a line per plan elsewhere
        for t, rec in map_unordered(recipe, todo, scale, lost=lost_plan):
            failed += rec["agent"] is None
            append_jsonl(out, rec)  # only this process writes the predictions
            shown.done(str(t.get("id", "?")), "no plan" if rec["agent"] is None else f"plan of {len(rec.get('plan') or [])} step(s)")
    typer.echo(f"planned {len(todo)} tasks ({len(done)} already done{skipped}) with {router}+manager, k={k}, {'unconstrained' if unconstrained else 'plan grammar'}"
               f"{f', clauses routed by {detector_router}' if clauses else ''} -> {out} ({failed} failed)")
    if rejected:
        raise SystemExit(1)


def _query(t: dict[str, Any]) -> Query:
    from agentlab.metaagent.features import Query

    return Query(t["instruction"], t.get("state"))
