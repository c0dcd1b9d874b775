"""The result row of one episode: what ``results.jsonl`` holds per task and seed, as one typed class.

The episode kernel (:mod:`agentlab.run.episode`) starts an :class:`EpisodeRow`, a team fills it
by attribute, and the suite writes :meth:`EpisodeRow.to_json`; ``agentlab view`` and ``report``
read the same class back (:meth:`EpisodeRow.load`). What a team adds besides the common fields
lives in its own typed part (:attr:`EpisodeRow.team_part`: a plan's steps, COLA's counters and
asks), so the common fields never grow a team's keys.

The file format is the one older versions wrote, flat: a part's fields sit beside the common ones,
only the fields an episode set are written, and keys this class does not know are kept as they
were. So a row read and written again gives the same JSON fields, and every older run folder
loads: :meth:`load` is lenient (a field of the wrong type reads as absent, ``None``), as a viewer of
forged or half-written folders must be. It lives one floor below the teams and the kernel (which
write it) so the viewer, far above, reads it without pulling either in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Lenient(BaseModel):
    """Strict types on load (a forged ``success: "yes"`` is not a success), unchecked assignment
    (the writers are type-checked), unknown keys kept."""

    model_config = ConfigDict(strict=True, extra="allow")

    @classmethod
    def _lenient(cls, d: Mapping[str, Any]) -> Self:
        """``d`` validated, every field that does not fit dropped (read as its default)."""
        try:
            return cls.model_validate(dict(d))
        except ValidationError as exc:
            bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
            return cls.model_validate({k: v for k, v in d.items() if k not in bad})


class PlanPart(_Lenient):
    """What the ``plan`` team adds: the plan it ran, each step's outcome, where the plan came from."""

    mode: str | None = None
    team: str | None = None
    plan: list[dict[str, Any]] = Field(default_factory=list)
    step_outcomes: list[dict[str, Any]] = Field(default_factory=list)
    #: ``gold``, ``manager``, ``gt_agent`` or ``cola``
    plan_source: str | None = None
    manager_raw: str | None = None
    #: why the manager wrote no plan
    plan_error: str | None = None

    @classmethod
    def claims(cls, d: Mapping[str, Any]) -> bool:
        return "plan" in d or "step_outcomes" in d


class ColaPart(PlanPart):
    """What COLA adds to a plan: its settings, the team's end, its counters (asks included) and
    the calls of its own roles."""

    interaction: str | None = None
    cola: dict[str, Any] | None = None
    team_status: str | None = None
    plan_fallback: bool | None = None
    attempts: int | None = None
    team_llm_calls: int | None = None
    reviews: int | None = None
    #: actions the per-action reviewer judged, and those it rejected (``review_actions=true``)
    action_reviews: int | None = None
    actions_rejected: int | None = None
    retries: int | None = None
    reassignments: int | None = None
    backtracks: int | None = None
    #: the questions the team asked a person
    questions: int | None = None

    @classmethod
    def claims(cls, d: Mapping[str, Any]) -> bool:
        return d.get("plan_source") == "cola"


#: the team parts, the most specific first (a COLA row is a plan row too)
PARTS: tuple[type[PlanPart], ...] = (ColaPart, PlanPart)
P = TypeVar("P", bound=PlanPart)


