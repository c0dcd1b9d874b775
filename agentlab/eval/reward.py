"""AppAgent's *Reward*: credit for how close the final state came to the task's objective.

The AppAgent paper (section 4.1) reports a Reward beside the success rate, "to provide a more
fine-grained measurement": per task, UI pages were scored by hand, closer to the objective
scoring higher, so an agent that failed still gets credit for where it ended. This workbench's
tasks carry no scored pages; they carry an evaluator of one or more checks on the final state
(:mod:`agentlab.judge.evaluators`). The reward here is what that gives without new annotations:
**the mean score of the evaluator's checks on the final state** (1.0 for a solved task). A task
of three checks left with two met earns 0.67 where ExecutionAcc gives 0; a task of one check is
scored as the check scores it (binary for an exact match). What differs from the paper: the
credit is for *state* reached (settings set, alarms changed), not for the page the agent stopped
on, so walking to the right screen and doing nothing earns nothing.

It reads a result row's ``verdict`` (the evaluator's record, written after the episode); a row
without one (a harness error before judging) has no reward.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def reward(row: Mapping[str, Any]) -> float | None:
    """The row's reward in [0, 1] (module docstring), or None when it was not judged."""
    verdict = row.get("verdict")
    if not isinstance(verdict, Mapping):
        return None
    if verdict.get("success") or row.get("success"):
        return 1.0
    checks = [c for c in verdict.get("checks") or [] if isinstance(c, Mapping)]
    scores = [min(max(float(c.get("score") or 0.0), 0.0), 1.0) for c in checks]
    if not scores:
        score = verdict.get("score")
        return min(max(float(score), 0.0), 1.0) if isinstance(score, (int, float)) else None
    return sum(scores) / len(scores)


def mean_reward(rows: Iterable[Mapping[str, Any]]) -> float | None:
    """The mean reward over the judged rows (None: none was judged)."""
    got = [r for r in (reward(row) for row in rows) if r is not None]
    return sum(got) / len(got) if got else None


__all__ = ["mean_reward", "reward"]
