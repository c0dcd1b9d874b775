"""An env with a wall-clock deadline: the one time limit a task's agents all share.

The episode runner wraps the task's env in :class:`TimedEnv` so every action checks the
task's deadline first; a multi-agent plan wraps the same shared env once per step with the
same deadline, so the task has one limit however many agents act on it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agentlab.envs.base import Env, StepResult
from agentlab.envs.wrapper import EnvWrapper
from agentlab.errors import TimeLimitExceeded

__all__ = ["TimeLimitExceeded", "TimedEnv"]

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.actions.base import Action


class TimedEnv(EnvWrapper):
    """Passes everything to ``inner``; refuses to act once the deadline (``time.monotonic()``) has passed."""

    def __init__(self, inner: Env, deadline: float) -> None:
        super().__init__(inner)
        self.deadline = deadline

    def step(self, action: Action) -> StepResult:
        if time.monotonic() > self.deadline:
            raise TimeLimitExceeded("the task's wall-time limit ran out")
        return self.inner.step(action)
