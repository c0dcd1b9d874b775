"""The ``cola`` team: a COLA team carries the task out in the env the episode opened.

:class:`ColaRunner` is the :data:`~agentlab.teams.base.TEAMS` entry: it hands the opened env to a
:class:`~agentlab.teams.cola.team.ColaTeam`, writes the row's COLA fields (:func:`cola_row`) and,
once the task is judged, puts the task's summary in the team's long-term memory.
"""

from __future__ import annotations

from typing import Any

from agentlab.envs.task_env import TaskEnv
from agentlab.judge.evaluators import EvalResult
from agentlab.fileio import atomic_write_json
from agentlab.teams.base import Job, Opening
from agentlab.teams.cola.options import ColaOptions
from agentlab.teams.cola.team import ColaTeam, TeamStatus
from agentlab.teams.executed import plan_row, plan_status
from agentlab.teams.hub import PLAN_FILE, Hub

#: the team's own roles (their calls are the row's ``team_llm_calls``)
TEAM_ROLES = ("planner", "reviewer")


def cola_row(team: ColaTeam, status: TeamStatus, job: Job) -> dict[str, Any]:
    """The COLA fields of a result row: the counters, the planner's subtasks, and the costs of
    every attempt (rolled-back ones included) plus the team's own model calls."""
    own = [job.models.get(role).spent() for role in TEAM_ROLES]
    calls, tin, tout = (sum(x[i] for x in own) for i in range(3))
    return {
        **team.counters.as_row(),
        "team_status": status,
        "subtasks": len(team.subtasks),
        "plan_fallback": team.plan_fallback,
        "attempts": len(team.attempts),
        "steps": sum(o.steps for o in team.attempts),
        "llm_calls": sum(o.llm_calls for o in team.attempts) + calls,
        "tokens_in": sum(o.tokens_in for o in team.attempts) + tin,
        "tokens_out": sum(o.tokens_out for o in team.attempts) + tout,
        "team_llm_calls": calls,
    }


class ColaRunner:
    """COLA's planner, scheduler, decision agents and reviewer on one task (docs/agents/cola.md)."""


    def __init__(self) -> None:
        self.hub: Hub | None = None
        self.team: ColaTeam | None = None
        self.fields: dict[str, Any] = {}

    def prepare(self, job: Job, row: dict[str, Any]) -> Opening | None:
        cola = job.options.settings(ColaOptions)
        row.update(mode=job.options.mode, team="cola", plan=[], step_outcomes=[], plan_source="cola",
                   interaction=cola.interaction, cola=cola.model_dump(mode="json"))
        self.hub = Hub(job.task.instruction)
        return Opening(job.task.env, job.options.envs)

    def run(self, job: Job, opened: TaskEnv, row: dict[str, Any]) -> None:
        assert self.hub is not None
        self.team = ColaTeam(job, opened, self.hub)
        status = self.team.run()
        row["status"] = plan_status(self.hub.outcomes, len(self.team.subtasks)) if status == "done" else status
        self.fields = cola_row(self.team, status, job)

    def judged(self, job: Job, verdict: EvalResult) -> None:
        if self.team is not None:
            self.team.remember(verdict.success)

    def close(self, job: Job, row: dict[str, Any]) -> None:
        if self.hub is None:
            return
        row.update(plan_row(self.hub.plan, self.hub.outcomes))
        row.update(self.fields)
        atomic_write_json(job.folder / PLAN_FILE, {
            "task": job.task.instruction, "plan": row["plan"], "step_outcomes": row["step_outcomes"], "status": row["status"],
            "success": row["success"], "error": row["error"],
            **{k: self.fields[k] for k in ("reviews", "retries", "reassignments", "backtracks", "questions") if k in self.fields}})
