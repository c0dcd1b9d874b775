"""An env that passes everything to another: the base of the wrappers that add one rule to acting.

Why: the task's deadline (:class:`~agentlab.envs.timed.TimedEnv`) and COLA's per-action reviewer
(:class:`~agentlab.teams.cola.action_review.ReviewedEnv`) each change only ``step``; everything
else -- the action space, reset, observe, close and whatever else the inner env offers (a
desktop's ``screenshot()``, a workspace's root) -- must reach the inner env unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentlab.envs.base import Env, Observation, StepResult

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.actions.base import Action
    from agentlab.envs.actions.space import ActionSpace


class EnvWrapper(Env):
    """Every call goes to ``inner``; subclasses override :meth:`step`."""

    def __init__(self, inner: Env) -> None:
        self.inner = inner

    @property
    def actions(self) -> ActionSpace:
        return self.inner.actions

    def reset(self, task: str | None = None) -> Observation:
        return self.inner.reset(task)

    def observe(self) -> Observation:
        return self.inner.observe()

    def step(self, action: Action) -> StepResult:
        return self.inner.step(action)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        """What else the inner env offers (a desktop's ``uno_url``, ``screenshot()``, ...)."""
        if name == "inner":  # not set yet (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
