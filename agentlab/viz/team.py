"""A team's messages in order, as one table: what a COLA episode's planner, scheduler, reviewer,
manager and person said (the ``team/`` trajectory of a ``--team cola`` episode).

Notebook 05 shows it next to the inspector (which shows the same messages record by record,
and each agent's own steps): here the whole conversation reads top to bottom, with the step it
was about, so a retry, a question or a backtrack is easy to follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentlab.errors import DataError
from agentlab.envs.trajectory import load_trajectory
from agentlab.viz.trajectory import TEAM_DIR, role_rows

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True)
class TeamMessage:
    """One role message of the team's trajectory."""

    record: int  #: the trajectory record it belongs to
    step: int | None  #: the plan step (from 1) it was about; None: the whole task (planning, the end)
    role: str
    text: str  #: with the role's extras (verdict, agent, backtrack_to ...) as the inspector shows them
    backtrack_to: int | None = None


def team_messages(episode: str | Path) -> list[TeamMessage]:
    """Every role message of ``episode``'s team trajectory (``<episode>/team`` or the folder itself)."""
    folder = Path(episode)
    if (folder / TEAM_DIR / "traj.jsonl").exists():
        team = folder / TEAM_DIR
        if not (team / "traj.jsonl").resolve().is_relative_to(folder.resolve()):  # a link out of the episode
            raise DataError(f"{TEAM_DIR}/ leads outside the episode folder; it is not read", where=folder)
        folder = team
    if not (folder / "traj.jsonl").exists():
        raise DataError("no team trajectory here (a --team cola episode has one in team/)", where=folder)
    out = []
    for rec in load_trajectory(folder).steps:
        step = rec.info.get("plan_step") if isinstance(rec.info, dict) else None
        back = rec.info.get("backtrack_to") if isinstance(rec.info, dict) else None
        for role, text in role_rows(rec):
            out.append(TeamMessage(rec.step, step if isinstance(step, int) else None, role, text,
                                   back if isinstance(back, int) else None))
    return out


def team_messages_frame(episode: str | Path) -> pd.DataFrame:
    """:func:`team_messages` as a DataFrame (columns record, step, role, text, backtrack_to)."""
    import pandas as pd

    rows = team_messages(episode)
    return pd.DataFrame([m.__dict__ for m in rows], columns=["record", "step", "role", "text", "backtrack_to"])
