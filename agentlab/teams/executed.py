"""The ``plan`` team: a plan's steps run in order in one shared env, each by its agent.

Every step acts on the same shared state (one workspace folder, one desktop, one device),
each by its own agent (:func:`~agentlab.teams.step.run_step`), with the hub passing each
step's result to the next. A step that fails, runs out of budget or cannot act on the task's
env does not stop the plan: later steps may still finish the task, and the evaluator judges
the end state. The task's deadline stops the plan; a harness error is raised (the outcomes
so far stay in the hub, and ``plan.json`` records them).

Where the plan comes from: a manager's (manager mode: the run's planner), else the task's gold
plan, else the task's ground-truth agent on the whole task.
"""

from __future__ import annotations

import logging
from typing import Any

from agentlab.envs.task_env import TaskEnv
from agentlab.judge.evaluators import EvalResult
from agentlab.fileio import atomic_write_json
from agentlab.record.row import EpisodeRow, PlanPart
from agentlab.tasks.decisions import PlanStep
from agentlab.teams.base import Job, Opening
from agentlab.teams.hub import PLAN_FILE, Hub, StepOutcome
from agentlab.teams.single import gt_agent
from agentlab.teams.step import run_step

log = logging.getLogger(__name__)

#: steps that ended without finishing their subtask, in the order a row reports the first of them
_UNFINISHED = ("time_limit", "context_overflow", "wrong_env", "failed", "max_steps", "error")


def _plan_for(job: Job, part: PlanPart) -> list[PlanStep] | None:
    """The plan to execute (None: the manager wrote none; the row's part says why)."""
    task = job.task
    if job.planner is not None:
        decided = job.planner(task)
        part.plan_source, part.manager_raw = "manager", decided.raw
        if not decided.plan:
            part.plan_error = " ".join((decided.error or "the manager wrote no plan").split())
            return None
        return list(decided.plan)
    if task.plan:
        part.plan_source = "gold"
        return list(task.plan)
    part.plan_source = "gt_agent"
    return [PlanStep(gt_agent(task, job.pool), task.instruction)]


class PlanTeam:
    """A plan's steps in order; the row gains ``plan``, ``step_outcomes`` and the summed costs."""


    def __init__(self) -> None:
        self.hub: Hub | None = None

    def prepare(self, job: Job, row: EpisodeRow) -> Opening | None:
        row.team_part = part = PlanPart(mode=job.options.mode, team=job.options.team, plan=[], step_outcomes=[])
        plan = _plan_for(job, part)
        if plan is None:
            row.status = "no_plan"
            return None
        self.hub = Hub(job.task.instruction, plan)
        part.plan = [s.as_dict() for s in plan]
        return Opening(job.task.env, job.options.envs)

    def run(self, job: Job, opened: TaskEnv, row: EpisodeRow) -> None:
        assert self.hub is not None
        plan = self.hub.plan
        for index, step in enumerate(plan):
            outcome = run_step(step, index=index, job=job, opened=opened, hub=self.hub)
            if outcome.status == "time_limit":
                log.info("task %s: the time limit ran out in step %d; %d step(s) not run", job.task.id, index + 1,
                         len(plan) - index - 1)
                break
        row.status = plan_status(self.hub.outcomes, len(plan))

    def judged(self, job: Job, verdict: EvalResult) -> None:
        """Nothing to learn from the verdict."""

    def close(self, job: Job, row: EpisodeRow) -> None:
        if self.hub is None:
            return
        atomic_write_json(job.folder / PLAN_FILE, plan_record(job, row, self.hub))


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


def plan_record(job: Job, row: EpisodeRow, hub: Hub) -> dict[str, Any]:
    """Fill the row with what the plan's steps did (see docs/multi_agent.md; the costs are the
    kernel's, from the meters) and return ``plan.json``'s record of the episode."""
    part = row.part(PlanPart)
    assert part is not None
    outcomes = hub.outcomes
    part.plan, part.step_outcomes = [s.as_dict() for s in hub.plan], [o.as_row() for o in outcomes]
    row.agents = list(dict.fromkeys(o.agent for o in outcomes))
    row.steps = sum(o.steps for o in outcomes)
    problems = [f"step {o.index + 1} {o.agent} ({o.status}): {o.error}" for o in outcomes if o.error and o.status != "done"]
    row.agent_error = "; ".join(problems) or None
    return {"task": job.task.instruction, "plan": part.plan, "step_outcomes": part.step_outcomes, "status": row.status,
            "success": row.success, "error": row.error}
