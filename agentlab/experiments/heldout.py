"""Specialists on the held-out task set: do the toolkits carry tasks out, and does the store
(specialists, routed) beat one generalist?

The held-out set (``data/tasks_heldout/``) was written before the toolkits and never used to tune
them. Each *arm* is one ``agentlab exec`` run folder: ground truth (each task's specialist), a
trained router, the generalist doing every task by writing programs, and the unconstrained
ablation (the specialists asked plainly, no grammar). This module picks the tasks, says how each
arm is run (the exact command line, so a run folder is resumable and the results file can cite
it), and reads the run folders back into one table per domain.
"""

from __future__ import annotations

import shutil
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.experiments.markdown import pct, table
from agentlab.fileio import read_jsonl
from agentlab.tasks.spec import load_tasks


@dataclass(frozen=True)
class Arm:
    """One way of running the held-out tasks: its name, ``agentlab exec`` flags, and whether it
    runs on the whole set or on the per-domain sample (the slow arms)."""

    name: str
    flags: tuple[str, ...]
    whole_set: bool = False


#: the arms, by name (``--arms``)
ARMS: dict[str, Arm] = {
    "gt": Arm("gt", ("--router", "gt"), whole_set=True),
    #: ground truth without the specialists' trained adapters (``data/adapters``): decoding alone
    "gt-noadapter": Arm("gt-noadapter", ("--router", "gt", "-O", "adapter=none"), whole_set=True),
    #: ground truth without the specialists' tool priors (``data/tool_priors``): the model alone picks the tool
    "gt-noprior": Arm("gt-noprior", ("--router", "gt", "-O", "tool_prior=none"), whole_set=True),
    "agenttoken": Arm("agenttoken", ("--router", "agenttoken")),
    "embedding": Arm("embedding", ("--router", "embedding")),
    #: the store's default routing (hybrid) on every task: the arm issue #38's goals are about
    "hybrid": Arm("hybrid", ("--router", "hybrid"), whole_set=True),
    "generalist": Arm("generalist", ("--agent", "Friday")),
    #: the generalist on every task (about a minute per task on 2 cores: an hour for the held-out set)
    "generalist-all": Arm("generalist-all", ("--agent", "Friday"), whole_set=True),
    "unconstrained": Arm("unconstrained", ("--router", "gt", "-O", "constrained=false")),
}


def sample_folder(task_dir: Path, out: Path, per_domain: int) -> Path:
    """``out/sample``: the first ``per_domain`` tasks of each domain (ids sorted), copied byte
    for byte, so the slow arms run on the same few tasks every time."""
    tasks = load_tasks(task_dir)  # an empty or missing folder is load_tasks' one-line DataError
    by_domain: dict[str, list[str]] = defaultdict(list)
    for t in sorted(tasks, key=lambda t: t.id):
        by_domain[t.domain].append(t.id)
    folder = out / "sample"
    folder.mkdir(parents=True, exist_ok=True)
    for ids in by_domain.values():
        for task_id in ids[:per_domain]:
            src = task_dir / f"{task_id}.json"
            dst = folder / src.name
            if not dst.exists() or dst.read_bytes() != src.read_bytes():
                shutil.copyfile(src, dst)
    return folder


def workspace_single_folder(task_dir: Path, out: Path) -> Path:
    """``out/tasks``: the single-domain workspace tasks of ``task_dir`` (no plan, no desktop or
    phone task), copied byte for byte: ``data/tasks``' counterpart of the held-out set."""
    folder = out / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    for t in load_tasks(task_dir):
        if t.env == "workspace" and not t.plan and t.domain != "multi_apps":
            src = task_dir / f"{t.id}.json"
            dst = folder / src.name
            if not dst.exists() or dst.read_bytes() != src.read_bytes():
                shutil.copyfile(src, dst)
    return folder


