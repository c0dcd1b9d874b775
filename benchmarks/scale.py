"""Benchmark: scale-out on Ray -- episodes per hour and self-instruct candidates per minute, 1 vs N workers.

Issue 15's "Measured": on this 2-core machine, workspace episodes with a model behind an
OpenAI-compatible endpoint should run >= 1.6x faster on 2 workers than serially. The model is a
LOOPBACK endpoint (:class:`agentlab.llm.testing.LoopbackChatServer`, real HTTP, the real
``openai`` client) that answers each task with its reference program after a fixed delay
(``--delay``, default 2 s: a remote model's latency), so an episode is: model wait + the program
in its sandbox + evaluation -- latency-bound, as episodes against a served model are. Both sides
run the same tasks in one run: serial in-process (the default, Ray not involved) and on Ray
workers (``agentlab exec --workers N``'s path: :func:`agentlab.episode.run_suite` with an
:class:`agentlab.episode_worker.EpisodeRecipe`). Ray's own start is timed apart and left out of
the rates (a cluster is started once per session, not per run); each worker's setup (loading
the pool, the backend) is inside them.

The second part does the same for self-instruct (one shard per agent, ``--workers``): candidates
per minute with the loopback generator (:func:`agentlab.llm.testing.list_continuation`, a fixed
delay per request), the real MiniLM BERTScore filter and leakage check in every worker.

    python benchmarks/scale.py [--quick] [--workers 2] [--tasks 12] [--delay 2.0]
        [--si-agents 4] [--si-rounds 2] [--si-delay 0.3] [--results FILE]

Writes ``benchmarks/results/scale.md`` and ends with one ``key=value`` line.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, log, summary_line, write_result

from agentlab.episode import ExecOptions, comparable_row, run_suite
from agentlab.episode_worker import EpisodeRecipe
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.llm import LLMConfig, load_backend
from agentlab.llm.testing import LoopbackChatServer, list_continuation
from agentlab.parallel import Scale
from agentlab.paths import data_dir
from agentlab.pool import AgentPool


def workspace_tasks(n: int) -> list[ExecTask]:
    tasks = [t for t in (load_task(p) for p in sorted(tasks_dir().glob("*.json")))
             if t.env == "workspace" and t.reference_solution is not None]
    return tasks[:n]


def _solution(task: ExecTask) -> str:
    sol = task.reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


def start_ray(workers: int) -> float:
    """Start Ray here (or connect to the cluster ``RAY_ADDRESS`` names); seconds it took."""
    import os

    import ray

    t = time.perf_counter()
    if os.environ.get("RAY_ADDRESS"):
        ray.init(logging_level="WARNING")
    else:
        ray.init(num_cpus=workers, include_dashboard=False, logging_level="WARNING")
    return time.perf_counter() - t


def episodes(tasks: list[ExecTask], workers: int, delay: float, out: Path) -> dict[str, float]:
    """Both sides on the same tasks: episodes per hour serially and on ``workers`` Ray workers."""
    answers = {t.instruction: _solution(t) for t in tasks}

    def reply(body: dict, k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "FAIL")

    pool = AgentPool.from_dir(None)
    options = ExecOptions(max_steps=3)
    res: dict[str, float] = {}
    with LoopbackChatServer(reply, delay_s=delay) as srv:
        cfg = LLMConfig(kind="openai", base_url=srv.url, model="loopback-coder")
        llm = load_backend(cfg)
        t = time.perf_counter()
        serial = run_suite(tasks, pool=pool, llm=llm, out_dir=out / "serial", options=options, progress=False)
        res["serial_s"] = time.perf_counter() - t
        rows = serial.rows
        t = time.perf_counter()
        par = run_suite(tasks, pool=pool, llm=llm, out_dir=out / "parallel", options=options, progress=False,
                        scale=Scale(workers=workers), recipe=EpisodeRecipe(out_dir=out / "parallel", options=options, llm=cfg))
        res["parallel_s"] = time.perf_counter() - t
    n = len(tasks)

    def by_id(rows: list[dict]) -> list[dict]:
        return sorted((comparable_row(r) for r in rows), key=lambda r: r["id"])

    res["same_rows"] = float(by_id(serial.rows) == by_id(par.rows))
    res.update(
        n=n, acc_serial=serial.execution_acc, acc_parallel=par.execution_acc,
        eph_serial=3600 * n / res["serial_s"], eph_parallel=3600 * n / res["parallel_s"],
        episode_s=statistics.mean(r["seconds"] for r in rows),
        calls=statistics.mean(r["llm_calls"] for r in rows),
        setup_s=statistics.mean(r.get("setup_s", 0.0) for r in rows),
        evaluate_s=statistics.mean(r.get("evaluate_s", 0.0) for r in rows),
    )
    res["speedup"] = res["eph_parallel"] / res["eph_serial"]
    return res


def selfinstruct(agents: list[str], rounds: int, workers: int, delay: float, out: Path) -> dict[str, float]:
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    pool = AgentPool.from_dir(None)
    res: dict[str, float] = {}
    with LoopbackChatServer(list_continuation, delay_s=delay) as srv:
        gen = LLMConfig(kind="openai", base_url=srv.url, model="loopback-generator")
        # the leakage check is off: its index (every benchmark task embedded) is a one-off cost per
        # worker that says nothing about throughput
        base = dict(agents=agents, per_agent=100, max_rounds=rounds, generator=gen, agents_per_batch=1, fresh=True,
                    thresholds=data_dir() / "demos" / "thresholds.json", torch_threads=1, leakage=False)
        for side, scale in (("serial", None), ("parallel", Scale(workers=workers))):
            t = time.perf_counter()
            rep = run_selfinstruct(SelfInstructConfig(out_dir=out / side, **base), pool=pool, progress=False, scale=scale)
            res[f"{side}_s"] = time.perf_counter() - t
            res[f"cands_{side}"] = rep.run_candidates
            res[f"cpm_{side}"] = 60 * rep.run_candidates / res[f"{side}_s"]
    res["speedup"] = res["cpm_parallel"] / res["cpm_serial"]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 tasks, 2 agents x 1 round, shorter delays")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tasks", type=int, default=None, help="workspace tasks (default 12; quick 4)")
    ap.add_argument("--delay", type=float, default=None, help="model latency per request, s (default 2.0; quick 0.5)")
    ap.add_argument("--si-agents", type=int, default=None, help="self-instruct agents (default 4; quick 2)")
    ap.add_argument("--si-rounds", type=int, default=None, help="self-instruct rounds per agent (default 2; quick 1)")
    ap.add_argument("--si-delay", type=float, default=None, help="generator latency per request, s (default 0.3; quick 0.1)")
    ap.add_argument("--results", type=Path, default=RESULTS / "scale.md")
    args = ap.parse_args()
    q = args.quick
    n_tasks = args.tasks or (4 if q else 12)
    delay = args.delay if args.delay is not None else (0.5 if q else 2.0)
    si_agents = args.si_agents or (2 if q else 4)
    si_rounds = args.si_rounds or (1 if q else 2)
    si_delay = args.si_delay if args.si_delay is not None else (0.1 if q else 0.3)
    logging.basicConfig(level=logging.WARNING)
    import ray

    ray_start = start_ray(args.workers)
    log(f"ray started in {ray_start:.1f}s")
    try:
        with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
            ep = episodes(workspace_tasks(n_tasks), args.workers, delay, Path(tmp) / "exec")
            log(f"episodes: {ep}")
            pool = AgentPool.from_dir(None)
            agents = [a.name for a in pool.agents if a.demonstrations][:si_agents]
            si = selfinstruct(agents, si_rounds, args.workers, si_delay, Path(tmp) / "si")
            log(f"self-instruct: {si}")
    finally:
        ray.shutdown()
    w = args.workers
    per_1000_h = 1000 * ep["episode_s"] / 3600
    body = [
        f"Loopback OpenAI-compatible model answering each workspace task with its reference program after "
        f"{delay:g} s; {ep['n']:.0f} tasks (ground-truth routing, code agents, bubblewrap sandbox as configured), "
        f"1 worker (serial, in-process) vs {w} Ray workers on this 2-core machine, one run. Ray's own start "
        f"({ray_start:.1f} s) is left out of the rates; each worker's setup is in them.",
        "",
        "| work | 1 worker | " + f"{w} workers | ratio |",
        "|---|---|---|---|",
        f"| workspace episodes per hour | {ep['eph_serial']:.0f} | {ep['eph_parallel']:.0f} | **{ep['speedup']:.2f}x** |",
        f"| self-instruct candidates per minute | {si['cpm_serial']:.0f} | {si['cpm_parallel']:.0f} | **{si['speedup']:.2f}x** |",
        "",
        f"ExecutionAcc: serial {ep['acc_serial']:.2f}, parallel {ep['acc_parallel']:.2f}; result rows sorted by id "
        f"{'identical apart from the timing fields' if ep['same_rows'] else 'DIFFER beyond the timing fields'}. "
        f"Self-instruct: {len(agents)} agents x {si_rounds} round(s), generator delay {si_delay:g} s per request, "
        f"{si['cands_serial']:.0f} candidates serially and {si['cands_parallel']:.0f} sharded (one shard per agent; "
        "each worker loads its own MiniLM scorer, which the ratio pays for; the leakage check is off). "
        f"Both sides also pay the same driver-side fixed work (scorer load, seed-row scores, dataset and "
        f"report writing), so on a run this short the shards' gain is eaten by the workers' start-up.",
        "",
        f"Per-episode cost (serial rows): {ep['episode_s']:.2f} s wall, {ep['calls']:.1f} model call(s), "
        f"{ep['setup_s'] * 1000:.0f} ms workspace setup, {ep['evaluate_s'] * 1000:.0f} ms evaluation; "
        f"1,000 such tasks: {per_1000_h:.1f} h on one worker, about {per_1000_h / w:.1f} h on {w} "
        "(see docs/scaling.md for the cluster plan).",
    ]
    summary = summary_line({"episodes_per_h_1": round(ep["eph_serial"]), f"episodes_per_h_{w}": round(ep["eph_parallel"]),
                            "episodes_ratio": ep["speedup"], "candidates_per_min_1": round(si["cpm_serial"]),
                            f"candidates_per_min_{w}": round(si["cpm_parallel"]), "candidates_ratio": si["speedup"],
                            "ray_start_s": ray_start, "episode_s": ep["episode_s"], "same_rows": int(ep["same_rows"])})
    write_result(args.results, "Scale-out on Ray (issue 15)", body, summary)
    print("\n".join(body))
    print(summary)


if __name__ == "__main__":
    main()
