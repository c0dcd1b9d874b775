"""Benchmark: the code specialists (typed toolkits) on the held-out tasks against the generalist.

Runs each arm as an ``agentlab exec`` run folder under ``--out`` (resumable: run it again to
continue), ground truth on the whole held-out set and the slower arms on a per-domain sample, with
the embedded model unless AGENTLAB_LLM_* says otherwise; then reads the folders back into one
table (``agentlab.experiments.heldout``) and writes ``benchmarks/results/heldout.md``.
``--report-only`` reads what is there without running anything.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from _common import RESULTS, ROOT, command_line, log, summary_line, usage_error, write_result


def main(argv: list[str] | None = None) -> int:
    from agentlab.experiments import heldout

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task-dir", type=Path, default=ROOT / "data" / "tasks_heldout")
    ap.add_argument("--out", type=Path, default=Path("runs/heldout"))
    ap.add_argument("--arms", default="gt,generalist,unconstrained,agenttoken")
    ap.add_argument("--per-domain", type=int, default=2, help="sample size per domain for the slower arms")
    ap.add_argument("--max-steps", type=int, default=3)
    ap.add_argument("--sample-only", action="store_true",
                    help="every arm on the per-domain sample, even the whole-set ones (a quick look)")
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--quick", action="store_true", help="one task per domain, gt and the generalist only")
    ap.add_argument("--workspace-single", action="store_true",
                    help="run the single-domain workspace tasks of --task-dir (for data/tasks)")
    ap.add_argument("--report-only", action="store_true", help="summarise the run folders, run nothing")
    ap.add_argument("--title", default="", help="the results section's title (default: from the task set)")
    ap.add_argument("--note", default="", help="a sentence added to the results (where an arm's rows came from)")
    ap.add_argument("--results", type=Path, default=RESULTS / "heldout.md")
    ap.add_argument("--record", type=Path, default=None,
                    help="also write the arms' rows (trimmed) to this JSON file (notebook 04 reads benchmarks/results/heldout_record.json)")
    args = ap.parse_args(argv)
    arms = ["gt", "generalist"] if args.quick else [a for a in args.arms.split(",") if a]
    unknown = [a for a in arms if a not in heldout.ARMS]
    if unknown:
        return usage_error(f"unknown arm(s) {', '.join(unknown)}; known: {', '.join(heldout.ARMS)}")
    per_domain = 1 if args.quick else args.per_domain
    if args.workspace_single:  # e.g. data/tasks: its single-domain workspace tasks only
        args.task_dir = heldout.workspace_single_folder(args.task_dir, args.out)
    sample = heldout.sample_folder(args.task_dir, args.out, per_domain)
    if not args.report_only:
        for name in arms:
            arm = heldout.ARMS[name]
            tasks = args.task_dir if arm.whole_set and not (args.quick or args.sample_only) else sample
            resume = (args.out / name / "results.jsonl").is_file()
            cmd = [sys.executable, "-m", "agentlab.cli", *heldout.exec_argv(
                arm, tasks, args.out, max_steps=args.max_steps, max_new_tokens=args.max_new_tokens, resume=resume)]
            log("running: agentlab " + " ".join(cmd[3:]))
            done = subprocess.run(cmd, cwd=ROOT, check=False)
            if done.returncode not in (0, 1):  # 1: the run finished with failed tasks
                return usage_error(f"arm {name}: agentlab exec exited with {done.returncode}")
    results = heldout.read_arms(args.out, arms)
    body = [
        f"Tasks: `{args.task_dir.relative_to(ROOT) if args.task_dir.is_relative_to(ROOT) else args.task_dir}`"
        f"{' (its single-domain workspace tasks)' if args.workspace_single else ''}"
        f"{' (written blind before the changes of issue #38, never used to tune anything)' if 'heldout_v2' in args.task_dir.name else ' (written before the toolkits, never used to tune them)' if 'heldout' in args.task_dir.name else ''}; slower arms on the first {per_domain} task(s) of each domain. "
        f"Max {args.max_steps} steps, replies capped at {args.max_new_tokens} new tokens, greedy. "
        "ExecutionAcc % (tasks); harness errors count as failures. Arms: gt = each task's specialist "
        "(its toolkit, grammar-constrained decoding, its trained adapter when data/adapters has one); "
        "gt-noadapter = the same with -O adapter=none; agenttoken = the shipped router picks the agent; "
        "generalist = Friday writes programs for every task; unconstrained = gt with -O constrained=false; "
        "hybrid = the store's default routing."
        + (f" {args.note}" if args.note else ""),
        "", *heldout.markdown(results), "",
        "Per arm (single-/multi-operation from the set's ops.csv; routed to gold = the row's first agent is the "
        "task's ground-truth agent; medians per task):", "",
        *heldout.details(results, gold=heldout.gold_agents(args.task_dir), ops=heldout.ops_counts(args.task_dir))]
    by_arm = {r.arm: r.by_domain().get("all") for r in results}
    summary = summary_line({f"{arm}_acc": (v[0] if v else None) for arm, v in by_arm.items()}
                           | {f"{r.arm}_median_s": r.median_s for r in results})
    title = args.title or ("Specialists on the single-domain workspace tasks of data/tasks" if args.workspace_single
                           else "Specialists on the held-out tasks (toolkits vs the generalist)")
    write_result(args.results, title, body, summary,
                 command=command_line(__file__, argv))
    if args.record is not None:
        heldout.write_record(results, args.record, command=command_line(__file__, argv), note=args.note)
    log("\n".join(body))
    log(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
