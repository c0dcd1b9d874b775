"""An env with a wall-clock deadline: the one time limit a task's agents all share.

The episode runner wraps the task's env in :class:`TimedEnv` so every action checks the
task's deadline first; a multi-agent plan wraps the same shared env once per step with the
same deadline, so the task has one limit however many agents act on it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agentlab.envs.base import Env, Observation, StepResult
from agentlab.errors import TimeLimitExceeded

__all__ = ["TimeLimitExceeded", "TimedEnv"]

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.actions.base import Action
    from agentlab.envs.actions.space import ActionSpace


class TimedEnv(Env):
    """Passes everything to ``inner``; refuses to act once the deadline (``time.monotonic()``) has passed."""

    def __init__(self, inner: Env, deadline: float) -> None:
        self.inner, self.deadline = inner, deadline

    @property
    def actions(self) -> ActionSpace:
        return self.inner.actions

    def reset(self, task: str | None = None) -> Observation:
        return self.inner.reset(task)

    def observe(self) -> Observation:
        return self.inner.observe()

    def step(self, action: Action) -> StepResult:
        if time.monotonic() > self.deadline:
            raise TimeLimitExceeded("the task's wall-time limit ran out")
        return self.inner.step(action)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        """What else the inner env offers (a desktop's ``uno_url``, ``screenshot()``, ...)."""
        if name == "inner":  # not set yet (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