class EpisodeRow(_Lenient):
    """One line of ``results.jsonl`` (docs/execution.md). A field an older row lacks reads as None."""

    #: where the row was read from: its line in the file (0: written here, or an episode no row names)
    line: int = Field(default=0, exclude=True)
    id: str = ""
    domain: str | None = None
    router: str | None = None
    agents: list[str] = Field(default_factory=list)
    success: bool | None = None
    score: float | None = None
    status: str | None = None
    steps: int | None = None
    llm_calls: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    seconds: float | None = None
    #: a harness error (the task was not judged)
    error: str | None = None
    #: the episode folder, relative to the run folder
    trajectory: str | None = None
    max_steps: int | None = None
    time_limit_s: float | None = None
    seed: int | None = None
    seed_index: int | None = None
    max_new_tokens: int | None = None
    runner_options: dict[str, Any] | None = None
    model_id: str | None = None
    setup_s: float | None = None
    isolation: str | None = None
    agent_error: str | None = None
    evaluate_s: float | None = None
    #: the evaluator's checks (rows written since issue #29)
    verdict: dict[str, Any] | None = None
    #: hierarchical runners and COLA: subtasks planned in all, and those completed (as the agents report)
    subtasks: int | None = None
    subtasks_done: int | None = None
    #: a task with annotated subtasks: each judged on the end state by its own checks
    #: (``{"subtask", "agent", "checks", "success"}``), and the share of them done
    judged_subtasks: list[dict[str, Any]] | None = None
    subtask_acc: float | None = None
    loop_cuts: int | None = None
    #: a desktop GUI specialist's path: ``gui`` (through the window) or ``file`` (the application's
    #: files, through a workspace specialist); absent for runners with one path
    route: str | None = None
    usage_by_role: dict[str, Any] | None = None
    #: what the model calls cost (rows written since issue #43)
    usd: float | None = None
    #: 1 for a first run, n for the n-th rerun of the episode (absent: 1)
    attempt: int | None = None
    #: when a rerun replaced this row (rows of ``history.jsonl``)
    replaced: str | None = None
    #: what the team that ran the episode adds (None: one agent on the whole task)
    team_part: PlanPart | None = Field(default=None, exclude=True)

    @classmethod
    def load(cls, d: Mapping[str, Any], line: int = 0) -> Self:
        """A row as read from a file (any version of it): the team part picked by its keys, every
        field of the wrong type read as absent, unknown keys kept."""
        part = next((p for p in PARTS if p.claims(d)), None)
        own = {k: v for k, v in d.items() if k not in ("line", "team_part") and not (part and k in part.model_fields)}
        agents = own.get("agents")
        if isinstance(agents, str) and agents:  # rows of single-agent runs once named their agent as a string
            own["agents"] = [agents]
        row = cls._lenient(own)
        if not isinstance(d.get("id"), str):
            row.id = f"(row {line} without an id)" if d.get("id") is None else str(d.get("id"))
        row.line = line
        if part is not None:
            row.team_part = part._lenient({k: v for k, v in d.items() if k in part.model_fields})
        return row

    def to_json(self) -> dict[str, Any]:
        """The row as ``results.jsonl`` holds it: the fields this episode set, the team's part
        beside them (flat, as older versions wrote it), unknown keys as they were read."""
        out = self.model_dump(mode="json", exclude_unset=True)
        if self.team_part is not None:
            out |= self.team_part.model_dump(mode="json", exclude_unset=True)
        return out

    def part(self, kind: type[P]) -> P | None:
        """The team part if it is a ``kind`` (else None): ``row.part(PlanPart)`` for a plan's fields."""
        return self.team_part if isinstance(self.team_part, kind) else None

    @property
    def harness_error(self) -> bool:
        return bool(self.error)

    @property
    def tokens(self) -> int | None:
        if self.tokens_in is None and self.tokens_out is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_out or 0)


def rebased(row: Mapping[str, Any], prefix: str, *, router: str | None = None,
            extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A row as a folder above its run folder holds it (a study's arms share the episodes of one
    run per agent): its ``trajectory`` under ``prefix`` and, given one, the arm as its ``router``;
    ``extra``: fields the study adds to its copy (PC-Agent's figures read from the episode)."""
    moved = EpisodeRow.load(row)
    if moved.trajectory is not None:
        moved.trajectory = f"{prefix}{moved.trajectory}"
    if router is not None:
        moved.router = router
    for key, value in (extra or {}).items():
        setattr(moved, key, value)
    return moved.to_json()