def exec_argv(arm: Arm, tasks: Path, out: Path, *, max_steps: int, max_new_tokens: int, resume: bool) -> list[str]:
    """The ``agentlab exec`` arguments of one arm (resumable: the same flags give the same manifest)."""
    argv = ["exec", "--tasks", str(tasks), "--out", str(out / arm.name), *arm.flags,
            "--max-steps", str(max_steps), "--max-new-tokens", str(max_new_tokens)]
    return [*argv, "--resume"] if resume else argv


@dataclass(frozen=True)
class ArmResult:
    """One arm's rows, summarised per domain (and ``all``)."""

    arm: str
    rows: list[dict[str, Any]]

    def by_domain(self) -> dict[str, tuple[float, int]]:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in self.rows:
            groups[str(r.get("domain"))].append(r)
        out = {d: (sum(bool(r.get("success")) for r in rs) / len(rs), len(rs)) for d, rs in sorted(groups.items())}
        if self.rows:
            out["all"] = (sum(bool(r.get("success")) for r in self.rows) / len(self.rows), len(self.rows))
        return out

    @property
    def median_s(self) -> float | None:
        return statistics.median(float(r.get("seconds") or 0) for r in self.rows) if self.rows else None

    @property
    def harness_errors(self) -> int:
        return sum(1 for r in self.rows if r.get("error"))

    def on(self, ids: set[str]) -> ArmResult:
        """The same arm restricted to the tasks ``ids`` (to compare with an arm run on the sample)."""
        return ArmResult(self.arm, [r for r in self.rows if r.get("id") in ids])


def read_arms(out: Path, arms: Sequence[str]) -> list[ArmResult]:
    """Each arm's ``results.jsonl`` under ``out`` (an arm not run yet has no rows)."""
    found = []
    for name in arms:
        path = out / name / "results.jsonl"
        found.append(ArmResult(name, read_jsonl(path) if path.is_file() else []))
    return found


def markdown(results: Sequence[ArmResult]) -> list[str]:
    """Per domain, each arm's ExecutionAcc (%, n) on the whole set where it ran there, and every
    arm on the sample's tasks (the fair comparison); then time and harness errors per arm."""
    sample_ids = {str(r["id"]) for res in results if res.rows and not ARMS[res.arm].whole_set for r in res.rows}
    domains = sorted({d for res in results for d in res.by_domain()} - {"all"}) + ["all"]
    lines: list[str] = []
    whole = [res for res in results if ARMS[res.arm].whole_set and res.rows]
    if whole:
        lines += ["Whole held-out set:", ""]
        lines += table(["domain", *(res.arm for res in whole)],
                       [[d, *(_cell(res.by_domain().get(d)) for res in whole)] for d in domains])
        lines.append("")
    if sample_ids:
        lines += [f"The per-domain sample ({len(sample_ids)} tasks), every arm on the same tasks:", ""]
        on_sample = [res.on(sample_ids) for res in results if res.rows]
        lines += table(["domain", *(res.arm for res in on_sample)],
                       [[d, *(_cell(res.by_domain().get(d)) for res in on_sample)] for d in domains])
        lines.append("")
    lines += table(["arm", "episodes", "median s per task", "harness errors"],
                   [[res.arm, len(res.rows), "-" if res.median_s is None else f"{res.median_s:.1f}", res.harness_errors]
                    for res in results])
    return lines


def ops_counts(task_dir: Path) -> dict[str, int]:
    """Operations each task needs, from the set's ``ops.csv`` (``id,domain,ops``; written with the
    tasks, before any run), or ``{}`` when the set has none."""
    import csv

    path = task_dir / "ops.csv"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as fh:
        return {row["id"]: int(row["ops"]) for row in csv.DictReader(fh)}


def gold_agents(task_dir: Path) -> dict[str, str]:
    """Each task's ground-truth agent (``gt_agent`` over the shipped pool): what routing accuracy
    compares a routed row's first agent with."""
    from agentlab.metaagent.ground_truth import gt_agent
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    return {t.id: gt_agent(t, pool) for t in load_tasks(task_dir)}


