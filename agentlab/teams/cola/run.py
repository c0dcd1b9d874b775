"""The ``cola`` team: a COLA team carries the task out in the env the episode opened.

:class:`ColaRunner` is the :data:`~agentlab.teams.base.TEAMS` entry: it hands the opened env to a
:class:`~agentlab.teams.cola.team.ColaTeam`, fills the row's COLA part (:func:`fill_cola`) and,
once the task is judged, puts the task's summary in the team's long-term memory.
"""

from __future__ import annotations


from agentlab.envs.task_env import TaskEnv
from agentlab.judge.evaluators import EvalResult
from agentlab.fileio import atomic_write_json
from agentlab.record.row import ColaPart, EpisodeRow
from agentlab.teams.base import Job, Opening
from agentlab.teams.cola.options import ColaOptions
from agentlab.teams.cola.team import ColaTeam, TeamStatus
from agentlab.teams.executed import plan_record, plan_status
from agentlab.teams.hub import PLAN_FILE, Hub

#: the team's own roles (their calls are the row's ``team_llm_calls``)
TEAM_ROLES = ("planner", "reviewer", "scheduler")


def fill_cola(row: EpisodeRow, part: ColaPart, team: ColaTeam, status: TeamStatus, job: Job) -> None:
    """The COLA fields of a result row: the counters, the planner's subtasks, the steps of every
    attempt (rolled-back ones included) and the team's own model calls (the row's costs are the
    kernel's, from the meters)."""
    c = team.counters
    part.reviews, part.retries, part.reassignments, part.backtracks, part.questions = (
        c.reviews, c.retries, c.reassignments, c.backtracks, c.questions)
    part.action_reviews, part.actions_rejected = c.action_reviews, c.actions_rejected
    part.team_status, part.plan_fallback, part.attempts = status, team.plan_fallback, len(team.attempts)
    part.team_llm_calls = sum(job.models.get(role).spent()[0] for role in team.roles)  # only the roles it asked
    row.subtasks, row.steps = len(team.subtasks), sum(o.steps for o in team.attempts)


class ColaRunner:
    """COLA's planner, scheduler, decision agents and reviewer on one task (docs/agents/cola.md)."""


    def __init__(self) -> None:
        self.hub: Hub | None = None
        self.team: ColaTeam | None = None
        self.status: TeamStatus | None = None

    def prepare(self, job: Job, row: EpisodeRow) -> Opening | None:
        cola = job.options.settings(ColaOptions)
        row.team_part = ColaPart(mode=job.options.mode, team="cola", plan=[], step_outcomes=[], plan_source="cola",
                                 interaction=cola.interaction, cola=cola.model_dump(mode="json"))
        self.hub = Hub(job.task.instruction)
        return Opening(job.task.env, job.options.envs)

    def run(self, job: Job, opened: TaskEnv, row: EpisodeRow) -> None:
        assert self.hub is not None
        self.team = ColaTeam(job, opened, self.hub)
        self.status = status = self.team.run()
        row.status = plan_status(self.hub.outcomes, len(self.team.subtasks)) if status == "done" else status

    def judged(self, job: Job, verdict: EvalResult) -> None:
        if self.team is not None:
            self.team.remember(verdict.success)

    def close(self, job: Job, row: EpisodeRow) -> None:
        if self.hub is None:
            return
        record = plan_record(job, row, self.hub)
        part = row.part(ColaPart)
        if self.team is not None and self.status is not None and part is not None:
            fill_cola(row, part, self.team, self.status, job)
            record |= self.team.counters.as_row()
        atomic_write_json(job.folder / PLAN_FILE, record)
