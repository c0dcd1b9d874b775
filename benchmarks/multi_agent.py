"""Table 2 analog: multi-agent tasks executed end to end -- AgentMatch, SubtaskAcc, ExecutionAcc, cost.

Methods (``--methods``, all by default), each through the one exec path (:func:`agentlab.run.execute`, the same
``ExecOptions`` an ``agentlab exec`` run would build), one run folder per method under ``--out``:

- ``gold``: the task's gold plan (``--router gt``);
- ``agenttoken``: AgentToken ranks, the manager writes the plan over the top-K documents,
  decoding constrained to the plan grammar (``--mode manager``);
- ``agenttoken-unconstrained``: the same prompt without the grammar (the ablation);
- ``icl``: the ICL manager (all documents; constrained);
- ``clauses``: the clause baseline (split the instruction, AgentToken routes each part);
- ``cola``: ``ExecOptions(team="cola")`` when the COLA team is installed, else listed as skipped;
- ``single``: one generalist CLI agent (CoderAgent) on the whole task.

Tasks: ``--tasks`` (default ``data/tasks/multi-*.json``); when none exist, the ``pc-*.json``
desktop tasks (gold = their two apps; they have no gold subtasks, so no SubtaskAcc there).
``--plan-only`` measures the managers' plans without executing them, on ``--plan-items``
(default ``data/benchmarks/two_agent_plans.jsonl``: two-agent instructions with gold plans).
The SubtaskAcc BERTScore threshold is recalibrated on the gold plans (shown in the output).

    python benchmarks/multi_agent.py [--tasks 'data/tasks/multi-*.json'] [--limit N] [--methods gold,clauses]
                                     [--plan-only] [--llm-config cfg.yaml] [--out runs/multi_agent] [--results PATH]
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

from _common import RESULTS, ROOT, command_line, log, summary_line, usage_error, write_result

PLAN_ITEMS = ROOT / "data" / "benchmarks" / "two_agent_plans.jsonl"


def main(argv: list[str] | None = None) -> int:
    from agentlab.experiments.multi_agent import METHODS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="plan-only on 2 plan items, gold + clauses + agenttoken")
    ap.add_argument("--tasks", default="data/tasks/multi-*.json", help="glob of task files (falls back to data/tasks/pc-*.json)")
    ap.add_argument("--limit", type=int, default=None, help="at most N tasks (or plan items)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--plan-only", action="store_true", help="measure plans only (no execution), on --plan-items")
    ap.add_argument("--plan-items", type=Path, default=PLAN_ITEMS)
    ap.add_argument("--llm-config", type=Path, default=None, help="YAML LLM config (default: the embedded SmolLM2)")
    ap.add_argument("--k", type=int, default=5, help="manager: top-K candidate agents")
    ap.add_argument("--max-plan-steps", type=int, default=3)
    ap.add_argument("--min-plan-steps", type=int, default=1, help="constrained managers: at least this many steps")
    ap.add_argument("--copy-task-words", action="store_true", help="constrained managers: subtasks in the task's words")
    ap.add_argument("--max-subtask-tokens", type=int, default=24, help="constrained managers: tokens per subtask")
    ap.add_argument("--manager-max-new-tokens", type=int, default=96, help="manager answer budget")
    ap.add_argument("--max-steps", type=int, default=5, help="per plan step (agent replies)")
    ap.add_argument("--max-new-tokens", type=int, default=384, help="cap on every agent reply")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "multi_agent", help="run folders, one per method (replaced unless --resume)")
    ap.add_argument("--resume", action="store_true", help="keep each method's folder and run only its unfinished tasks")
    ap.add_argument("--results", type=Path, default=RESULTS / "multi_agent.md")
    args = ap.parse_args(argv)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if args.quick:
        args.plan_only, args.limit = True, args.limit or 2
        methods = [m for m in methods if m in ("gold", "clauses", "agenttoken")] if args.methods == ",".join(METHODS) else methods
    for m in methods:
        if m not in METHODS:
            return usage_error(f"unknown method '{m}' ({', '.join(METHODS)})")

    from agentlab.run.episode import ExecOptions
    from agentlab.tasks.spec import load_task
    from agentlab.experiments.multi_agent import items_from_tasks, load_plan_items, measure
    from agentlab.llm import LLMConfig, load_backend
    from agentlab.pool import AgentPool
    from agentlab.teams.planning import ManagerOptions

    pool = AgentPool.from_dir()
    llm = load_backend(LLMConfig.from_yaml(args.llm_config) if args.llm_config else LLMConfig.from_env())
    notes: list[str] = []
    if args.plan_only:
        items = load_plan_items(args.plan_items, pool)
        shown = args.plan_items.relative_to(ROOT) if args.plan_items.is_relative_to(ROOT) else args.plan_items
        source = f"{len(items)} plan items of `{shown}`"
    else:
        files = sorted(glob.glob(str(ROOT / args.tasks) if not Path(args.tasks).is_absolute() else args.tasks))
        if not files:
            notes.append(f"No task matches `{args.tasks}` here; fell back to the pc-*.json desktop tasks (gold = their apps, "
                         "no gold subtasks).")
            log(notes[-1])
            files = sorted(glob.glob(str(ROOT / "data" / "tasks" / "pc-*.json")))
        items = items_from_tasks([load_task(f) for f in files], pool)
        source = f"{len(items)} task files (`{args.tasks}`)"
    calibration_items = [it for it in items if it.gold_plan]  # every gold plan, --limit or not
    if args.limit:
        items = items[: args.limit]
    log(f"{source}; using {len(items)}")
    t0 = time.perf_counter()
    table = measure(methods, items, pool=pool, llm=llm, out=args.out, plan_only=args.plan_only,
                    manager=ManagerOptions(k=args.k, max_steps=args.max_plan_steps, min_steps=args.min_plan_steps,
                                           copy_task_words=args.copy_task_words,
                                           max_subtask_tokens=args.max_subtask_tokens, max_new_tokens=args.manager_max_new_tokens),
                    exec_options=ExecOptions(max_steps=args.max_steps, time_limit_s=args.time_limit,
                                             max_new_tokens=args.max_new_tokens),
                    calibration_items=calibration_items, resume=args.resume)
    log(f"measured in {time.perf_counter() - t0:.0f} s")
    rows, threshold = table.rows, table.threshold
    body = [f"{source}; backbone `{getattr(llm, 'model_id', '?')}`; manager top-K={args.k}, {args.min_plan_steps}..{args.max_plan_steps} "
            f"plan steps, {args.max_subtask_tokens} tokens per constrained subtask"
            f"{' (task words only)' if args.copy_task_words else ''}, {args.manager_max_new_tokens}-token answers; " + ("plans only (not executed)." if args.plan_only else
                               f"executed: {args.max_steps} replies per plan step, replies capped at {args.max_new_tokens} tokens."),
            *([""] + notes if notes else [])]
    if table.calibration is not None:
        body += ["", "SubtaskAcc threshold, recalibrated for our scorer (MiniLM BERTScore F1):", "", *table.calibration.describe()]
    body += ["", *table.markdown(), "",
             "AgentMatch: the set of domains of the plan's agents equals the gold set (a no-plan row is a miss). "
             "SubtaskAcc: share of gold steps with a plan step of the same domain whose subtask clears the threshold. "
             "Costs are per task and include the manager's own calls only where the row records them (exec rows: the agents')."]
    for r in table.results:
        if r.example:
            body += ["", f"Example {r.method} plan:", "", "```", r.example.strip()[:500], "```"]
    values: dict[str, float | None] = {}
    for row in rows:
        if not row.get("skipped"):
            values[f"{row['method']}_agentmatch"] = row["agent_match"]
            if row.get("execution_acc") is not None:
                values[f"{row['method']}_execacc"] = row["execution_acc"]
    values["subtask_threshold"] = threshold
    line = summary_line(values)
    write_result(args.results, "Multi-agent tasks, Table 2 analog (AgentMatch, SubtaskAcc, ExecutionAcc, cost)", body, line,
                 command=command_line(__file__, argv))
    print("\n".join(body))
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
