"""AgentStore's Table 1 on this workbench: every task set, every router, the generalists.

The paper's first table compares the store (a MetaAgent routing each task to a specialist)
with single generalists, domain by domain. Here one *measurement* runs each task set of the
project (:data:`TASK_SETS`) under every arm -- ground truth, each router of
:data:`~agentlab.metaagent.router.ROUTERS` under the store's policy, and the generalists
(:data:`GENERALIST_ARMS`: one agent per environment, as the paper's single-generalist rows) --
through :func:`agentlab.experiments.execution_acc.run`, so an episode is shared by every arm
that chose the same agent for a task (greedy decoding: it is the same episode) and every
(task, agent) pair lives in a resumable ``agentlab exec`` run folder
(``<out>/<set>/by_agent/<agent>/``); each arm's rows are also written in the ``agentlab exec``
format to ``<out>/<set>/arms/<arm>/results.jsonl``.

:class:`Table1` reads the rows back into the paper's layout -- methods as rows, domains as
columns, each cell ExecutionAcc with its 95 % Wilson interval -- beside routing accuracy and the
cost per task, and splits each arm's gap to ground truth into what routing lost (tasks ground
truth solved that the arm sent elsewhere and failed) and what it won (tasks the arm sent
elsewhere and solved where ground truth failed). Execution errors are the tasks the gold agent
itself failed; an arm that routes right shares them, since it runs the very same episode.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import AgentlabError, ConfigError
from agentlab.eval.variance import wilson_interval
from agentlab.experiments import execution_acc as ea
from agentlab.experiments.markdown import table
from agentlab.fileio import read_jsonl
from agentlab.llm.base import LLMBackend
from agentlab.llm.roles import Backends, ModelsFile
from agentlab.metaagent.router import LEARNED_ROUTERS, ROUTERS, router_class
from agentlab.parallel import Scale
from agentlab.paths import data_dir
from agentlab.pool import AgentPool
from agentlab.run.episode import NoAgentChosen, RouteFn, RouterRoute, router_route
from agentlab.tasks.spec import ExecTask, load_tasks

log = logging.getLogger(__name__)

#: the project's task sets: name -> folder under ``data/`` (the shipped tasks of every
#: environment, the two workspace development sets, the desktop held-out set and v2)
TASK_SETS: dict[str, str] = {
    "tasks": "tasks",
    "dev1": "tasks_heldout",
    "dev2": "tasks_dev2",
    "desktop_heldout": "tasks_desktop_heldout",
    "v2": "tasks_heldout_v2",
}

#: the single-generalist arms: per environment, the one agent that does every task of it
GENERALIST_ARMS: dict[str, dict[str, str]] = {
    "generalist-s2": {"workspace": "Friday", "desktop": "AgentS2", "phone": "AppAgent"},
    "generalist-pc": {"workspace": "Friday", "desktop": "PCAgent", "phone": "AppAgent"},
}

#: every arm in the table's order: ground truth, the routers, the generalists
ARMS: tuple[str, ...] = (*ROUTERS, *GENERALIST_ARMS)
#: the arms of the committed table (``--arms default``): LoRA and prompt tuning fitted on 16
#: demonstrations per agent (as the routing benchmark fits them; on all 3,240 each takes about
#: half an hour here) and AgentToken fitted on 10, 30 and 100 per agent (Figure 5)
DEFAULT_ARMS: tuple[str, ...] = ("gt", "agenttoken", "hybrid", "embedding", "icl", *GENERALIST_ARMS,
                                 "agenttoken:10", "agenttoken:30", "agenttoken:100", "lora:16", "prompt:16")

def parse_arm(name: str) -> tuple[str, int | None]:
    """``hybrid@10`` -> (``hybrid``, 10); a plain arm -> (name, None). Unknown names: one line.
    ``<router>@<k>`` (Figure 3 on the execution axis) is the store with only the first ``k`` agents
    of :func:`enrolment_order` enrolled (distractors of other devices included), routed as usual.
    ``<router>:<n>`` (Figure 5 on the execution axis, :func:`demos_of`) parses to (router, None)."""
    base, _, size = name.partition("@")
    if size:
        if base not in ROUTERS or base == "gt" or not size.isdigit() or int(size) < 1:
            raise ConfigError(f"arm {name!r}: a store of k agents is <router>@<k> with a router of "
                              f"{', '.join(r for r in ROUTERS if r != 'gt')} and k >= 1")
        return base, int(size)
    if ":" in name:
        return demos_of(name)[0], None
    if name not in ARMS:
        raise ConfigError(f"unknown arm {name!r}; known: {', '.join(ARMS)}, <router>@<k> (a store of k agents) "
                          "or <router>:<n> (a router fitted on n demonstrations per agent)")
    return name, None


def demos_of(name: str) -> tuple[str, int | None]:
    """``agenttoken:30`` -> (``agenttoken``, 30): the router fitted afresh on at most 30
    demonstrations per agent (seeds first, then a seeded sample of the self-instructed ones,
    :func:`~agentlab.metaagent.data.load_training_set`) instead of its shipped checkpoint or its
    default data -- Figure 5 on the execution axis, and the LoRA and prompt-tuning arms at a size
    a 2-core machine trains in minutes. A name without ``:`` -> (name, None)."""
    base, sep, size = name.partition(":")
    if not sep:
        return name, None
    if base not in LEARNED_ROUTERS or not size.isdigit() or int(size) < 1:
        raise ConfigError(f"arm {name!r}: a router fitted on n demonstrations per agent is <router>:<n> with a "
                          f"router of {', '.join(LEARNED_ROUTERS)} and n >= 1")
    return base, int(size)


def enrolment_order(pool: AgentPool, seed: int = 0) -> list[str]:
    """The order agents join the store in the growth arms: a seeded shuffle of every agent of the
    pool (every device's: the others are distractors a router may still rank first)."""
    import random

    names = sorted(d.name for d in pool)
    random.Random(seed).shuffle(names)
    return names


class StoreOfK:
    """A route over a router built on the whole pool, restricted to the agents enrolled so far: what
    AgentToken promises (a token per agent, added or removed without retraining the others), and
    for every router the same restriction of its ranking."""

    def __init__(self, base: RouterRoute, enrolled: Sequence[str], label: str) -> None:
        self.base, self.enrolled, self.label = base, frozenset(enrolled), label

    def __call__(self, task: ExecTask) -> str:
        acting = self.base.acting(task.env) & self.enrolled
        if not acting:
            raise NoAgentChosen(f"{self.label} chose no agent: none of them acts on a {task.env} task",
                                where=task.source or task.id)
        decided = self.base.router.route([task], acting=acting, policy=self.base.policy)[0]
        if decided.agent is None or decided.agent not in acting:
            why = f": {' '.join(decided.error.split())}" if decided.error else ""
            raise NoAgentChosen(f"{self.label} chose no agent{why}", where=task.source or task.id)
        return decided.agent


#: the paper's column order (its domains, then the phone apps); a domain not listed goes after them
DOMAIN_ORDER: tuple[str, ...] = ("os", "calc", "impress", "writer", "vlc", "thunderbird", "chrome", "vscode",
                                 "gimp", "general")


class Table1Config(BaseModel):
    """One Table 1 measurement (the benchmark's flags or a notebook's parameter cell fill it)."""

    model_config = ConfigDict(extra="forbid")

    sets: list[str] = Field(default_factory=lambda: list(TASK_SETS))
    arms: list[str] = Field(default_factory=lambda: arms_of(DEFAULT_ARMS))
    #: at most this many tasks per set, round-robin over its domains (None: all)
    per_set: int | None = Field(None, ge=1)
    envs: list[str] = Field(default_factory=lambda: ["workspace", "desktop", "phone"])
    max_steps: int = Field(4, ge=1)
    max_new_tokens: int | None = Field(256, ge=16)
    time_limit_s: float = Field(600.0, gt=0)
    seed: int = 0

    def check(self) -> None:
        """One line naming what is unknown, before anything runs."""
        bad_sets = [s for s in self.sets if s not in TASK_SETS]
        if bad_sets:
            raise ConfigError(f"unknown task set(s) {', '.join(bad_sets)}; known: {', '.join(TASK_SETS)}")
        for arm in self.arms:
            parse_arm(arm)
        if not self.arms or not self.sets:
            raise ConfigError("a Table 1 run needs at least one set and one arm")


def set_tasks(name: str, config: Table1Config) -> list[ExecTask]:
    """The tasks of set ``name`` this measurement runs (single-agent, of its envs, capped per set)."""
    folder = data_dir() / TASK_SETS[name]
    if not folder.is_dir():
        raise ConfigError(f"task set '{name}': no folder {folder}")
    return ea.pick_tasks(load_tasks(folder), config.per_set, config.envs)


#: the marker a fitted router's folder gets once its state is saved whole (:func:`fitted_route`)
FITTED = "fitted.json"


def fitted_route(kind: str, pool: AgentPool, per_agent: int, *, seed: int = 0, keep: Path | None = None) -> RouterRoute:
    """Router ``kind`` fitted afresh on at most ``per_agent`` demonstrations per agent of the
    project's data (:func:`demos_of`), routing under the store's policy as every arm does.
    ``keep``: a folder (``<out>/routers``) where the fitted state is saved and, on a later
    invocation into the same run folder, loaded instead of fitted again (LoRA and prompt tuning
    take minutes) -- only when it was fitted on the very same demonstrations (their fingerprint is
    in its marker: an enrolled agent or new self-instruct data means a fresh fit); a saved state
    that does not load is one warning and a fresh fit."""
    import hashlib

    from agentlab.fileio import atomic_write_json
    from agentlab.metaagent.data import load_training_set

    cls = router_class(kind)
    train = load_training_set(pool, None, per_agent=per_agent, seed=seed)
    data = json.dumps([train.agents, train.texts, train.labels, train.states], ensure_ascii=False)
    fingerprint = hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]
    where = keep / f"{kind}-{per_agent}-seed{seed}" if keep is not None else None
    if where is not None and _kept_fingerprint(where) == fingerprint:
        try:
            router = cls.load(where / "state", pool)
            log.info("table 1: %s:%d loaded from %s", kind, per_agent, where)
            return RouterRoute(router, f"{kind}:{per_agent}")
        except (AgentlabError, OSError, ValueError, NotImplementedError) as exc:
            log.warning("table 1: the fitted %s:%d in %s does not load (%s); fitting it again",
                        kind, per_agent, where, " ".join(str(exc).split()))
    log.info("table 1: fitting %s on %d demonstration(s) (at most %d per agent)", kind, len(train), per_agent)
    router = cls(pool, progress=False)
    router.fit(train)
    if where is not None:
        try:
            router.save(where / "state")
            atomic_write_json(where / FITTED, {"router": kind, "per_agent": per_agent, "seed": seed,
                                               "examples": len(train), "demonstrations": fingerprint})
        except NotImplementedError:  # nothing trained to keep (ICL reads its demonstrations each time)
            pass
    return RouterRoute(router, f"{kind}:{per_agent}")


