"""Every model role of every architecture, and which of them see the screen.

Why one table: an LLM config file's ``roles:`` map (:mod:`agentlab.llm.roles`) names roles, and a
misspelt one must be an error listing the real ones, not a model silently never asked. The
runners ask ``ctx.llm(role)`` with these names (Agent S2's ``MODEL_ROLES``, PC-Agent's
``MODEL_ROLES``, COLA's ``TEAM_ROLES``; a test keeps them equal to this table), and
docs/roles.md prints it.

``sees_screen``: the role's requests carry the screenshot when its model takes images
(``vision: true``, or a backend that declares images); a text model gets the accessibility
elements (and OCR lines) instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: the one role of an agent without roles (the code agent, AppAgent, the GUI agents)
DEFAULT_ROLE = "agent"


@dataclass(frozen=True)
class RoleInfo:
    """One model role of an architecture."""

    name: str
    sees_screen: bool
    what: str


#: architecture -> its roles (the runner's or team's names; ``metaagent`` is the router and plan manager)
ROLES: Mapping[str, tuple[RoleInfo, ...]] = {
    "code": (RoleInfo(DEFAULT_ROLE, False, "writes one program per turn (CLI agents)"),),
    "appagent": (RoleInfo(DEFAULT_ROLE, True, "AppAgent's deployment loop on a phone: the screenshot with numbered marks"),),
    "gui": (RoleInfo(DEFAULT_ROLE, True, "AppAgent's loop on a desktop: the screenshot with numbered marks; "
                                         "also COLA's GUI decision agents"),),
    "s2": (
        RoleInfo("manager", False, "plans subgoals and replans (the screenshot too when its model takes images)"),
        RoleInfo("worker", True, "one semantic action per step"),
        RoleInfo("grounder", True, "the visual expert: screenshot + element description -> a point"),
    ),
    "pcagent": (
        RoleInfo("manager", False, "splits the instruction into subtasks, keeps the communication hub"),
        RoleInfo("progress", False, "summarises the current subtask's progress"),
        RoleInfo("decision", True, "one desktop action (the screenshot with marks)"),
        RoleInfo("reflection", True, "compares the screens before and after an action"),
        RoleInfo("intention", False, "active perception: which on-screen text (OCR lines) a selection means"),
    ),
    "cola": (
        RoleInfo("planner", False, "splits the task into capability-named subtasks"),
        RoleInfo("reviewer", False, "judges each decision agent's result"),
        RoleInfo("scheduler", False, "scheduler=model: picks the agent for a subtask from their capability descriptions"),
    ),
    "metaagent": (RoleInfo("router", False, "the ICL/prompt router and the plan manager (--router-llm-config wins)"),),
}


def known_roles() -> list[str]:
    """Every role name a ``roles:`` map may use."""
    return sorted({r.name for roles in ROLES.values() for r in roles})
