"""How a COLA team runs: the settings model its :data:`~agentlab.teams.base.TEAMS` entry names
(``ExecOptions.team_settings``; ``agentlab exec --team cola --team-option KEY=VALUE`` fills it).

One pydantic object, so a YAML config or a papermill ``parameters`` cell can set it, and every
bound on the team's recovery (retries, reassignments, backtracks, questions) is explicit.
"""

from __future__ import annotations

from pathlib import Path

from typing import Literal

from pydantic import Field

from agentlab.teams.base import TeamSettings
from agentlab.teams.cola.reviewer import ReviewMode

#: when the team asks a person: never; when the reviewer is unsure, a step failed past the team's own
#: recovery, or an error stopped an agent; after every step, to confirm it (declining stops the task)
Mode = Literal["automatic", "passive", "active"]


class ColaOptions(TeamSettings):
    """The team's settings; the run's ``max_steps`` is each step's budget."""

    interaction: Mode = Field("automatic", description="automatic | passive (ask when unsure/failed/error) | active (confirm every step)")
    review: ReviewMode = Field("model", description="model: checks, then a model call; checks: the deterministic checks only")
    max_subtasks: int = Field(4, ge=1, le=12, description="the planner's longest plan")
    max_retries: int = Field(1, ge=0, description="per step: the same agent again after the reviewer rejected it")
    max_reassignments: int = Field(1, ge=0, description="per step: the next agent of the scheduler's ranking")
    max_backtracks: int = Field(2, ge=0, description="per task: rollbacks to an earlier step a person asked for")
    max_questions: int = Field(10, ge=0, description="per task: questions to a person (then the team decides alone)")
    scheduler_router: str = Field("embedding", description="the router whose ranking assigns subtasks (agentlab.metaagent.router)")
    #: ``router``: the ranking's first agent takes the subtask; ``model``: the ``scheduler`` role's model
    #: chooses among the ranking's first ``scheduler_candidates`` from their capability descriptions
    #: (the paper's LLM scheduler, :mod:`agentlab.teams.cola.chooser`)
    scheduler: Literal["router", "model"] = Field("router", description="router: the ranking decides; model: an LLM chooses from the agents' capabilities")
    scheduler_candidates: int = Field(6, ge=0, description="scheduler=model: the ranking's best agents shown to the model (0: every able agent)")
    scheduler_tokens: Path | None = Field(None, description="that router's checkpoint (agenttoken: default data/tokens)")
    #: the decision agent restates its subtask with its own model before acting (the paper's
    #: refinement; :mod:`agentlab.teams.cola.refiner`); false: the guidance is added without a model call
    refine: bool = Field(False, description="decision agents refine their subtask with their model before acting")
    #: the decision agents read the team's shared short-term memory: its last ``short_term`` messages
    #: ride along with the subtask they act on (off by default: a specialist reads values off its
    #: request, and the team's messages would offer it every other step's values too)
    share_memory: bool = Field(False, description="decision agents get the team's recent messages with their subtask")
    #: the reviewer also judges every action as it is taken, and a rejected action ends the step at once
    #: (:mod:`agentlab.teams.cola.action_review`; one reviewer call per action; needs review=model)
    review_actions: bool = Field(False, description="the reviewer judges each action as it is taken; a rejected one ends the step")
    memory_path: Path | None = Field(None, description="long-term memory JSONL (default: cola_memory.jsonl in the run folder)")
    memory_top_n: int = Field(3, ge=0, description="past task summaries given to the planner (0: none)")
    short_term: int = Field(6, ge=0, description="last team messages given to the planner and reviewer (0: none)")
    #: a plan of a few numbered lines and a two-line verdict are short: on the embedded model on two CPU cores,
    #: 256-token planner replies alone used up a 600 s task (measured), so the caps are tight
    max_new_tokens: int = Field(160, ge=16, description="planner replies")
    review_max_new_tokens: int = Field(64, ge=16, description="reviewer replies")
    max_attempts: int = Field(2, ge=1, description="asks per planner/reviewer reply until it parses")

    @property
    def asks_person(self) -> bool:
        return self.interaction != "automatic"
