"""COLA's task scheduler: which decision agent takes a subtask, and who is next if it fails.

COLA's decision-agent pool *is* AgentStore's pool: each subtask is ranked against the pool's
documents by a MetaAgent router (:meth:`agentlab.metaagent.router.Router.rank`; by default
the embedding router fitted on the documents' demonstrations: cheap and the strongest
router on the embedded model), and the ranking is restricted to the agents whose runner can
act in the task's env (a workspace task goes to the code-writing agents only) and can be built
here (an agent whose search endpoint or Drive folder is not configured is left out). The first
agent takes the subtask; a reassignment moves to the next one in the same ranking. With a
``chooser`` (``scheduler=model``, :mod:`agentlab.teams.cola.chooser`) a model picks among the
ranking's first agents from their capability descriptions, as the paper's scheduler does, and its
choice goes first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentlab.agents.base import agent_class
from agentlab.errors import ConfigError
from agentlab.pool.document import AgentDocument
from agentlab.pool.store import AgentPool

log = logging.getLogger(__name__)

#: ranks the whole pool for one text: (agent, probability), best first
Ranker = Callable[[str], list[tuple[str, float]]]


#: a model's choice among candidates for a subtask: (the chosen name or None, its reply)
Chooser = Callable[[str, Sequence[str]], tuple[str | None, str]]


@dataclass(frozen=True)
class Assignment:
    """A subtask and the agents that may take it, best first (the scheduler's ranking)."""

    subtask: str
    candidates: list[tuple[str, float]]
    #: who put the first agent first: the router's ranking, or a model's choice (``scheduler=model``)
    chosen_by: str = "router"
    #: the model's reply, when a model was asked
    reply: str = ""

    def agent(self, k: int) -> str | None:
        """The ``k``-th choice (0: the first), None when the ranking is spent."""
        return self.candidates[k][0] if k < len(self.candidates) else None


class Scheduler:
    """Assigns subtasks to the pool agents able to act on a ``task_env`` task."""

    def __init__(self, pool: AgentPool, rank: Ranker, *, task_env: str, can_act: Mapping[str, frozenset[str]],
                 runnable: Callable[[AgentDocument], bool] = lambda doc: True, chooser: Chooser | None = None,
                 shown: int = 6) -> None:
        self.pool = pool
        self.rank = rank
        #: a model that picks among the ranking's first ``shown`` agents (0: all of them); None: the ranking decides
        self.chooser, self.shown = chooser, shown
        acting = [d for d in pool.agents if d.runner is not None
                  and task_env in can_act.get(agent_class(d.runner, where=str(d.path or d.name)).env_kind, frozenset())]
        self.able = {d.name for d in acting if runnable(d)}
        if not self.able:
            raise ConfigError(f"no agent of the pool can act on a {task_env} task here (no runner for that env, "
                              "or the resources its agents need are not configured)")

    def assign(self, subtask: str) -> Assignment:
        ranking = [(name, float(p)) for name, p in self.rank(subtask) if name in self.able]
        chosen_by, reply = "router", ""
        if self.chooser is not None and ranking:
            shown = [n for n, _ in ranking][: self.shown or None]
            choice, reply = self.chooser(subtask, shown)
            if choice is not None and choice in shown:  # the model's choice first, the ranking's order behind it
                ranking = [r for r in ranking if r[0] == choice] + [r for r in ranking if r[0] != choice]
                chosen_by = "model"
            else:
                chosen_by = "router (the model named no candidate)"
        log.info("scheduler: %r -> %s (%s)", subtask[:60], ", ".join(n for n, _ in ranking[:3]), chosen_by)
        return Assignment(subtask, ranking, chosen_by, reply)
