"""What a MetaAgent decided for one task: the chosen agent, the full ranking, and a plan.

Kept apart from :mod:`~agentlab.metaagent.router` so that the manager (which writes plans)
and the routers (which call the manager) both depend on these records, not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PlanStep:
    """One subtask of a multi-agent plan and the agent assigned to it."""

    agent: str
    subtask: str

    def as_dict(self) -> dict[str, str]:
        return {"agent": self.agent, "subtask": self.subtask}


@dataclass
class RouteResult:
    """What a router decided for one task.

    ``agent`` is the chosen agent (``None`` on failure, with ``error`` saying why);
    ``ranking`` lists ALL agents of the pool sorted by probability, descending;
    ``plan`` is filled in manager mode; ``error`` may also carry a warning on success
    (e.g. the AgentToken fallback) so nothing is ever silently papered over.
    """

    agent: str | None
    ranking: list[tuple[str, float]]
    plan: list[PlanStep] = field(default_factory=list)
    error: str | None = None
    raw: str | None = None  # generated text, when the router generated any

    def as_record(self, task_id: str | None = None) -> dict[str, Any]:
        """The prediction line format of ``agentlab route`` (JSON-ready)."""
        rec: dict[str, Any] = {} if task_id is None else {"id": task_id}
        rec["agent"] = self.agent
        rec["ranking"] = [[n, float(p)] for n, p in self.ranking]
        rec["plan"] = [s.as_dict() for s in self.plan]
        if self.error:
            rec["error"] = self.error
        return rec
