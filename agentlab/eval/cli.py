"""``agentlab eval routing``: score routing predictions against gold labels.

File formats (JSON lines):
  pred   ``{"id", "agent", "ranking": [[name, prob], ...], "plan": [{"agent", "subtask"}], "error"?}``
         (what ``agentlab route`` writes)
  gold   ``{"id", "domain"}`` for single-agent tasks or ``{"id", "domains": [...]}`` for
         multi-agent ones (+ optional ``"plan"`` of gold subtasks for SubtaskAcc; + optional
         ``"gold_agents": [...]`` and ``"interface"`` (CLI|GUI) for agent-level scoring)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from agentlab.errors import DataError
from agentlab.pool import AgentPool


def _is_plan(v: object) -> bool:
    return isinstance(v, list) and all(
        isinstance(x, dict) and isinstance(x.get("agent"), str) and isinstance(x.get("subtask"), str) for x in v)


def _read_gold(path: Path) -> list[dict]:
    """Gold lines, each checked: ``id``, ``domain`` (a string) or ``domains`` (strings), optional ``plan``."""
    from agentlab.fileio import read_jsonl

    golds = read_jsonl(path, tolerate_torn_tail=False)
    if not golds:
        raise DataError("the gold file holds no lines; one JSON object per task: {\"id\", \"domain\"}", where=path)
    for i, g in enumerate(golds, start=1):
        doms = g.get("domains")
        if "id" not in g:
            raise DataError("gold line needs an 'id'", where=f"{path}:{i}")
        if not isinstance(g.get("domain"), str) and not (
                isinstance(doms, list) and doms and all(isinstance(d, str) for d in doms)):
            raise DataError("gold line needs 'domain' (a string) or 'domains' (a list of strings)", where=f"{path}:{i}")
        if "plan" in g and not _is_plan(g["plan"]):
            raise DataError("'plan' must be a list of {\"agent\", \"subtask\"} strings", where=f"{path}:{i}")
        agents = g.get("gold_agents")
        if "gold_agents" in g and not (
                isinstance(agents, list) and agents and all(isinstance(a, str) for a in agents)):
            raise DataError("'gold_agents' must be a non-empty list of agent names", where=f"{path}:{i}")
        if "interface" in g and g["interface"] not in ("CLI", "GUI"):
            raise DataError("'interface' must be \"CLI\" or \"GUI\"", where=f"{path}:{i}")
    return golds


def _read_preds(path: Path) -> dict[str, dict]:
    """Prediction lines by id, each checked against the format ``agentlab route`` writes."""
    from agentlab.fileio import read_jsonl

    preds = read_jsonl(path)
    if not preds:
        raise DataError("the predictions file holds no lines; write it with `agentlab route`", where=path)
    for i, p in enumerate(preds, start=1):
        rank = p.get("ranking", [])
        if "id" not in p:
            problem = "needs an 'id'"
        elif p.get("agent") is not None and not isinstance(p["agent"], str):
            problem = "'agent' must be a string or null"
        elif not isinstance(rank, list) or not all(
                isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and isinstance(r[1], (int, float))
                for r in rank):
            problem = "'ranking' must be a list of [agent, probability] pairs"
        elif not _is_plan(p.get("plan", [])):
            problem = "'plan' must be a list of {\"agent\", \"subtask\"} strings"
        else:
            continue
        raise DataError(f"prediction line {problem}", where=f"{path}:{i}")
    return {str(p["id"]): p for p in preds}


eval_app = typer.Typer(help="Score predictions against gold labels.", no_args_is_help=True)


@eval_app.command("routing")
def eval_routing(
    pred: Path = typer.Option(..., "--pred", help="Predictions JSONL from `agentlab route`."),
    gold: Path = typer.Option(..., "--gold", help="Gold JSONL with domain (or domains) per id."),
    k: int = typer.Option(5, "--k", help="Top-K for the recall of gold agents."),
    agents: Path | None = typer.Option(None, "--agents", help="Agent documents folder (default data/agents)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the scores as JSON."),
) -> None:
    """Routing accuracy overall and per domain; agent-level accuracy and the CLI/GUI confusion where
    the gold names agents; AgentMatch, top-K recall (and SubtaskAcc) for multi-agent gold."""
    from agentlab.eval.metrics import agent_accuracy, agent_match, routing_accuracy, subtask_accuracy, topk_recall
    from agentlab.fileio import atomic_write_json

    golds = _read_gold(gold)
    preds = _read_preds(pred)
    pool = AgentPool.from_dir(agents)
    single: list[dict[str, Any]] = []
    multi: list[dict[str, Any]] = []
    for g in golds:
        (multi if "domains" in g and len(g["domains"]) > 1 else single).append(g)
    missing = [str(g["id"]) for g in golds if str(g["id"]) not in preds]
    scores: dict[str, object] = {"missing_predictions": len(missing)}
    if single:
        agents_pred = [preds.get(str(g["id"]), {}).get("agent") for g in single]
        doms = [g["domain"] if "domain" in g else g["domains"][0] for g in single]
        rep = routing_accuracy(agents_pred, doms, pool)
        typer.echo(rep.table())
        scores["routing"] = rep.as_dict()
        with_agents = [(a, d, g) for a, d, g in zip(agents_pred, doms, single) if "gold_agents" in g]
        if with_agents:
            try:
                arep = agent_accuracy(
                    [a for a, _, _ in with_agents],
                    [g["gold_agents"] for _, _, g in with_agents],
                    [d for _, d, _ in with_agents],
                    pool,
                    [g.get("interface") for _, _, g in with_agents],
                )
            except DataError as exc:
                raise DataError(f"{exc.message}; give the line an \"interface\" or name a pool agent", where=gold) from None
            typer.echo(f"agent-level: {arep.agent.overall.total} task(s) with gold agents  "
                       f"agent accuracy {100 * arep.accuracy:.1f}%  (domain-level on the same tasks "
                       f"{100 * arep.domain.accuracy:.1f}%)")
            typer.echo(arep.table())
            scores["agent_routing"] = arep.as_dict()
    if multi:
        recs = [preds.get(str(g["id"]), {}) for g in multi]
        plans = [[s["agent"] for s in r.get("plan", [])] or ([r["agent"]] if r.get("agent") else []) for r in recs]
        sets = [g["domains"] for g in multi]
        am = agent_match(plans, sets, pool)
        rec = topk_recall([[n for n, _ in r.get("ranking", [])] for r in recs], sets, pool, k)
        line = f"multi-agent tasks: {am.total}  AgentMatch {100 * am.accuracy:.1f}%  top-{k} recall {100 * rec:.1f}%"
        scores["agent_match"], scores[f"top{k}_recall"] = am.accuracy, rec
        with_plan = [(r, g) for r, g in zip(recs, multi) if g.get("plan")]
        if with_plan:
            from agentlab.llm.similarity import default_scorer

            sa = subtask_accuracy(
                [[(s["agent"], s["subtask"]) for s in r.get("plan", [])] for r, _ in with_plan],
                [[(s["agent"], s["subtask"]) for s in g["plan"]] for _, g in with_plan],
                pool,
                default_scorer(),
            )
            line += f"  SubtaskAcc {100 * sa.accuracy:.1f}% ({sa.total} gold subtasks)"
            scores["subtask_acc"] = sa.accuracy
        typer.echo(line)
    if missing:
        typer.echo(f"{len(missing)} gold task(s) have no prediction (counted wrong), e.g. {missing[0]}")
    if json_out:
        atomic_write_json(json_out, scores)
