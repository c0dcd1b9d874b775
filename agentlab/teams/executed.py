"""Carry a plan out: open the task's env once, run its steps in order, judge the task once.

Every step acts on the same shared state (one workspace folder, one desktop, one device),
each by its own agent (:func:`~agentlab.teams.step.run_step`), with the hub passing each
step's result to the next. A step that fails, runs out of budget or cannot act on the task's
env does not stop the plan: later steps may still finish the task, and the evaluator judges
the end state. The task's deadline stops the plan; a harness error is raised (the outcomes
so far stay in the hub).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.envs.task_env import open_task_env
from agentlab.eval.evaluators import EvalResult
from agentlab.eval.exec_tasks import ExecTask
from agentlab.llm.base import LLMBackend
from agentlab.metaagent.decision import PlanStep
from agentlab.pool.store import AgentPool
from agentlab.teams.hub import Hub, StepOutcome
from agentlab.teams.step import StepOptions, run_step

log = logging.getLogger(__name__)

#: steps that ended without finishing their subtask, in the order a row reports the first of them
_UNFINISHED = ("time_limit", "context_overflow", "wrong_env", "failed", "max_steps", "error")


@dataclass
class PlanRun:
    """What carrying a plan out ended with."""

    outcomes: list[StepOutcome]
    verdict: EvalResult
    setup_s: float
    evaluate_s: float


def execute_plan(
    task: ExecTask,
    plan: list[PlanStep],
    *,
    pool: AgentPool,
    llm: LLMBackend,
    episode_dir: Path,
    run_dir: Path,
    options: StepOptions,
    deadline: float,
    hub: Hub,
) -> PlanRun:
    """Run ``plan`` on ``task`` in one env opened in ``episode_dir``; the outcomes go to ``hub`` as they end."""
    t_setup = time.monotonic()
    opened = open_task_env(task.env, task, episode_dir, options.envs)
    setup_s = time.monotonic() - t_setup
    try:
        for index, step in enumerate(plan):
            outcome = run_step(step, index=index, task=task, pool=pool, llm=llm, opened=opened, hub=hub,
                               out_dir=episode_dir, options=options, deadline=deadline, run_dir=run_dir)
            if outcome.status == "time_limit":
                log.info("task %s: the time limit ran out in step %d; %d step(s) not run", task.id, index + 1,
                         len(plan) - index - 1)
                break
        t_eval = time.monotonic()
        opened.collect()
        verdict = task.evaluate(opened.root, env=opened.eval_env)
        return PlanRun(outcomes=list(hub.outcomes), verdict=verdict, setup_s=setup_s, evaluate_s=time.monotonic() - t_eval)
    finally:
        opened.close()


def plan_status(outcomes: list[StepOutcome], planned: int) -> str:
    """The row's status: ``done`` when every planned step ran and finished, else the first
    unfinished step's status (``time_limit`` first: it stopped the plan)."""
    statuses = [o.status for o in outcomes]
    if len(statuses) == planned and all(s == "done" for s in statuses):
        return "done"
    for s in _UNFINISHED:
        if s in statuses:
            return s
    return "failed"


def plan_row(plan: list[PlanStep], outcomes: list[StepOutcome]) -> dict[str, Any]:
    """The fields a multi-agent result row adds or aggregates (see docs/multi_agent.md)."""
    agents: list[str] = []
    for o in outcomes:
        if o.agent not in agents:
            agents.append(o.agent)
    problems = [f"step {o.index + 1} {o.agent} ({o.status}): {o.error}" for o in outcomes if o.error and o.status != "done"]
    return {
        "plan": [s.as_dict() for s in plan],
        "step_outcomes": [o.as_row() for o in outcomes],
        "agents": agents,
        "steps": sum(o.steps for o in outcomes),
        "llm_calls": sum(o.llm_calls for o in outcomes),
        "tokens_in": sum(o.tokens_in for o in outcomes),
        "tokens_out": sum(o.tokens_out for o in outcomes),
        "agent_error": "; ".join(problems) or None,
    }
