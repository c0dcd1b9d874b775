"""ExecutionAcc per router (the paper's Tables 1 and 3 analogs) and what each task cost (Table 7).

Each *arm* decides which pool agent carries each task out -- ground truth (``gt``, the task's
gold agent), a trained or fitted router (``agenttoken``, ``embedding``, ``icl``, ...), or one
agent for everything (``generalist``: the paper's single generalist column) -- and the chosen
agent runs the task through the real episode runner (a :class:`~agentlab.run.RunSpec` given to
:func:`agentlab.run.execute`).

Episodes are shared between arms: with greedy decoding and one seed, an episode is a function
of (task, agent, model), so when two arms pick the same agent for a task it runs once and both
arms get its row (relabelled with the arm). Every (task, agent) pair runs in its own resumable
run folder ``<out>/by_agent/<agent>/`` (``results.jsonl`` + episode folders), so an interrupted
measurement resumes where it stopped; each arm's rows are also written to
``<out>/arms/<arm>/results.jsonl`` in the ``agentlab exec`` format.

The Table 3 analog (:func:`docs_ablation`) runs the phone tasks with their gold agent twice,
with and without the documentation AppAgent learned by exploring the app.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.run.episode import ExecOptions, NoAgentChosen, RouteFn, gt_agent, router_route
from agentlab.run.worker import EpisodeRecipe, RunSpec, Worker, execute
from agentlab.errors import AgentlabError, ConfigError
from agentlab.tasks.env_kinds import ENV_KINDS
from agentlab.tasks.spec import ExecTask
from agentlab.fileio import atomic_write_json, read_jsonl, write_jsonl
from agentlab.record.row import rebased
from agentlab.llm.base import LLMBackend
from agentlab.llm.roles import Backends, ModelsFile
from agentlab.metaagent.router import CHECKPOINT_ROUTERS, DEFAULT_ROUTER
from agentlab.parallel import Scale
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

GENERALIST = "generalist"
#: the row fields summed into the cost table (Table 7 analog)
COST_FIELDS = ("steps", "llm_calls", "tokens_in", "tokens_out", "seconds")
#: what a role spent, per task (``usage_by_role`` of the rows, :func:`role_means`)
ROLE_COST_FIELDS = ("llm_calls", "tokens_in", "tokens_out", "image_bytes")


def role_means(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{role: {"model": ..., "llm_calls": mean per task, ...}}`` over ``rows`` (a row where a role
    was not asked counts 0 for it): which role, of which model, spent a table's calls and tokens."""
    n = max(len(rows), 1)
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        for role, use in (r.get("usage_by_role") or {}).items():
            entry = out.setdefault(role, {"models": set(), **{f: 0.0 for f in ROLE_COST_FIELDS}})
            entry["models"].add(str(use.get("model_id", "")))
            for f in ROLE_COST_FIELDS:
                entry[f] += float(use.get(f) or 0)
    return {role: {"model": ", ".join(sorted(e.pop("models"))), **{f: round(e[f] / n, 1) for f in ROLE_COST_FIELDS}}
            for role, e in sorted(out.items())}


class ExecAccConfig(BaseModel):
    """One measurement (a notebook parameter cell or the benchmark's flags fill it)."""

    model_config = ConfigDict(extra="forbid")

    arms: list[str] = Field(default_factory=lambda: [DEFAULT_ROUTER, "agenttoken", "embedding", "icl", GENERALIST])
    #: the agent doing every task in the ``generalist`` arm
    generalist: str = "Friday"
    #: at most this many tasks, taken round-robin over domains (None: all)
    tasks: int | None = Field(None, ge=1)
    #: task envs to include (workspace, desktop, phone)
    envs: list[str] = Field(default_factory=lambda: list(ENV_KINDS))
    max_steps: int = Field(3, ge=1)
    max_new_tokens: int | None = Field(256, ge=16)
    time_limit_s: float = Field(300.0, gt=0)
    seed: int = 0
    #: router checkpoint for the agenttoken arm (default data/tokens)
    tokens: Path | None = None


def pick_tasks(tasks: Sequence[ExecTask], n: int | None, envs: Iterable[str] | None = None) -> list[ExecTask]:
    """At most ``n`` single-agent tasks of the given envs, round-robin over domains (sorted; ids
    sorted within a domain), so a small subset still spans the domains. Tasks with a gold plan
    (``multi-*``) are Table 2's (``experiments.multi_agent``), not Table 1's, and are left out."""
    keep = set(envs) if envs is not None else None
    by_domain: dict[str, list[ExecTask]] = defaultdict(list)
    for t in sorted(tasks, key=lambda t: t.id):
        if (keep is None or t.env in keep) and not t.plan:
            by_domain[t.domain].append(t)
    out: list[ExecTask] = []
    queues = [by_domain[d] for d in sorted(by_domain)]
    depth = 0
    while any(depth < len(q) for q in queues) and (n is None or len(out) < n):
        for q in queues:
            if depth < len(q) and (n is None or len(out) < n):
                out.append(q[depth])
        depth += 1
    return out


