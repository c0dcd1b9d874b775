"""Run a COLA team on one task: open the env once, let the team work, judge the task once.

:func:`run_cola` is what :func:`agentlab.episode.run_task` calls for ``--team cola``;
:func:`cola_row` turns its :class:`ColaRun` into the COLA fields of a result row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.envs.task_env import open_task_env
from agentlab.eval.evaluators import EvalResult
from agentlab.eval.exec_tasks import ExecTask
from agentlab.llm.base import LLMBackend
from agentlab.pool.store import AgentPool
from agentlab.teams.cola.interaction import Ask
from agentlab.teams.cola.memory import LongTermMemory
from agentlab.teams.cola.scheduler import Ranker
from agentlab.teams.cola.team import ColaTeam, Counters, TeamRunOptions, TeamStatus
from agentlab.teams.hub import Hub, StepOutcome


@dataclass
class ColaRun:
    """What the team's run ended with: the steps kept, every attempt, the verdict and the costs."""

    outcomes: list[StepOutcome]  #: the final outcome of each step (the executed plan)
    attempts: list[StepOutcome]  #: every attempt, rolled-back ones included (their costs count)
    verdict: EvalResult
    status: TeamStatus
    counters: Counters
    subtasks: list[str]
    team_llm_calls: int
    team_tokens_in: int
    team_tokens_out: int
    setup_s: float
    evaluate_s: float
    plan_fallback: bool = False


def run_cola(
    task: ExecTask,
    *,
    pool: AgentPool,
    llm: LLMBackend,
    episode_dir: Path,
    run_dir: Path,
    options: TeamRunOptions,
    deadline: float,
    hub: Hub,
    ask: Ask | None = None,
    ranker: Ranker | None = None,
    memory: LongTermMemory | None = None,
) -> ColaRun:
    """Open the task's env in ``episode_dir``, let a COLA team carry the task out, judge it once."""
    t_setup = time.monotonic()
    opened = open_task_env(task.env, task, episode_dir, options.envs)
    setup_s = time.monotonic() - t_setup
    try:
        team = ColaTeam(task, pool=pool, llm=llm, opened=opened, hub=hub, episode_dir=episode_dir, run_dir=run_dir,
                        options=options, deadline=deadline, ask=ask, ranker=ranker, memory=memory)
        status = team.run()
        t_eval = time.monotonic()
        opened.collect()
        verdict = task.evaluate(opened.root, env=opened.eval_env)
        evaluate_s = time.monotonic() - t_eval
        team.remember(verdict.success)
        return ColaRun(outcomes=list(hub.outcomes), attempts=team.attempts, verdict=verdict, status=status,
                       counters=team.counters, subtasks=team.subtasks, team_llm_calls=team.llm_calls,
                       team_tokens_in=team.tokens_in, team_tokens_out=team.tokens_out, setup_s=setup_s,
                       evaluate_s=evaluate_s, plan_fallback=team.plan_fallback)
    finally:
        opened.close()


def cola_row(run: ColaRun) -> dict[str, Any]:
    """The COLA fields of a result row: the counters, the planner's subtasks, and the costs of
    every attempt (rolled-back ones included) plus the team's own model calls."""
    return {
        **run.counters.as_row(),
        "team_status": run.status,
        "subtasks": len(run.subtasks),
        "plan_fallback": run.plan_fallback,
        "attempts": len(run.attempts),
        "steps": sum(o.steps for o in run.attempts),
        "llm_calls": sum(o.llm_calls for o in run.attempts) + run.team_llm_calls,
        "tokens_in": sum(o.tokens_in for o in run.attempts) + run.team_tokens_in,
        "tokens_out": sum(o.tokens_out for o in run.attempts) + run.team_tokens_out,
        "team_llm_calls": run.team_llm_calls,
    }