def _kept_fingerprint(where: Path) -> str | None:
    """The demonstrations' fingerprint a kept fit was made from (None: no kept fit, or a marker that does not read)."""
    try:
        return str(json.loads((where / FITTED).read_text(encoding="utf-8"))["demonstrations"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def generalist_route(arm: str, pool: AgentPool) -> RouteFn:
    """The route of a generalist arm: its agent for the task's environment (checked against the pool now)."""
    by_env = GENERALIST_ARMS[arm]
    for agent in by_env.values():
        pool.get(agent)  # an unknown name fails here, before anything runs

    def route(task: ExecTask) -> str:
        agent = by_env.get(task.env)
        if agent is None:
            raise ConfigError(f"{arm}: no generalist for env '{task.env}'", where=task.id)
        return agent
    return route


@dataclass
class Table1:
    """Every arm's rows over every set (``results.jsonl`` rows with ``set`` added), and the gold agents."""

    rows: dict[str, list[dict[str, Any]]]
    gold: dict[str, str] = field(default_factory=dict)
    #: sets read back from an interrupted run (the tasks whose episodes finished; arms may differ in n)
    partial: list[str] = field(default_factory=list)

    # -- reading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, out: Path) -> Table1:
        """The table from a run folder written by :func:`run` (per set: ``arms/<arm>/results.jsonl``
        and the arms' decisions, which also name the gold agents): what notebook 04 and the
        benchmark's report read back. Each set keeps its own files, so two processes may run two
        sets into one folder at once."""
        rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        gold: dict[str, str] = {}
        partial: list[str] = []
        folders = sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []
        for folder in folders:
            decided = ea.read_decisions(folder)
            if decided is None:
                continue
            gold.update(decided.get("gold") or {})
            arms = sorted(folder.glob("arms/*/results.jsonl"))
            # arms written before the latest decisions belong to an earlier, smaller invocation
            stamp = (folder / ea.DECISIONS).stat().st_mtime
            if arms and max(a.stat().st_mtime for a in arms) >= stamp:
                for results in arms:
                    rows[results.parent.name] += [{**r, "set": folder.name} for r in read_jsonl(results)]
                continue
            partial.append(folder.name)  # a set interrupted mid-run: the episodes it has
            cut = ea.partial_rows(folder) or {}
            for arm, arm_rows in cut.items():
                rows[arm] += [{**r, "set": folder.name} for r in arm_rows]
            # arms an earlier invocation finished and the cut one did not decide again stay as written
            for results in arms:
                if results.parent.name not in cut and results.parent.name not in decided["decisions"]:
                    rows[results.parent.name] += [{**r, "set": folder.name} for r in read_jsonl(results)]
        if not rows:
            raise ConfigError(f"no Table 1 rows under {out} (expected <set>/arms/<arm>/results.jsonl)")
        try:
            ordered = arms_of(list(rows))
        except ConfigError:  # a folder with an arm this version does not know: alphabetical
            ordered = sorted(rows)
        return cls(rows={a: rows[a] for a in ordered}, gold=gold, partial=partial)

    def domains(self) -> list[str]:
        """The table's columns: the paper's domains first, then any other in alphabetical order."""
        seen = {r["domain"] for rows in self.rows.values() for r in rows}
        return [d for d in DOMAIN_ORDER if d in seen] + sorted(seen - set(DOMAIN_ORDER))

    # -- the figures ----------------------------------------------------------------------------
    def cells(self) -> dict[str, dict[str, tuple[int, int]]]:
        """arm -> domain (and ``all``) -> (successes, tasks); a harness error counts as a failure."""
        out: dict[str, dict[str, tuple[int, int]]] = {}
        for arm, rows in self.rows.items():
            by: dict[str, list[bool]] = defaultdict(list)
            for r in rows:
                by[r["domain"]].append(bool(r.get("success")))
                by["all"].append(bool(r.get("success")))
            out[arm] = {d: (sum(v), len(v)) for d, v in by.items()}
        return out

    def routing_accuracy(self, arm: str) -> float | None:
        """The share of the arm's tasks routed to the gold agent (None: no gold agent known)."""
        rows = [r for r in self.rows[arm] if r["id"] in self.gold]
        if not rows:
            return None
        return sum(1 for r in rows if r.get("agents") and r["agents"][0] == self.gold[r["id"]]) / len(rows)

    def gap(self, arm: str, reference: str = "gt") -> dict[str, int]:
        """The arm's gap to ``reference`` in tasks. ``lost``: the arm sent the task to another
        agent than the gold one and failed where the reference solved it; ``won``: sent elsewhere
        and solved where the reference failed; ``execution``: sent to the gold agent, which failed
        (the reference's own failures, shared: it is the same episode); ``tasks``: compared.
        With the gold agent the arm runs the reference's very episode, so
        ``reference - arm = lost - won`` in tasks."""
        ref = {r["id"]: bool(r.get("success")) for r in self.rows.get(reference, [])}
        out = {"lost": 0, "won": 0, "execution": 0, "tasks": 0}
        for r in self.rows[arm]:
            if r["id"] not in ref:
                continue
            out["tasks"] += 1
            right = bool(r.get("agents")) and r["agents"][0] == self.gold.get(r["id"])
            ok = bool(r.get("success"))
            if right:
                out["execution"] += int(not ok)
            else:
                out["lost"] += int(ref[r["id"]] and not ok)
                out["won"] += int(ok and not ref[r["id"]])
        return out

    def cost(self, arm: str) -> dict[str, float]:
        """Means per task of the arm's steps, model calls, tokens and seconds."""
        rows = self.rows[arm]
        n = max(len(rows), 1)
        return {f: sum(float(r.get(f) or 0) for r in rows) / n for f in ea.COST_FIELDS}

    # -- the tables -------------------------------------------------------------------------------
    def accuracy_lines(self) -> list[str]:
        """The paper's layout: methods as rows, domains (and ``all``) as columns, each cell
        ``ExecutionAcc % [95 % interval]`` and its task count."""
        cols = [*self.domains(), "all"]
        cells = self.cells()
        body = []
        for arm in self.rows:
            line: list[object] = [f"**{arm}**" if arm == "gt" else arm]
            for d in cols:
                k, n = cells[arm].get(d, (0, 0))
                if n == 0:
                    line.append("-")
                    continue
                lo, hi = wilson_interval(k, n)
                line.append(f"{100 * k / n:.0f} [{100 * lo:.0f}-{100 * hi:.0f}] n={n}")
            body.append(line)
        return table(["method", *cols], body)

    def set_lines(self) -> list[str]:
        """Per arm and task set: solved / tasks (%): the sets differ in how they are worded (the
        project's own words, people's words written blind), so the overall figure hides them."""
        sets = sorted({r.get("set", "") for rows in self.rows.values() for r in rows})
        body = []
        for arm, rows in self.rows.items():
            line: list[object] = [arm]
            for name in sets:
                got = [bool(r.get("success")) for r in rows if r.get("set", "") == name]
                line.append(f"{sum(got)}/{len(got)} ({100 * sum(got) / len(got):.1f} %)" if got else "-")
            body.append(line)
        return table(["arm", *sets], body)

    def size_lines(self) -> list[str]:
        """Figures 3 and 5 on the execution axis as a table: each sized arm (``<router>@<k>``: a
        store of k agents; ``<router>:<n>``: fitted on n demonstrations per agent) beside its
        router's plain arm when the run has it, ExecutionAcc with its interval and routing to the
        gold agent. Empty when the run has no sized arm."""
        cells = self.cells()
        sized = [a for a in self.rows if "@" in a or ":" in a]
        if not sized:
            return []
        body: list[list[object]] = []
        for arm in sized:
            if "@" in arm:
                base, size = parse_arm(arm)
                axis = f"store of {size} agents"
            else:
                base, size = demos_of(arm)
                axis = f"{size} demonstrations per agent"
            for name, what in ((arm, axis), (base, "as shipped / default data")):
                if name not in self.rows or (name == base and any(r[0] == base for r in body)):
                    continue
                k, n = cells[name]["all"]
                lo, hi = wilson_interval(k, n)
                route = self.routing_accuracy(name)
                body.append([name, what, f"{k}/{n} ({100 * k / max(n, 1):.1f} %)", f"{100 * lo:.1f}-{100 * hi:.1f}",
                             "-" if route is None else f"{100 * route:.1f}"])
        return table(["arm", "what it is", "solved", "95 % interval", "routed to gold %"], body)

    def summary_lines(self) -> list[str]:
        """Per arm: ExecutionAcc, its ratio to ground truth, routing accuracy, the gap split and cost."""
        cells = self.cells()
        gt = cells.get("gt", {}).get("all")
        body = []
        for arm in self.rows:
            k, n = cells[arm]["all"]
            lo, hi = wilson_interval(k, n)
            # against ground truth on the arm's own tasks (an arm run on fewer sets is not compared with all)
            ids = {(r.get("set"), r["id"]) for r in self.rows[arm]}
            gt_ok = [bool(r.get("success")) for r in self.rows.get("gt", []) if (r.get("set"), r["id"]) in ids]
            ratio = f"{(k / n) / (sum(gt_ok) / len(gt_ok)):.2f}" if gt and n and gt_ok and sum(gt_ok) else "-"
            route = self.routing_accuracy(arm)
            g = self.gap(arm) if "gt" in self.rows and arm != "gt" else None
            c = self.cost(arm)
            body.append([arm, n, f"{k} ({100 * k / max(n, 1):.1f} %)", f"{100 * lo:.1f}-{100 * hi:.1f}", ratio,
                         "-" if route is None else f"{100 * route:.1f}",
                         "-" if g is None else g["lost"], "-" if g is None else g["won"],
                         sum(1 for r in self.rows[arm] if r.get("error")),
                         f"{c['steps']:.1f}", f"{c['llm_calls']:.1f}", f"{c['tokens_in']:.0f}", f"{c['seconds']:.1f}"])
        return table(["arm", "tasks", "solved", "95 % interval", "x ground truth", "routed to gold %",
                      "lost to routing", "won by routing", "harness errors", "steps / task", "model calls / task",
                      "tokens in / task", "seconds / task"], body)


def run(config: Table1Config, pool: AgentPool, llm: LLMBackend | Backends, out: Path, *,
        progress: bool = True, retry_errors: bool = False,
        on_set: Callable[[str, int], None] | None = None,
        scale: Scale | None = None, models: ModelsFile | None = None) -> Table1:
    """Every set of ``config`` under every arm (resumable: ``out`` keeps each episode), then the table.
    ``on_set(name, tasks)`` is told as each set starts (a progress line). ``scale``: Ray workers
    or an existing cluster for the episodes, built from ``models`` (the configuration ``llm`` was
    loaded from); the rows are the serial run's, timings aside."""
    config.check()
    routes: dict[str, RouteFn] = {arm: generalist_route(arm, pool) for arm in config.arms if arm in GENERALIST_ARMS}
    # every router is built (and a fitted one trained) once for the whole run, not once per set
    for arm in config.arms:
        if arm in ROUTERS:
            routes[arm] = router_route(arm, pool)
        elif ":" in arm:
            kind, n = demos_of(arm)
            assert n is not None
            routes[arm] = fitted_route(kind, pool, n, seed=config.seed, keep=out / "routers")
    growth = [(arm, *parse_arm(arm)) for arm in config.arms if "@" in arm]
    if growth:
        order = enrolment_order(pool, config.seed)
        bases: dict[str, RouterRoute] = {}
        for arm, kind, k in growth:
            if kind not in bases:
                built = router_route(kind, pool)
                assert isinstance(built, RouterRoute)
                bases[kind] = built
            routes[arm] = StoreOfK(bases[kind], order[:k], f"router '{kind}' over {k} agent(s)")
    for name in config.sets:
        tasks = set_tasks(name, config)
        if not tasks:
            log.warning("table 1: set '%s' has no task of envs %s; skipped", name, config.envs)
            continue
        if on_set is not None:
            on_set(name, len(tasks))
        sub = ea.ExecAccConfig(arms=config.arms, tasks=None, envs=config.envs, max_steps=config.max_steps,
                               max_new_tokens=config.max_new_tokens, time_limit_s=config.time_limit_s, seed=config.seed)
        ea.run(tasks, pool, llm, sub, out / name, progress=progress, routes=routes, retry_errors=retry_errors,
               scale=scale, models=models)
    return Table1.load(out)


@dataclass
class RowMatch:
    """Two run folders' rows side by side (:func:`match_rows`): the Ray run against the serial one."""

    #: (arm, set, task) rows both folders hold
    compared: int
    #: (arm, set, task, the fields that differ) for each compared row that differs
    differing: list[tuple[str, str, str, list[str]]]
    #: rows only one of the folders holds (arms or sets the other invocation did not run)
    unmatched: int

    @property
    def same(self) -> int:
        return self.compared - len(self.differing)

    def lines(self, label: str) -> list[str]:
        """The comparison as a paragraph and, when rows differ, a table of them."""
        head = (f"{self.same} of {self.compared} (arm, set, task) rows identical to {label}, timings and the "
                f"run folder's own path aside; {self.unmatched} row(s) in only one of the two folders.")
        if not self.differing:
            return [head]
        return [head, "", *table(["arm", "set", "task", "fields that differ"],
                                 [[a, s, t, ", ".join(f)] for a, s, t, f in self.differing])]


#: a row's fields that name where its folder is, not what happened
_PLACE_FIELDS = frozenset({"trajectory", "set"})


def match_rows(a: Table1, a_root: Path, b: Table1, b_root: Path) -> RowMatch:
    """Every (arm, set, task) row the two tables share, compared field by field without timings
    (:func:`~agentlab.run.episode.comparable_row`) and with each folder's path read as the same
    place: the check that a run on Ray workers is the serial run row for row (issue 42). Why not
    just the success column: a worker that got another reply would show in steps, tokens or the
    error even where both failed."""
    from agentlab.run.episode import comparable_row

    def keyed(t: Table1, root: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
        out = {}
        for arm, rows in t.rows.items():
            for r in rows:
                clean = {k: v for k, v in comparable_row(r).items() if k not in _PLACE_FIELDS}
                out[(arm, str(r.get("set")), str(r["id"]))] = json.loads(
                    json.dumps(clean, sort_keys=True, default=str).replace(str(root.resolve()), "<out>")
                    .replace(str(root), "<out>"))
        return out

    left, right = keyed(a, a_root), keyed(b, b_root)
    shared = sorted(set(left) & set(right))
    differing = [(*key, sorted(f for f in set(left[key]) | set(right[key]) if left[key].get(f) != right[key].get(f)))
                 for key in shared if left[key] != right[key]]
    return RowMatch(compared=len(shared), differing=differing, unmatched=len(set(left) ^ set(right)))


def record_heatmap(path: Path) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, int]], dict[str, Any]]:
    """The committed record ``benchmarks/table1.py`` writes (``table1_record.json``) as
    :func:`agentlab.viz.accuracy_heatmap` takes it -- ExecutionAcc and task counts per arm and
    domain, ``all`` last -- and its header (command, model, config): notebook 04 draws it
    without measuring anything."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cells, domains = data["cells"], [*data["domains"], "all"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"not a Table 1 record: {exc}", where=path) from None
    rates: dict[str, dict[str, float | None]] = {}
    counts: dict[str, dict[str, int]] = {}
    for arm, by in cells.items():
        rates[arm] = {d: (by[d][0] / by[d][1] if d in by and by[d][1] else None) for d in domains}
        counts[arm] = {d: int(by[d][1]) if d in by else 0 for d in domains}
    return rates, counts, {k: data.get(k) for k in ("command", "model", "config")}


def record_curves(path: Path, axis: str) -> dict[str, tuple[list[float], list[float]]]:
    """Figures 3 and 5 on the execution axis from the committed record: per router, the sizes and
    the overall ExecutionAcc (0..1) of its sized arms -- ``axis="store"``: the ``<router>@<k>``
    arms (agents enrolled), ``axis="demos"``: the ``<router>:<n>`` arms (demonstrations per
    agent) -- as :func:`agentlab.viz.routing.scaling_curves` takes them; empty when the record
    has no such arm."""
    if axis not in ("store", "demos"):
        raise ConfigError(f"axis must be store or demos, not {axis!r}")
    rates, _, _ = record_heatmap(path)
    points: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for arm, by in rates.items():
        if axis == "store" and "@" in arm:
            base, size = parse_arm(arm)
        elif axis == "demos" and ":" in arm:
            base, size = demos_of(arm)
        else:
            continue
        if size is not None and by.get("all") is not None:
            points[base].append((size, float(by["all"] or 0.0)))
    return {base: ([float(x) for x, _ in sorted(v)], [y for _, y in sorted(v)]) for base, v in points.items()}


def arms_of(names: Sequence[str]) -> list[str]:
    """``names`` checked (:func:`parse_arm`; ``all``: every arm of :data:`ARMS`; ``default``: the
    committed table's, :data:`DEFAULT_ARMS`), in the table's order: the plain arms, then the
    fitted-size arms (``<router>:<n>``) and the growth arms (``<router>@<k>``), each by router and size."""
    if list(names) == ["all"]:
        return list(ARMS)
    if list(names) == ["default"]:
        names = DEFAULT_ARMS
    parsed = {n: parse_arm(n) for n in names}
    plain = [a for a in ARMS if a in names]
    sized = sorted((n for n in names if ":" in n),
                   key=lambda n: (list(ROUTERS).index(demos_of(n)[0]), demos_of(n)[1] or 0))
    grown = sorted((n for n, (_, k) in parsed.items() if k is not None),
                   key=lambda n: (list(ROUTERS).index(parsed[n][0]), parsed[n][1]))
    return plain + sized + grown


__all__ = ["ARMS", "DEFAULT_ARMS", "GENERALIST_ARMS", "TASK_SETS", "RowMatch", "match_rows", "StoreOfK", "demos_of", "enrolment_order", "fitted_route", "parse_arm", "record_curves", "Table1", "Table1Config", "arms_of", "generalist_route", "record_heatmap", "run",
           "set_tasks"]