def arm_route(arm: str, pool: AgentPool, config: ExecAccConfig) -> RouteFn:
    """The route function of an arm: a router of the registry (ground truth included), or the generalist."""
    if arm == GENERALIST:
        pool.get(config.generalist)  # an unknown name fails here, before anything runs
        return lambda task: config.generalist
    return router_route(arm, pool, config.tokens if arm in CHECKPOINT_ROUTERS else None)


@dataclass
class ExecAcc:
    """The rows of every arm (``results.jsonl`` rows, ``router`` = the arm)."""

    rows: dict[str, list[dict[str, Any]]]
    gold: dict[str, str] = field(default_factory=dict)  #: task id -> the ground-truth agent
    #: docs ablation: agent -> elements its app has learned documentation for
    documented: dict[str, int] = field(default_factory=dict)

    def accuracy_frame(self) -> pd.DataFrame:
        """ExecutionAcc (%) per domain (rows, plus ``all``) and arm (columns); harness errors count as failures."""
        import pandas as pd

        rates, _ = self.heatmap()
        frame = pd.DataFrame({arm: {("all" if d == "overall" else d): 100 * v for d, v in by.items()}
                              for arm, by in rates.items()})
        order = sorted(i for i in frame.index if i != "all") + ["all"]
        return frame.reindex(order).round(1)

    def heatmap(self) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
        """(arm -> domain -> success rate 0..1, with ``overall``) and the task counts behind each
        cell: the inputs of :func:`agentlab.viz.accuracy_heatmap`."""
        rates: dict[str, dict[str, float]] = {}
        counts: dict[str, dict[str, int]] = {}
        for arm, rows in self.rows.items():
            by: dict[str, list[bool]] = defaultdict(list)
            for r in rows:
                by[r["domain"]].append(bool(r["success"]))
            by = {d: by[d] for d in sorted(by)} | {"overall": [bool(r["success"]) for r in rows]}
            rates[arm] = {d: sum(v) / len(v) for d, v in by.items() if v}
            counts[arm] = {d: len(v) for d, v in by.items()}
        return rates, counts

    def summary_frame(self) -> pd.DataFrame:
        """Per arm: tasks, ExecutionAcc, routing accuracy against the gold agent, harness errors,
        wrong-env rows, and the mean cost per task (Table 7 analog)."""
        import pandas as pd

        out = []
        for arm, rows in self.rows.items():
            n = max(len(rows), 1)
            routed = [r for r in rows if r["agents"]]
            agree = sum(1 for r in routed if r["agents"][0] == self.gold.get(r["id"]))
            out.append({
                "arm": arm, "tasks": len(rows),
                "ExecutionAcc %": round(100 * sum(bool(r["success"]) for r in rows) / n, 1),
                "routed to gold agent %": round(100 * agree / n, 1),
                "harness errors": sum(1 for r in rows if r.get("error")),
                "wrong env": sum(1 for r in rows if r.get("status") == "wrong_env"),
                "no agent chosen": sum(1 for r in rows if r.get("status") == "no_agent"),
                **{f"{f} / task": round(sum(float(r.get(f) or 0) for r in rows) / n, 1) for f in COST_FIELDS},
            })
        return pd.DataFrame(out).set_index("arm")


def _options(config: ExecAccConfig, **runner_options: Any) -> ExecOptions:
    return ExecOptions(router="forced", max_steps=config.max_steps, time_limit_s=config.time_limit_s, seed=config.seed,
                       max_new_tokens=config.max_new_tokens, runner_options=dict(runner_options))


