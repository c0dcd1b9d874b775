"""Benchmark: AgentStore's Table 1 -- every task set, every router, the generalists (issue #42).

Runs the task sets of ``agentlab.experiments.table1.TASK_SETS`` under each arm (ground truth,
every router under the store's policy, the single-generalist arms) with the embedded model
unless ``--llm-config`` says otherwise. Every (task, agent) episode runs once and is shared by the
arms that chose it; the run folder (``--out``) is resumable: run the same command again to go on
where it stopped, or ``--report-only`` to rebuild the table from what is there. Writes
``benchmarks/results/table1.md`` (the paper's layout: methods x domains, ExecutionAcc with 95 %
Wilson intervals; routing accuracy, the gap to ground truth split into routing and execution
errors, and the cost per task) and ``benchmarks/results/table1_record.json`` (the cells, for
notebook 04).

    python benchmarks/table1.py --out runs/table1 [--sets tasks,dev1,...] [--arms gt,agenttoken,...]
        [--per-set N] [--envs workspace,desktop,phone] [--max-steps 4] [--max-new-tokens 256]
        [--llm-config FILE] [--workers N | --ray-address ADDR] [--retry-errors] [--report-only] [--quick]
        [--same-as RUN_FOLDER]

``--same-as`` compares every (arm, set, task) row with another run folder's, timings aside: a run
on Ray workers (``--workers 2``, or ``--ray-address auto`` on an existing cluster) against the
serial one, row for row.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from _common import RESULTS, command_line, log, run_main, summary_line, usage_error, write_result


def main(argv: list[str] | None = None) -> int:
    from agentlab.errors import AgentlabError
    from agentlab.experiments import table1 as t1
    from agentlab.fileio import atomic_write_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/table1"), help="resumable run folder")
    ap.add_argument("--sets", default=",".join(t1.TASK_SETS), help=f"task sets ({', '.join(t1.TASK_SETS)})")
    ap.add_argument("--arms", default="default", help=f"arms ({', '.join(t1.ARMS)}), all, or default (the committed "
                    f"table's: {', '.join(t1.DEFAULT_ARMS)}); <router>@<k>: a store of k "
                    "agents (Figure 3); <router>:<n>: the router fitted on n demonstrations per agent (Figure 5)")
    ap.add_argument("--per-set", type=int, default=None, help="at most this many tasks per set, round-robin over domains")
    ap.add_argument("--envs", default="workspace,desktop,phone")
    ap.add_argument("--max-steps", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--llm-config", type=Path, default=None, help="LLM YAML, optionally with roles: (default: the embedded model)")
    ap.add_argument("--workers", type=int, default=1, help="Ray workers on this machine (rows as the serial run's)")
    ap.add_argument("--ray-address", default=None, help="an existing Ray cluster (ray://host:10001 or auto)")
    ap.add_argument("--retry-errors", action="store_true", help="run again the episodes that ended in a harness error")
    ap.add_argument("--report-only", action="store_true", help="rebuild the table from --out, run nothing")
    ap.add_argument("--results", type=Path, default=RESULTS / "table1.md")
    ap.add_argument("--record", type=Path, default=RESULTS / "table1_record.json")
    ap.add_argument("--note", default="", help="a sentence added to the results")
    ap.add_argument("--title", default="Table 1: the store, every router, the generalists (ExecutionAcc per domain)",
                    help="the results file's heading (a study in Table 1's format names itself)")
    ap.add_argument("--same-as", type=Path, default=None,
                    help="another run folder: report which (arm, set, task) rows differ from its (a Ray run against the serial one)")
    ap.add_argument("--quick", action="store_true",
                    help="a look, not a result: set dev2, 2 tasks, arms gt and generalist-s2, workspace, 1 step")
    args = ap.parse_args(argv)
    if args.quick:
        args.sets, args.per_set, args.arms, args.envs, args.max_steps = "dev2", 2, "gt,generalist-s2", "workspace", 1
    command = command_line(__file__, argv)
    try:
        config = t1.Table1Config(sets=[s for s in args.sets.split(",") if s], arms=t1.arms_of(args.arms.split(",")),
                                 per_set=args.per_set, envs=[e for e in args.envs.split(",") if e],
                                 max_steps=args.max_steps, max_new_tokens=args.max_new_tokens)
        config.check()
        t0 = time.perf_counter()
        machine = (f"Machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the start, "
                   f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}.")
        model = "(report only)"
        if not args.report_only:
            from agentlab.agents.roles import known_roles
            from agentlab.llm import LLMConfig
            from agentlab.llm.roles import ModelsFile, load_models_file
            from agentlab.pool import AgentPool

            models = load_models_file(args.llm_config, known_roles()) if args.llm_config else ModelsFile(LLMConfig.from_env())
            loaded = models.load()
            model = loaded.llm.model_id
            from agentlab.parallel import Scale

            scale = Scale(workers=args.workers, address=args.ray_address)
            res = t1.run(config, AgentPool.from_dir(None), loaded, args.out, retry_errors=args.retry_errors,
                         on_set=lambda name, n: log(f"table 1: set {name}, {n} task(s), arms {', '.join(config.arms)}"),
                         scale=scale, models=models)
        else:
            res = t1.Table1.load(args.out)
        match = t1.match_rows(res, args.out, t1.Table1.load(args.same_as), args.same_as) if args.same_as else None
    except AgentlabError as exc:
        return usage_error(str(exc))
    took = time.perf_counter() - t0
    # the models the rows were produced with (a report-only rebuild names them too)
    model = ", ".join(sorted({str(r.get("model_id")) for rows in res.rows.values() for r in rows if r.get("model_id")})) or model
    sets = sorted({r["set"] for rows in res.rows.values() for r in rows})
    settings = ("Rebuilt from the run folder without running anything (--report-only): the settings are those of "
                "the invocations that filled it (the note says which). " if args.report_only else
                f"{f'At most {config.per_set} task(s) per set, round-robin over domains; ' if config.per_set else ''}"
                f"envs {', '.join(config.envs)}; max {config.max_steps} steps, replies capped at "
                f"{config.max_new_tokens} new tokens, greedy, seed {config.seed}. ")
    body = [
        f"Model: **{model}**. Sets: {', '.join(sets)}; single-agent tasks only (gold plans are Table 2's). {settings}"
        "Routers run under the store's policy (device first, specialists before generalists; agents that cannot "
        "be built here are left out). generalist-s2 / generalist-pc: one agent per environment does every task "
        "(workspace: Friday; desktop: Agent S2 / PC-Agent; phone: AppAgent). An episode is shared by every arm that "
        "chose the same agent for the task. Harness errors count as failures. "
        f"{took:.0f} s in this invocation (the run folder is resumable). {machine}"
        + (f" **Unfinished set(s): {', '.join(res.partial)}** -- read from the episodes that finished (an arm "
           "counts the tasks whose chosen episode ran, so arms may differ in n); run the command again to finish."
           if res.partial else "")
        + (f" {args.note}" if args.note else ""),
        "",
        "### ExecutionAcc % per domain [95 % Wilson interval], tasks per cell",
        "",
        *res.accuracy_lines(),
        "",
        "### Per task set: solved / tasks",
        "",
        *res.set_lines(),
        "",
        "### Per arm: ratio to ground truth, routing, the gap split, cost per task",
        "",
        "*lost to routing*: tasks ground truth solved that the arm sent to another agent, which failed; *won by "
        "routing*: tasks the arm sent elsewhere and solved where ground truth failed. The rest of every arm's "
        "failures are execution errors: the gold agent's own, shared by every arm that routed right.",
        "",
        *res.summary_lines(),
        "",
        *(["### Figures 3 and 5 on the execution axis: the store's size and the demonstrations per agent", "",
           *res.size_lines(), ""] if res.size_lines() else []),
        *([f"### Row for row against `{args.same_as}`", "", *match.lines(f"`{args.same_as}`"), ""]
          if match is not None and args.same_as is not None else []),
        f"Run folder: `{args.out}` (rows of every arm: `<set>/arms/<arm>/results.jsonl`; episodes: `<set>/by_agent/`).",
    ]
    cells = res.cells()
    values: dict[str, float | int | str | None] = {"tasks": max((c["all"][1] for c in cells.values()), default=0)}
    for arm, by in cells.items():
        k, n = by["all"]
        values[f"acc_{arm}"] = k / n if n else None
    if match is not None:
        values.update(rows_compared=match.compared, rows_same=match.same)
    summary = summary_line(values)
    write_result(args.results, args.title, body, summary, command=command)
    # every row's outcome, so a later session can compare task by task without the run folder
    # (run folders are not committed and do not outlive a checkout)
    outcomes = {arm: sorted([r.get("set"), r.get("id"), (r.get("agents") or [None])[0], bool(r.get("success"))]
                            for r in arm_rows) for arm, arm_rows in res.rows.items()}
    record = {"command": command, "model": model, "config": config.model_dump(mode="json"),
              "cells": {arm: {d: list(kn) for d, kn in by.items()} for arm, by in cells.items()},
              "domains": res.domains(), "outcomes": outcomes}
    atomic_write_json(args.record, record)
    log("\n".join(body))
    log(summary)
    return 0


if __name__ == "__main__":
    run_main(main)
