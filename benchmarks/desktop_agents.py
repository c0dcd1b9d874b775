"""Benchmark: Agent S2 and PC-Agent in the store (issue #14) -- their desktop table and their enrolment.

Two parts (``--part table|enrolment|all``, default all):

**table** -- on the desktop tasks of the execution suite (the multi-application ``pc-*`` tasks
first, then the single-application ones, round-robin over domains), with a REAL model (the
embedded SmolLM2-135M by default, any OpenAI-compatible server with ``--llm-config``):
ExecutionAcc and subtask success for Agent S2, PC-Agent, the desktop GUI runner of the
execution issue (AppAgent's loop) and the routed store (AgentToken picks the agent), plus
the papers' ablations as rows of the same table (S2 without proactive replanning and without
each grounding expert; PC-Agent without reflection and without the manager); model calls and
tokens per task. See :mod:`agentlab.experiments.desktop_arch`. The run folder (``--out``) is
resumable.

**enrolment** -- routing before and after AgentS2 and PCAgent join the store: the AgentToken
checkpoint trained without them (``--base-tokens``) routes the single-application benchmark
tasks and the ``pc-*`` tasks; then each new agent's token is trained alone
(:meth:`AgentTokenRouter.add_agent`) and the same tasks are routed again. See
:mod:`agentlab.experiments.enrolment`.

    python benchmarks/desktop_agents.py [--part table|enrolment|all] [--quick] [--tasks N]
        [--llm-config FILE] [--max-steps N] [--max-new-tokens N] [--variants "Agent S2,PC-Agent"]
        [--base-tokens DIR] [--out DIR] [--results FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from _common import RESULTS, command_line, log, summary_line, usage_error, write_result

from agentlab.errors import ConfigError
from agentlab.pool import AgentPool
from agentlab.tasks.spec import load_tasks


def table(args: argparse.Namespace) -> tuple[list[str], dict[str, float | int | str | None]]:
    from agentlab.experiments import desktop_arch as da
    from agentlab.experiments.execution_acc import frame_markdown
    from agentlab.agents.roles import known_roles
    from agentlab.llm import LLMConfig
    from agentlab.llm.roles import ModelsFile, load_models_file

    variants = da.default_variants() + (da.grounding_variants() if args.grounding_ablation else [])
    if args.variants:
        wanted = [v.strip() for v in args.variants.split(",") if v.strip()]
        unknown = sorted(set(wanted) - {v.name for v in variants})
        if unknown:
            raise ConfigError(f"unknown variant(s) {unknown}; known: {[v.name for v in variants]}")
        variants = [v for v in variants if v.name in wanted]
    if args.max_subtasks is not None:  # the hierarchical runners' plan budget (S2: subgoals, PC-Agent: subtasks)
        budget = {"AgentS2": "max_subgoals", "PCAgent": "max_subtasks"}
        variants = [v.model_copy(update={"runner_options": {budget[v.agent]: args.max_subtasks, **v.runner_options}})
                    if v.agent in budget else v for v in variants]
    if args.s2_option:  # Agent S2's own settings, e.g. the grounding model's convention (point_coords=relative)
        from agentlab.cli.execute import parse_runner_options

        s2 = parse_runner_options(args.s2_option)
        variants = [v.model_copy(update={"runner_options": {**s2, **v.runner_options}}) if v.agent == "AgentS2" else v
                    for v in variants]
    n = args.tasks if args.tasks is not None else (2 if args.quick else 4)
    config = da.DesktopArchConfig(variants=variants, tasks=n, prefixes=[p for p in args.prefixes.split(",") if p],
                                  max_steps=args.max_steps, max_new_tokens=args.max_new_tokens,
                                  time_limit_s=args.time_limit,
                                  common_options={"max_retries": args.max_retries} if args.max_retries is not None else {})
    # an LLM config file may give roles their own models (docs/roles.md): each episode role gets its own
    models = load_models_file(args.llm_config, known_roles()) if args.llm_config else ModelsFile(LLMConfig.from_env())
    loaded = models.load()
    llm = loaded.llm
    pool = AgentPool.from_dir(None)
    tasks = load_tasks()
    chosen = da.choose_tasks(tasks, config)
    machine = (f"Machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the start, "
               f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}.")
    t0 = time.perf_counter()
    res = da.run(tasks, pool, loaded, config, args.out / "table", retry_errors=args.retry_errors)
    took = time.perf_counter() - t0
    frame = res.frame()
    body = [
        f"Model: **{llm.model_id}** (a real model, no scripted replies). {len(chosen)} desktop task(s): "
        f"{', '.join(t.id for t in chosen)}; max {config.max_steps} steps, replies capped at {config.max_new_tokens} "
        f"new tokens, seed {config.seed}, options for every variant {config.common_options or 'none'}, plan budget "
        f"{args.max_subtasks or 'the runners own (8)'} subgoals/subtasks, time limit {config.time_limit_s:.0f} s per task. Every task opened in LibreOffice under a private Xvfb. {took:.0f} s in this "
        "invocation (the run folder is resumable). " + machine,
        "",
        "### Desktop architectures: ExecutionAcc, subtask success and cost per task",
        "",
        *frame_markdown(frame),
        "",
        "### Cost per role (which role spent the calls and tokens; `roles:` of the LLM config file)",
        "",
        *frame_markdown(res.role_frame()),
        "",
        "Subtask success = subgoals (S2) or subtasks (PC-Agent) completed / planned, summed over the tasks; "
        "`-` for runners without subtasks. `agents` = who carried the tasks out (the store's column shows where "
        "AgentToken routed them). PC-Agent's own figures (its paper's Table 4; `agentlab.experiments.pcagent_metrics`): "
        "*recovery %* = episodes in which the reflection agent found an action wrong and a later action of the same "
        "subtask as intended, of those with any reflection verdict; *manager SR %* = two-application tasks whose "
        "plan's subtasks name the task's applications in order (read with the store's application lexicon, one "
        "subtask per application at least; judged automatically, where the paper judged by hand).",
    ]
    values: dict[str, float | int | str | None] = {"tasks": len(chosen)}
    for name in frame.index:
        key = "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")
        values[f"acc_{key}"] = float(frame.loc[name, "ExecutionAcc %"]) / 100
    return body, values


def enrolment(args: argparse.Namespace) -> tuple[list[str], dict[str, float | int | str | None]]:
    from agentlab.experiments.enrolment import EnrolmentConfig, run

    pool = AgentPool.from_dir(None)
    config = EnrolmentConfig(tokens=args.base_tokens, max_eval_tasks=60 if args.quick else None)
    t0 = time.perf_counter()
    res = run(pool, config)
    took = time.perf_counter() - t0
    from agentlab.experiments.execution_acc import frame_markdown

    body = [
        f"Checkpoint before enrolment: `{args.base_tokens or 'data/tokens/base30'}` ({res.agents_before} tokens); new agents "
        f"{', '.join(res.new_agents)} added one token at a time (only the new row trains). Single-application "
        f"benchmark tasks: {res.before.overall.total} (judged by domain, as in Table 4); target tasks: the "
        f"{res.target_tasks} multi-application `pc-*` tasks (judged as routed to a new agent). {took:.0f} s.",
        "",
        *frame_markdown(res.frame()),
        "",
        "Per new agent: " + "; ".join(f"{a}: {m['demonstrations']} demonstrations, token train_acc {m['train_acc']:.3f}, "
                                      f"{m['seconds']:.1f} s" for a, m in res.added.items()) + ".",
        f"Existing agents' token rows bit-identical after enrolment: **{res.existing_unchanged}**.",
        "Where the target tasks went after enrolment: " + ", ".join(f"{t} -> {a}" for t, a in res.target_routes.items()) + ".",
    ]
    values: dict[str, float | int | str | None] = {
        "routing_before": res.before.accuracy, "routing_after": res.after.accuracy, "taken_by_new": res.taken_by_new,
        "target_after": res.target_after, "existing_unchanged": int(res.existing_unchanged)}
    return body, values


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=["table", "enrolment", "all"], default="all")
    p.add_argument("--quick", action="store_true", help="2 tasks, 60 routing tasks")
    p.add_argument("--tasks", type=int, default=None, help="desktop tasks (default 4; quick 2)")
    p.add_argument("--prefixes", default="pc-", help="task id prefixes to draw from (comma separated; empty: all desktop tasks)")
    p.add_argument("--variants", default="", help="comma-separated variant names (default: all)")
    p.add_argument("--llm-config", type=Path, default=None, help="LLM YAML, optionally with roles: (docs/roles.md)")
    p.add_argument("--max-steps", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=160)
    p.add_argument("--retry-errors", action="store_true")
    p.add_argument("--s2-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an Agent S2 runner option for every S2 row (repeat; VALUE is YAML), e.g. point_coords=relative")
    p.add_argument("--grounding-ablation", action="store_true",
                   help="add Agent S2's grounding ablation rows (the acting model / accessibility place the point; docs/roles.md)")
    p.add_argument("--max-retries", type=int, default=None, help="every runner's max_retries (unusable replies re-asked per step)")
    p.add_argument("--max-subtasks", type=int, default=None, help="Agent S2's max_subgoals and PC-Agent's max_subtasks")
    p.add_argument("--time-limit", type=float, default=600.0, help="wall-clock seconds per task (checked before each action)")
    p.add_argument("--base-tokens", type=Path, default=None,
                   help="AgentToken checkpoint trained without AgentS2 and PCAgent (default data/tokens/base30)")
    p.add_argument("--out", type=Path, default=Path("runs/bench_desktop_agents"))
    p.add_argument("--results", type=Path, default=RESULTS / "desktop_agents.md", help="the table part's results file")
    p.add_argument("--enrolment-results", type=Path, default=RESULTS / "desktop_enrolment.md")
    args = p.parse_args(argv)
    command = command_line(__file__, argv)
    summaries = []
    if args.part in ("table", "all"):
        try:
            body, values = table(args)
        except ConfigError as exc:  # an unknown variant name, a bad LLM config
            return usage_error(str(exc))
        body += ["", f"Run folder (rows, trajectories of every episode): `{args.out / 'table'}`."]
        summaries.append(summary_line(values))
        write_result(args.results, "Agent S2 and PC-Agent on the desktop tasks (real model)", body, summaries[-1],
                     command=command)
        log("\n".join(body))
    if args.part in ("enrolment", "all"):
        body, values = enrolment(args)
        summaries.append(summary_line(values))
        write_result(args.enrolment_results, "Enrolment: routing before and after AgentS2 and PCAgent join", body,
                     summaries[-1], command=command)
        log("\n".join(body))
    print(" ".join(summaries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
