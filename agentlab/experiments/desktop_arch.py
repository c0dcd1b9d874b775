"""Desktop agent architectures side by side: Agent S2, PC-Agent, their ablations, the GUI runner, the store.

Issue #14's measured table. Each *variant* is one way of carrying a desktop task out:

* a pool agent with ``runner_options`` laid over its document (Agent S2 without proactive
  replanning, without one grounding expert; PC-Agent without reflection, without the manager),
* ``gui``: the desktop GUI runner of the execution issue (AppAgent's deploy loop) through the
  pool's ``runner: gui`` document of the task's application,
* ``store``: whatever the AgentToken MetaAgent routes the task to (the routed store).

Every variant runs every chosen task through the real episode runner
(:func:`agentlab.experiments.execution_acc.run_pairs`: resumable, one run folder per set of
runner options and agent, ``<out>/runs/<options>/<agent>/``, so variants running the same agent
with the same options -- the store routing a task to AgentS2 and the "Agent S2" row -- share
the episode) and the rows become one line of :meth:`ArchTable.frame`: ExecutionAcc, subtask
success (subtasks completed / planned, for the hierarchical runners), model calls and tokens
per task. What it does not hide: with the embedded 135M model every row is expected to be at
or near 0 %; the numbers say what the loops cost and how far the small model gets.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.run.episode import ExecOptions, NoAgentChosen, RouteFn, router_route
from agentlab.errors import AgentlabError, ConfigError
from agentlab.eval.benchmarks import domain_map
from agentlab.tasks.spec import ExecTask
from agentlab.experiments.execution_acc import COST_FIELDS, ROLE_COST_FIELDS, pick_tasks, role_means, run_pairs
from agentlab.fileio import write_jsonl
from agentlab.record.row import rebased
from agentlab.llm.base import LLMBackend
from agentlab.llm.roles import Backends
from agentlab.pool import AgentPool
from agentlab.experiments.pcagent_metrics import episode_metrics, rate
from agentlab.eval.reward import mean_reward
from agentlab.metaagent.mentions import ApplicationLexicon

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

#: variant agents that are not pool names
GUI, STORE = "gui", "store"


class Variant(BaseModel):
    """One row of the table: who carries the tasks out, and with which runner options."""

    model_config = ConfigDict(extra="forbid")

    name: str
    #: a pool agent's name, ``gui`` (the task application's GUI-runner document) or ``store`` (AgentToken routes)
    agent: str
    runner_options: dict[str, Any] = Field(default_factory=dict)


def default_variants() -> list[Variant]:
    """The issue's rows: both architectures, the papers' ablations, the GUI runner, the routed store."""
    s2, pc = "AgentS2", "PCAgent"
    return [
        Variant(name="Agent S2", agent=s2),
        Variant(name="S2 w/o proactive replanning", agent=s2, runner_options={"replan": False}),
        Variant(name="S2 w/o visual expert", agent=s2, runner_options={"experts": ["textual", "structural"]}),
        Variant(name="S2 w/o textual expert", agent=s2, runner_options={"experts": ["visual", "structural"]}),
        Variant(name="S2 w/o structural expert", agent=s2, runner_options={"experts": ["visual", "textual"]}),
        Variant(name="PC-Agent", agent=pc),
        Variant(name="PC-Agent w/o reflection", agent=pc, runner_options={"reflection": False}),
        Variant(name="PC-Agent w/o manager", agent=pc, runner_options={"manager": False}),
        # the paper's active perception ablation: no OCR text, so no intention understanding either
        Variant(name="PC-Agent w/o active perception", agent=pc, runner_options={"ocr": False}),
        Variant(name="GUI runner (AppAgent loop)", agent=GUI),
        Variant(name="routed store (AgentToken)", agent=STORE),
    ]


def grounding_variants() -> list[Variant]:
    """Agent S2's grounding ablation (issue #26): who places the visual expert's point -- the
    ``grounder`` role's model (the "Agent S2" row, when a roles file gives it one), the acting
    model, or accessibility matching without a model. Opt-in: with one text model all three rows
    are the same episodes (a model without images always matches elements)."""
    return [Variant(name="S2 grounding by the acting model", agent="AgentS2", runner_options={"grounding": "worker"}),
            Variant(name="S2 grounding by accessibility", agent="AgentS2", runner_options={"grounding": "elements"})]


class DesktopArchConfig(BaseModel):
    """One measurement (a notebook parameter cell or the benchmark's flags fill it)."""

    model_config = ConfigDict(extra="forbid")

    variants: list[Variant] = Field(default_factory=default_variants)
    #: at most this many desktop tasks, round-robin over domains (None: all)
    tasks: int | None = Field(None, ge=1)
    #: only tasks whose id starts with one of these (e.g. ``["pc-"]`` for the multi-app tasks); empty: all
    prefixes: list[str] = Field(default_factory=list)
    max_steps: int = Field(5, ge=1)
    max_new_tokens: int | None = Field(192, ge=16)
    time_limit_s: float = Field(600.0, gt=0)
    seed: int = 0
    #: AgentToken checkpoint of the ``store`` variant (default data/tokens)
    tokens: Path | None = None
    #: runner options every fixed-agent variant gets under its own (e.g. ``{"max_retries": 1}`` to
    #: bound a small model's re-asks; S2, PC-Agent and the GUI runner take it); not the ``store``
    #: variant, whose routed agents may have other runners
    common_options: dict[str, Any] = Field(default_factory=dict)


def gui_agent(task: ExecTask, pool: AgentPool) -> str:
    """The pool's ``runner: gui`` document for the task's first application (its domain through
    ``data/benchmarks/domain_map.json``), else the task's domain; a :class:`ConfigError` when none."""
    apps = domain_map().get("osworld_apps", {})
    domains = [d for a in task.apps if (d := apps.get(a.replace("-", "_")) or apps.get(a.split("-")[-1]))]
    for domain in [*domains, task.domain]:
        names = sorted(a.name for a in pool.agents if a.domain == domain and a.runner == "gui")
        if names:
            return names[0]
    raise ConfigError(f"no 'runner: gui' document for task {task.id} (apps: {', '.join(task.apps) or 'none'})",
                      where=task.source or task.id)


@dataclass
class ArchTable:
    """Each variant's ``results.jsonl`` rows (``router`` = the variant's name)."""

    rows: dict[str, list[dict[str, Any]]]
    variants: list[Variant] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        """One line per variant: tasks, ExecutionAcc, subtask success, harness errors and cost per task."""
        import pandas as pd

        out = []
        for name, rows in self.rows.items():
            n = max(len(rows), 1)
            planned = sum(int(r.get("subtasks") or 0) for r in rows)
            done = sum(int(r.get("subtasks_done") or 0) for r in rows)
            out.append({
                "variant": name, "tasks": len(rows),
                "ExecutionAcc %": round(100 * sum(bool(r["success"]) for r in rows) / n, 1),
                # AppAgent's finer measure: the final state's share of the evaluator's checks met
                "Reward": round(rew, 2) if (rew := mean_reward(rows)) is not None else float("nan"),
                # rows of flat runners carry no subtasks: "-" rather than a misleading 0
                "subtask success %": round(100 * done / planned, 1) if planned else float("nan"),
                "subtasks / task": round(planned / n, 1) if planned else float("nan"),
                "harness errors": sum(1 for r in rows if r.get("error")),
                # PC-Agent's own figures (its paper's Table 4): "-" where no row of the variant has them
                "recovery %": _percent(rate(r.get("recovered") for r in rows)),
                "manager SR %": _percent(rate(r.get("manager_ok") for r in rows)),
                "agents": ", ".join(sorted({a for r in rows for a in r.get("agents", [])})),
                **{f"{f} / task": round(sum(float(r.get(f) or 0) for r in rows) / n, 1) for f in COST_FIELDS},
            })
        return pd.DataFrame(out).set_index("variant")

    def role_frame(self) -> pd.DataFrame:
        """Costs per role: one line per (variant, role) with its model and its calls and tokens per
        task (``usage_by_role`` of the rows), so a table says which role spent the tokens."""
        import pandas as pd

        out = [{"variant": name, "role": role, "model": use["model"], **{f"{f} / task": use[f] for f in ROLE_COST_FIELDS}}
               for name, rows in self.rows.items() for role, use in role_means(rows).items()]
        columns = ["variant", "role", "model", "llm_calls / task", "tokens_in / task", "tokens_out / task",
                   "image_bytes / task"]
        return pd.DataFrame(out, columns=columns).set_index("variant")


def _percent(counts: tuple[int, int]) -> float:
    """``k / n`` in percent, one decimal; NaN (shown as "-") when nothing was judged."""
    k, n = counts
    return round(100 * k / n, 1) if n else float("nan")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def options_key(runner_options: dict[str, Any]) -> str:
    """The run folder name of a set of runner options (``default`` for none)."""
    if not runner_options:
        return "default"
    return _slug(json.dumps(runner_options, sort_keys=True))[:80]


def variant_route(variant: Variant, pool: AgentPool, config: DesktopArchConfig) -> RouteFn:
    """Which agent does each task in ``variant``."""
    if variant.agent == GUI:
        return lambda task: gui_agent(task, pool)
    if variant.agent == STORE:
        return router_route("agenttoken", pool, config.tokens)
    pool.get(variant.agent)  # an unknown name fails here, before anything runs
    return lambda task: variant.agent


def choose_tasks(tasks: Sequence[ExecTask], config: DesktopArchConfig) -> list[ExecTask]:
    """The desktop tasks of the run (prefix filter, then round-robin over domains)."""
    desk = [t for t in tasks if t.env == "desktop" and (not config.prefixes or t.id.startswith(tuple(config.prefixes)))]
    return pick_tasks(desk, config.tasks, ["desktop"])


def run(
    tasks: Sequence[ExecTask], pool: AgentPool, llm: LLMBackend | Backends, config: DesktopArchConfig, out_dir: Path,
    *, progress: bool = True, retry_errors: bool = False,
) -> ArchTable:
    """Every variant on every chosen desktop task; rows per variant (also written to
    ``<out>/variants/<slug>/results.jsonl``). ``llm``: one model, or a model per role (Agent S2's
    manager, worker, grounder; PC-Agent's) from an LLM config file's ``roles:``."""
    if not config.variants:
        raise ConfigError("no variants to measure (variants: [])")
    names = [v.name for v in config.variants]
    if len(set(names)) != len(names):
        raise ConfigError(f"variant names must be distinct: {names}")
    chosen = choose_tasks(tasks, config)
    if not chosen:
        raise ConfigError(f"no desktop task to run (prefixes: {config.prefixes or 'any'})")
    rows: dict[str, list[dict[str, Any]]] = {}
    lexicon = ApplicationLexicon.from_pool(pool)
    for variant in config.variants:
        route = variant_route(variant, pool, config)
        pairs: dict[str, list[ExecTask]] = {}
        picked: dict[str, str | None] = {}
        problems: dict[str, tuple[str, str]] = {}
        for task in chosen:
            try:
                agent = route(task)
            except NoAgentChosen as exc:
                picked[task.id], problems[task.id] = None, ("no_agent", " ".join(exc.message.split()))
                continue
            except AgentlabError as exc:
                picked[task.id], problems[task.id] = None, ("error", " ".join(str(exc).split()))
                continue
            picked[task.id] = agent
            pairs.setdefault(agent, []).append(task)
        options = ExecOptions(router="forced", max_steps=config.max_steps, time_limit_s=config.time_limit_s,
                              seed=config.seed, max_new_tokens=config.max_new_tokens,
                              # the store routes to any runner (a code agent takes no max_retries): its
                              # agents run with their documents' own options
                              runner_options={**({} if variant.agent == STORE else config.common_options),
                                              **variant.runner_options})
        sub = out_dir / "variants" / _slug(variant.name)
        # episodes are shared by variants that run the same agent with the same options (the store
        # routing a task to AgentS2 reuses the "Agent S2" variant's episode): greedy decoding, one seed
        key = options_key(options.runner_options)
        log.info("desktop architectures: %s on %d task(s)", variant.name, len(chosen))
        done = run_pairs(pairs, pool=pool, llm=llm, out_dir=out_dir / "runs" / key, options=options,
                         progress=progress, retry_errors=retry_errors)
        out: list[dict[str, Any]] = []
        for task in chosen:
            chosen_agent = picked[task.id]
            if chosen_agent is None:
                status, message = problems[task.id]
                out.append({"id": task.id, "domain": task.domain, "router": variant.name, "agents": [],
                            "success": False, "score": 0.0, "status": status,
                            "error": message if status == "error" else None,
                            "agent_error": message if status == "no_agent" else None,
                            **{f: 0 for f in COST_FIELDS}, "trajectory": None})
                continue
            episode = done[(task.id, chosen_agent)].get("trajectory")
            figures = (episode_metrics(out_dir / "runs" / key / str(episode), task.apps, lexicon)  # PC-Agent's own
                       if pool.get(chosen_agent).runner == "pcagent" and episode else None)
            out.append(rebased(done[(task.id, chosen_agent)], f"../../runs/{key}/", router=variant.name,  # relative to the variant's folder
                               extra=figures))
        write_jsonl(sub / "results.jsonl", out)
        rows[variant.name] = out
    return ArchTable(rows=rows, variants=list(config.variants))
