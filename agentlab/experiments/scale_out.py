"""Scale-out on Ray: workspace episodes per hour and self-instruct candidates per minute, 1 vs N workers.

The model is a LOOPBACK endpoint (:class:`agentlab.llm.testing.LoopbackChatServer`, real HTTP,
the real ``openai`` client) that answers each task with its reference program after a fixed
delay (a remote model's latency), so an episode is: model wait + the program in its sandbox +
evaluation -- latency-bound, as episodes against a served model are. Both sides run the same
tasks in one run: serial in-process (Ray not involved) and on Ray workers (``agentlab exec
--workers N``'s path: one :class:`~agentlab.run.RunSpec` given to :func:`agentlab.run.execute`,
its :class:`~agentlab.run.worker.EpisodeRecipe` built by each worker). Ray's own start is timed apart and left out of
the rates (a cluster is started once per session, not per run); each worker's setup (loading
the pool, the backend) is inside them.

Self-instruct likewise (one shard per agent): candidates per minute with the loopback generator
(:func:`agentlab.llm.testing.list_continuation`, a fixed delay per request), the real MiniLM
BERTScore filter in every worker (the leakage check off: its index is a one-off cost per worker
that says nothing about throughput).
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.experiments.markdown import table
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir

log = logging.getLogger(__name__)


class ScaleOutConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workers: int = Field(2, ge=1)
    #: workspace tasks with a reference solution (the first N)
    tasks: int = Field(12, ge=1)
    #: the loopback model's latency per request, s
    delay: float = Field(2.0, ge=0.0)
    #: self-instruct: agents (the first N with demonstrations), rounds per agent, generator latency per request
    si_agents: int = Field(4, ge=1)
    si_rounds: int = Field(2, ge=1)
    si_delay: float = Field(0.3, ge=0.0)


@dataclass
class Episodes:
    n: int
    serial_s: float
    parallel_s: float
    acc_serial: float
    acc_parallel: float
    #: the result rows, sorted by id, agree apart from their timing fields
    same_rows: bool
    #: means over the serial rows
    episode_s: float
    calls: float
    setup_s: float
    evaluate_s: float

    @property
    def eph_serial(self) -> float:
        return 3600 * self.n / self.serial_s

    @property
    def eph_parallel(self) -> float:
        return 3600 * self.n / self.parallel_s

    @property
    def speedup(self) -> float:
        return self.eph_parallel / self.eph_serial


@dataclass
class SelfInstructRates:
    agents: list[str]
    serial_s: float
    parallel_s: float
    cands_serial: int
    cands_parallel: int

    @property
    def cpm_serial(self) -> float:
        return 60 * self.cands_serial / self.serial_s

    @property
    def cpm_parallel(self) -> float:
        return 60 * self.cands_parallel / self.parallel_s

    @property
    def speedup(self) -> float:
        return self.cpm_parallel / self.cpm_serial


@dataclass
class ScaleOut:
    config: ScaleOutConfig
    ray_start_s: float
    episodes: Episodes
    selfinstruct: SelfInstructRates

    def summary(self) -> dict[str, float | int | str | None]:
        ep, si, w = self.episodes, self.selfinstruct, self.config.workers
        return {"episodes_per_h_1": round(ep.eph_serial), f"episodes_per_h_{w}": round(ep.eph_parallel),
                "episodes_ratio": ep.speedup, "candidates_per_min_1": round(si.cpm_serial),
                f"candidates_per_min_{w}": round(si.cpm_parallel), "candidates_ratio": si.speedup,
                "ray_start_s": self.ray_start_s, "episode_s": ep.episode_s, "same_rows": int(ep.same_rows)}

    def markdown(self) -> list[str]:
        c, ep, si, w = self.config, self.episodes, self.selfinstruct, self.config.workers
        per_1000_h = 1000 * ep.episode_s / 3600
        return [
            f"Loopback OpenAI-compatible model answering each workspace task with its reference program after "
            f"{c.delay:g} s; {ep.n:.0f} tasks (ground-truth routing, code agents, bubblewrap sandbox as configured), "
            f"1 worker (serial, in-process) vs {w} Ray workers on this 2-core machine, one run. Ray's own start "
            f"({self.ray_start_s:.1f} s) is left out of the rates; each worker's setup is in them.",
            "",
            *table(["work", "1 worker", f"{w} workers", "ratio"], [
                ["workspace episodes per hour", f"{ep.eph_serial:.0f}", f"{ep.eph_parallel:.0f}", f"**{ep.speedup:.2f}x**"],
                ["self-instruct candidates per minute", f"{si.cpm_serial:.0f}", f"{si.cpm_parallel:.0f}",
                 f"**{si.speedup:.2f}x**"],
            ]),
            "",
            f"ExecutionAcc: serial {ep.acc_serial:.2f}, parallel {ep.acc_parallel:.2f}; result rows sorted by id "
            f"{'identical apart from the timing fields' if ep.same_rows else 'DIFFER beyond the timing fields'}. "
            f"Self-instruct: {len(si.agents)} agents x {c.si_rounds} round(s), generator delay {c.si_delay:g} s per request, "
            f"{si.cands_serial:.0f} candidates serially and {si.cands_parallel:.0f} sharded (one shard per agent; "
            "each worker loads its own MiniLM scorer, which the ratio pays for; the leakage check is off). "
            f"Both sides also pay the same driver-side fixed work (scorer load, seed-row scores, dataset and "
            f"report writing), so on a run this short the shards' gain is eaten by the workers' start-up.",
            "",
            f"Per-episode cost (serial rows): {ep.episode_s:.2f} s wall, {ep.calls:.1f} model call(s), "
            f"{ep.setup_s * 1000:.0f} ms workspace setup, {ep.evaluate_s * 1000:.0f} ms evaluation; "
            f"1,000 such tasks: {per_1000_h:.1f} h on one worker, about {per_1000_h / w:.1f} h on {w} "
            "(see docs/scaling.md for the cluster plan).",
        ]


def workspace_tasks(n: int) -> list[ExecTask]:
    """The first ``n`` workspace tasks that have a reference solution."""
    tasks = [t for t in (load_task(p) for p in sorted(tasks_dir().glob("*.json")))
             if t.env == "workspace" and t.reference_solution is not None]
    return tasks[:n]


def _solution(task: ExecTask) -> str:
    sol = task.reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


def start_ray(workers: int) -> float:
    """Start Ray here (or connect to the cluster ``RAY_ADDRESS`` names); seconds it took."""
    import ray

    t = time.perf_counter()
    if os.environ.get("RAY_ADDRESS"):
        ray.init(logging_level=logging.WARNING)
    else:
        ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.WARNING)
    return time.perf_counter() - t


def episodes(tasks: list[ExecTask], workers: int, delay: float, out: Path) -> Episodes:
    """Both sides on the same tasks: serially in-process and on ``workers`` Ray workers."""
    from agentlab.run.episode import ExecOptions, comparable_row
    from agentlab.run.worker import EpisodeRecipe, RunSpec, Worker, execute
    from agentlab.llm import LLMConfig
    from agentlab.llm.roles import ModelsFile
    from agentlab.llm.testing import LoopbackChatServer
    from agentlab.parallel import Scale
    from agentlab.pool import AgentPool

    answers = {t.instruction: _solution(t) for t in tasks}

    def reply(body: dict[str, Any], k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "FAIL")

    pool = AgentPool.from_dir(None)
    options = ExecOptions(max_steps=3)
    with LoopbackChatServer(reply, delay_s=delay) as srv:
        cfg = LLMConfig(kind="openai", base_url=srv.url, model="loopback-coder")
        models = ModelsFile(cfg)
        worker = Worker(pool, models.load())
        t = time.perf_counter()
        serial = execute(RunSpec(EpisodeRecipe(out / "serial", options, models)), tasks, worker=worker, progress=False)
        serial_s = time.perf_counter() - t
        t = time.perf_counter()
        par = execute(RunSpec(EpisodeRecipe(out / "parallel", options, models), scale=Scale(workers=workers)), tasks,
                      worker=worker, progress=False)
        parallel_s = time.perf_counter() - t

    def by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted((comparable_row(r) for r in rows), key=lambda r: r["id"])

    rows = serial.rows
    return Episodes(
        n=len(tasks), serial_s=serial_s, parallel_s=parallel_s, acc_serial=serial.execution_acc,
        acc_parallel=par.execution_acc, same_rows=by_id(serial.rows) == by_id(par.rows),
        episode_s=statistics.mean(r["seconds"] for r in rows), calls=statistics.mean(r["llm_calls"] for r in rows),
        setup_s=statistics.mean(r.get("setup_s", 0.0) for r in rows),
        evaluate_s=statistics.mean(r.get("evaluate_s", 0.0) for r in rows),
    )


def selfinstruct(agents: list[str], rounds: int, workers: int, delay: float, out: Path) -> SelfInstructRates:
    """Self-instruct on ``agents`` serially and sharded over ``workers`` Ray workers."""
    from agentlab.llm import LLMConfig
    from agentlab.llm.testing import LoopbackChatServer, list_continuation
    from agentlab.parallel import Scale
    from agentlab.paths import data_dir
    from agentlab.pool import AgentPool
    from agentlab.selfinstruct.config import SelfInstructConfig
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    pool = AgentPool.from_dir(None)
    seconds: dict[str, float] = {}
    cands: dict[str, int] = {}
    with LoopbackChatServer(list_continuation, delay_s=delay) as srv:
        gen = LLMConfig(kind="openai", base_url=srv.url, model="loopback-generator")
        for side, scale in (("serial", None), ("parallel", Scale(workers=workers))):
            config = SelfInstructConfig(out_dir=out / side, agents=agents, per_agent=100, max_rounds=rounds, generator=gen,
                                        agents_per_batch=1, fresh=True, thresholds=data_dir() / "demos" / "thresholds.json",
                                        torch_threads=1, leakage=False)
            t = time.perf_counter()
            rep = run_selfinstruct(config, pool=pool, progress=False, scale=scale)
            seconds[side], cands[side] = time.perf_counter() - t, rep.run_candidates
    return SelfInstructRates(agents, seconds["serial"], seconds["parallel"], cands["serial"], cands["parallel"])


def run(config: ScaleOutConfig) -> ScaleOut:
    """Start Ray, measure both kinds of work serially and on the workers, shut Ray down."""
    import ray

    from agentlab.pool import AgentPool

    ray_start = start_ray(config.workers)
    log.info("ray started in %.1fs", ray_start)
    try:
        with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
            ep = episodes(workspace_tasks(config.tasks), config.workers, config.delay, Path(tmp) / "exec")
            log.info("episodes: %s", ep)
            agents = [a.name for a in AgentPool.from_dir(None).agents if a.demonstrations][: config.si_agents]
            si = selfinstruct(agents, config.si_rounds, config.workers, config.si_delay, Path(tmp) / "si")
            log.info("self-instruct: %s", si)
    finally:
        ray.shutdown()
    return ScaleOut(config, ray_start, ep, si)