def run_pairs(
    pairs: dict[str, list[ExecTask]], *, pool: AgentPool, llm: LLMBackend | Backends, out_dir: Path,
    options: ExecOptions, progress: bool = True, retry_errors: bool = False,
    scale: Scale | None = None, models: ModelsFile | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """Run each agent on its tasks (resumable, one run folder per agent); (task id, agent) -> row.
    ``llm``: the agents' model, or a model per role (an LLM config file's ``roles:``,
    :meth:`agentlab.llm.roles.ModelsFile.load`). ``scale``: Ray workers (or a cluster) for each
    agent's episodes; they build their models from ``models`` (the configuration ``llm`` was
    loaded from), never from a loaded backend, so a distributed run needs it."""
    scale = scale or Scale()
    if scale.distributed and models is None:
        raise ConfigError("a distributed ExecutionAcc run needs the models' configuration (models=), not only loaded models")
    done: dict[tuple[str, str], dict[str, Any]] = {}
    worker = Worker(pool, Backends.of(llm))
    for agent, tasks in sorted(pairs.items()):
        # a resumed folder made with another model, prompt or option is refused (the run's manifest);
        # it may gain tasks (another arm chose this agent for them, or the task cap grew)
        recipe = EpisodeRecipe(out_dir / agent, options, models or ModelsFile(), agent=agent)
        spec = RunSpec(recipe, scale=scale, resume=True, retry_errors=retry_errors, grow=True)
        summary = execute(spec, tasks, worker=worker, progress=progress)
        for row in summary.rows:
            done[(row["id"], agent)] = rebased(row, f"{agent}/")  # the trajectory relative to out_dir
    return done


def run(
    tasks: Sequence[ExecTask], pool: AgentPool, llm: LLMBackend | Backends, config: ExecAccConfig, out_dir: Path, *,
    progress: bool = True, routes: dict[str, RouteFn] | None = None, retry_errors: bool = False,
    scale: Scale | None = None, models: ModelsFile | None = None,
) -> ExecAcc:
    """Route every task with every arm, run each distinct (task, agent) once, judge; rows per arm
    (``llm``: one model or a model per role; ``scale``/``models``: Ray workers, :func:`run_pairs`)."""
    if not config.arms:
        raise ConfigError("no arms to measure (arms: [])")
    chosen = pick_tasks(tasks, config.tasks, config.envs)
    if not chosen:
        raise ConfigError(f"no task of envs {config.envs} to run")
    gold: dict[str, str] = {}
    decisions: dict[str, dict[str, str | None]] = {}
    errors: dict[tuple[str, str], str] = {}
    no_agent: dict[tuple[str, str], str] = {}
    for arm in config.arms:
        route = (routes or {}).get(arm) or arm_route(arm, pool, config)
        decisions[arm] = {}
        for task in chosen:
            try:
                decisions[arm][task.id] = route(task)
            except NoAgentChosen as exc:  # the router failed on this task: a failed row for this arm
                decisions[arm][task.id] = None
                no_agent[(arm, task.id)] = " ".join(exc.message.split())
            except AgentlabError as exc:  # no agent could be built for this task: a harness-error row
                decisions[arm][task.id] = None
                errors[(arm, task.id)] = " ".join(str(exc).split())
    for task in chosen:
        try:
            gold[task.id] = gt_agent(task, pool)
        except AgentlabError:
            pass
    # every arm's decision, kept before anything runs: an interrupted measurement can still be read
    # back (:func:`partial_rows`) from the episodes that finished
    atomic_write_json(out_dir / DECISIONS, {
        "decisions": decisions, "gold": gold, "domains": {t.id: t.domain for t in chosen},
        "no_agent": _by_arm(no_agent), "errors": _by_arm(errors)})
    pairs: dict[str, list[ExecTask]] = defaultdict(list)
    for task in chosen:
        for agent in sorted({a for d in decisions.values() if (a := d[task.id]) is not None}):
            pairs[agent].append(task)
    n_pairs = sum(len(v) for v in pairs.values())
    log.info("execution acc: %d task(s), %d arm(s), %d distinct (task, agent) episode(s)", len(chosen), len(config.arms), n_pairs)
    done = run_pairs(pairs, pool=pool, llm=llm, out_dir=out_dir / "by_agent", options=_options(config), progress=progress,
                     retry_errors=retry_errors, scale=scale, models=models)
    rows = assemble(decisions, {t.id: t.domain for t in chosen}, done, no_agent=no_agent, errors=errors)
    for arm, arm_rows in rows.items():
        write_jsonl(out_dir / "arms" / arm / "results.jsonl", arm_rows)
    return ExecAcc(rows=rows, gold=gold)


#: the arms' decisions of a measurement, written before its episodes run (:func:`partial_rows`)
DECISIONS = "decisions.json"


def _by_arm(pairs: dict[tuple[str, str], str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for (arm, task_id), message in pairs.items():
        out[arm][task_id] = message
    return dict(out)


def assemble(decisions: dict[str, dict[str, str | None]], domains: dict[str, str],
             done: dict[tuple[str, str], dict[str, Any]], *, no_agent: dict[tuple[str, str], str],
             errors: dict[tuple[str, str], str], partial: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Each arm's rows in task order: the shared episode of the agent it chose (relabelled), or a
    failed row when it chose none (``no_agent``) or none could be built (``errors``). ``partial``:
    a task whose episode has not finished is left out of that arm (an interrupted measurement)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for arm, by_task in decisions.items():
        arm_rows: list[dict[str, Any]] = []
        for task_id, picked in by_task.items():
            if picked is None:
                failed = (arm, task_id) in no_agent
                arm_rows.append({"id": task_id, "domain": domains[task_id], "router": arm, "agents": [], "success": False,
                                 "score": 0.0, "status": "no_agent" if failed else "error",
                                 "error": None if failed else errors.get((arm, task_id)),
                                 "agent_error": no_agent.get((arm, task_id)),
                                 **{f: 0 for f in COST_FIELDS}, "trajectory": None})
            elif (task_id, picked) in done:
                arm_rows.append(rebased(done[(task_id, picked)], "../../by_agent/", router=arm))  # relative to the arm's folder
            elif not partial:
                raise ConfigError(f"no episode of {picked} on {task_id} after the run", where=task_id)
        rows[arm] = arm_rows
    return rows


def read_decisions(out_dir: Path) -> dict[str, Any] | None:
    """A measurement's ``decisions.json`` (None: it has none); a file that does not read is one line."""
    path = out_dir / DECISIONS
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("decisions"), dict) or not isinstance(data.get("domains"), dict):
            raise ValueError("no 'decisions' and 'domains' maps")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the arms' decisions: {exc}", where=path) from None
    return data


def partial_rows(out_dir: Path) -> dict[str, list[dict[str, Any]]] | None:
    """Each arm's rows of a measurement that has not finished (no ``arms/`` yet): from its
    decisions and the episodes its per-agent folders hold so far; None when it has no decisions.
    An arm's count is then the tasks whose chosen episode finished, so arms may differ in n."""
    data = read_decisions(out_dir)
    if data is None:
        return None
    done: dict[tuple[str, str], dict[str, Any]] = {}
    for results in sorted((out_dir / "by_agent").glob("*/results.jsonl")):
        agent = results.parent.name
        for row in read_jsonl(results):
            done[(row["id"], agent)] = rebased(row, f"{agent}/")
    flat = {name: {(arm, t): m for arm, by in data.get(name, {}).items() for t, m in by.items()}
            for name in ("no_agent", "errors")}
    return assemble(data["decisions"], data["domains"], done, no_agent=flat["no_agent"], errors=flat["errors"],
                    partial=True)


def docs_ablation(
    tasks: Sequence[ExecTask], pool: AgentPool, llm: LLMBackend, config: ExecAccConfig, out_dir: Path, *,
    progress: bool = True,
) -> ExecAcc:
    """Table 3 analog: every phone task with its gold agent, ``with docs`` and ``without docs``."""
    phone = pick_tasks(tasks, config.tasks, ["phone"])
    if not phone:
        raise ConfigError("no phone tasks to run the documentation ablation on")
    gold = {t.id: gt_agent(t, pool) for t in phone}
    pairs: dict[str, list[ExecTask]] = defaultdict(list)
    for t in phone:
        pairs[gold[t.id]].append(t)
    from agentlab.agents.appagent.docs_store import DocStore

    # what "with docs" means in this run: the elements each agent's app has documentation for
    documented = {a: len(DocStore(pool.get(a).runner_options.get("app", pool.get(a).domain)).documented()) for a in pairs}
    for agent, n in documented.items():
        if n == 0:
            log.warning("docs ablation: %s's app has no learned documentation (data/docs/%s): both arms are the same",
                        agent, pool.get(agent).domain)
    rows: dict[str, list[dict[str, Any]]] = {}
    for arm, use_docs in (("with docs", True), ("without docs", False)):
        sub = out_dir / ("docs" if use_docs else "no_docs")
        done = run_pairs(pairs, pool=pool, llm=llm, out_dir=sub, options=_options(config, use_docs=use_docs),
                         progress=progress)
        rows[arm] = [rebased(done[(t.id, gold[t.id])], "", router=arm) for t in phone]
    return ExecAcc(rows=rows, gold=gold, documented=documented)




def frame_markdown(frame: pd.DataFrame) -> list[str]:
    """A pipe table of ``frame`` (index as the first column); no tabulate dependency."""
    head = [str(frame.index.name or ""), *map(str, frame.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for idx, row in frame.iterrows():
        cells = ["-" if v != v else (f"{v:g}" if isinstance(v, float) else str(v)) for v in row.tolist()]  # v != v: NaN
        lines.append("| " + " | ".join([f"**{idx}**" if idx == "all" else str(idx), *cells]) + " |")
    return lines
