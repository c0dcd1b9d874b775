"""What every agent is handed for one episode: its models (metered, one per role), its recorder,
its step budget and its deadline.

Why one object: the episode owns the bookkeeping, the agent only decides and acts (AndroidWorld's
``agent.step`` + ``run_episode``; smolagents' step callbacks). Before this, each runner counted
its own calls and tokens by probing the backend's counters, opened recorders, and carried the
step budget and time limit as loose arguments; a runner stopped by the time limit returned
nothing and its cost was lost. Now every model call goes through a :class:`~agentlab.llm.base.Metered`
backend owned by the episode, so what an episode spent is known however it ended, and per role
(``usage_by_role`` in result rows).

Roles: an agent asks ``ctx.llm(role)`` for the model of one of its roles (Agent S2's
``manager``/``worker``/``grounder``, PC-Agent's ``manager``/``decision``/``reflection``/``progress``,
COLA's ``planner``/``reviewer``). A role without a model of its own uses the run's default model,
with a meter of its own, so costs are still told apart.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from agentlab.agents.roles import DEFAULT_ROLE
from agentlab.llm.base import LLMBackend, Metered
from agentlab.llm.roles import Backends
from agentlab.llm.screens import ImageFit
from agentlab.envs.trajectory import TrajectoryRecorder

__all__ = ["DEFAULT_ROLE", "Models", "RunContext", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Model calls and tokens (as the backends report them; 0 where one does not)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    #: replies cut because they repeated themselves (:mod:`agentlab.llm.loops`)
    loop_cuts: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.calls + other.calls, self.tokens_in + other.tokens_in, self.tokens_out + other.tokens_out,
                     self.loop_cuts + other.loop_cuts)

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.calls - other.calls, self.tokens_in - other.tokens_in, self.tokens_out - other.tokens_out,
                     self.loop_cuts - other.loop_cuts)

    def as_row(self) -> dict[str, int]:
        return {"llm_calls": self.calls, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "loop_cuts": self.loop_cuts}


class Models:
    """The backends of one episode by role, each behind a meter of its own.

    ``default`` serves every role not in ``roles``. The meters live as long as this object, so
    usage accumulates over the episode; a team reads a step's cost as the difference of two
    :meth:`total` readings (runs are single-threaded). Every role's images are downscaled to its
    side in ``sides`` and counted (:class:`~agentlab.llm.screens.ImageFit`).
    """

    def __init__(self, models: LLMBackend | Backends) -> None:
        models = Backends.of(models)
        self.default, self.roles, self.sides = models.llm, dict(models.roles), models.sides
        self._meters: dict[str, Metered] = {}
        self._fits: dict[str, ImageFit] = {}

    def get(self, role: str = DEFAULT_ROLE) -> Metered:
        """The metered backend of ``role`` (made on first use)."""
        if role not in self._meters:
            self._fits[role] = ImageFit(self.roles.get(role, self.default), self.sides.of(role))
            self._meters[role] = Metered(self._fits[role])
        return self._meters[role]

    def image_side(self, role: str = DEFAULT_ROLE) -> int:
        """The longest side ``role``'s screenshots are sent at (a grounder maps its point back with it)."""
        return self.sides.of(role)

    def total(self) -> Usage:
        out = Usage()
        for meter in self._meters.values():
            out += Usage(*meter.spent(), loop_cuts=meter.loop_cuts)
        return out

    def usage_by_role(self) -> dict[str, dict[str, Any]]:
        """``{role: {"model_id", "llm_calls", "tokens_in", "tokens_out"}}`` of every role that was asked,
        plus ``images`` and ``image_bytes`` (PNG, as sent) for a role that was shown screenshots."""
        out: dict[str, dict[str, Any]] = {}
        for role, meter in sorted(self._meters.items()):
            calls, tin, tout = meter.spent()
            out[role] = {"model_id": meter.model_id, "llm_calls": calls, "tokens_in": tin, "tokens_out": tout}
            fit = self._fits[role]
            if fit.images_sent:
                out[role].update(images=fit.images_sent, image_bytes=fit.image_bytes)
        return out


@dataclass
class RunContext:
    """One agent's episode (or plan step): models, recorder, step budget, deadline, seed."""

    models: Models
    recorder: TrajectoryRecorder
    max_steps: int
    #: ``time.monotonic()`` after which the env refuses actions (the task's time limit)
    deadline: float = math.inf
    seed: int = 0

    def llm(self, role: str = DEFAULT_ROLE) -> LLMBackend:
        """The metered model of ``role``."""
        return self.models.get(role)

    def image_side(self, role: str = DEFAULT_ROLE) -> int:
        """The longest side of ``role``'s screenshots as sent (:meth:`Models.image_side`)."""
        return self.models.image_side(role)

    def usage(self) -> Usage:
        return self.models.total()

    def actions_recorded(self) -> int:
        """Steps the recorder holds with an action: the steps of a run stopped from outside."""
        return sum(1 for s in self.recorder.steps if s.action is not None)

    def with_recorder(self, recorder: TrajectoryRecorder, **changes: Any) -> RunContext:
        """The same models, budget and deadline, recording into ``recorder`` (a plan step's folder)."""
        return dataclasses.replace(self, recorder=recorder, **changes)