def details(results: Sequence[ArmResult], *, gold: dict[str, str], ops: dict[str, int]) -> list[str]:
    """Per arm, the figures issue #38 asks beside ExecutionAcc: its Wilson 95 % interval, routing
    accuracy (the row's first agent is the task's gold agent), tasks routed to an agent that cannot
    act on their env (``wrong_env``), cost per task (model calls, tokens in + out, seconds; medians)
    and the share of single- and multi-operation tasks solved."""
    from agentlab.eval.variance import wilson_interval

    out: list[list[str]] = []
    for res in results:
        rows = res.rows
        if not rows:
            continue
        wins = sum(bool(r.get("success")) for r in rows)
        low, high = wilson_interval(wins, len(rows))
        routed = [r for r in rows if r.get("id") in gold]
        to_gold = sum(1 for r in routed if (r.get("agents") or [None])[0] == gold[str(r["id"])])
        wrong = sum(1 for r in rows if r.get("status") == "wrong_env")

        def solved(pred: Callable[[int], bool]) -> str:
            part = [r for r in rows if str(r.get("id")) in ops and pred(ops[str(r["id"])])]
            return "-" if not part else f"{sum(bool(r.get('success')) for r in part)}/{len(part)}"

        def med(key: Callable[[dict[str, Any]], float]) -> str:
            return f"{statistics.median(key(r) for r in rows):.1f}"

        out.append([
            res.arm, str(len(rows)), f"{pct(wins / len(rows))} [{pct(low)}, {pct(high)}]",
            "-" if not routed else pct(to_gold / len(routed)), str(wrong),
            solved(lambda n: n <= 1), solved(lambda n: n >= 2),
            med(lambda r: float(r.get("llm_calls") or 0)),
            med(lambda r: float((r.get("tokens_in") or 0) + (r.get("tokens_out") or 0))),
            med(lambda r: float(r.get("seconds") or 0))])
    return table(["arm", "tasks", "ExecutionAcc % [95 % CI]", "routed to gold %", "wrong env",
                  "single-op solved", "multi-op solved", "median calls", "median tokens", "median s"], out)


def _cell(value: tuple[float, int] | None) -> str:
    return "-" if value is None else f"{pct(value[0])} ({value[1]})"


#: the fields of a row a record keeps (what the tables and the notebook read; no trajectory)
RECORD_FIELDS = ("id", "domain", "agents", "success", "status", "steps", "llm_calls", "tokens_in", "tokens_out",
                 "seconds", "error")


def write_record(results: Sequence[ArmResult], path: Path, *, command: str, note: str = "") -> None:
    """The arms' rows, trimmed to :data:`RECORD_FIELDS`, as one JSON file committed beside the
    results (notebook 04 reads it, so a fresh clone shows the measured table without running it)."""
    from agentlab.fileio import atomic_write_json

    atomic_write_json(path, {"command": command, "note": note, "arms": {
        res.arm: [{k: r.get(k) for k in RECORD_FIELDS} for r in res.rows] for res in results if res.rows}})


def load_record(path: Path) -> tuple[list[ArmResult], dict[str, Any]]:
    """A record written by :func:`write_record`: its arms and its header (command, note)."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    return [ArmResult(arm, rows) for arm, rows in data["arms"].items()], {k: data.get(k) for k in ("command", "note")}


def heatmap(results: Sequence[ArmResult]) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, int]]]:
    """ExecutionAcc and task counts per arm and domain (``all`` last), as ``accuracy_heatmap`` takes them."""
    rates: dict[str, dict[str, float | None]] = {res.arm: {d: v[0] for d, v in res.by_domain().items()}
                                                 for res in results if res.rows}
    counts = {res.arm: {d: v[1] for d, v in res.by_domain().items()} for res in results if res.rows}
    return rates, counts
