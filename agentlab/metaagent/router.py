"""The one interface every MetaAgent router implements (AgentToken and all baselines).

A router ranks the agents of a pool for each task; ``route`` takes the top-1 and ``plan``
turns the top-K into a multi-agent plan through the manager prompt (hash-manager mode).
Benchmarks, the CLI and notebooks only talk to :class:`Router`, so every method is
measured through the same front door.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentlab.errors import ConfigError
from agentlab.llm.config import LLMConfig
from agentlab.pool import AgentPool

from agentlab.metaagent.decision import RouteResult

if TYPE_CHECKING:
    from agentlab.metaagent.data import TrainingSet
    from agentlab.metaagent.manager import Manager


class Router(ABC):
    """Ranks a pool's agents for tasks. Subclasses set ``name`` and implement fit/rank."""

    name: ClassVar[str]
    #: In manager mode, put every document into the prompt instead of the top-K (ICL baseline).
    manager_uses_all_documents: ClassVar[bool] = False

    def __init__(self, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> None:
        self.pool = pool
        self.llm = llm or LLMConfig.from_env()
        self.options = options

    @abstractmethod
    def fit(self, train: "TrainingSet") -> dict[str, float]:
        """Train on labelled demonstrations; return metrics (at least ``seconds``)."""

    @abstractmethod
    def rank(
        self, tasks: list[str], states: list[str | None] | None = None
    ) -> list[list[tuple[str, float]]]:
        """For each task, every agent of the pool with its probability, sorted descending."""

    def route(self, tasks: list[str], states: list[str | None] | None = None) -> list[RouteResult]:
        """Top-1 of :meth:`rank` for each task."""
        return [RouteResult(agent=r[0][0] if r else None, ranking=r) for r in self.rank(tasks, states)]

    def plan(
        self,
        tasks: list[str],
        manager: "Manager",
        *,
        k: int = 5,
        states: list[str | None] | None = None,
    ) -> list[RouteResult]:
        """Hash-manager mode: the top-``k`` agents' documents go into the manager prompt."""
        rankings = self.rank(tasks, states)
        out: list[RouteResult] = []
        for i, (task, ranking) in enumerate(zip(tasks, rankings)):
            names = [n for n, _ in ranking] if self.manager_uses_all_documents else [n for n, _ in ranking[:k]]
            docs = [self.pool.get(n) for n in names]
            state = states[i] if states else None
            res = manager.plan(task, docs, state=state)
            res.ranking = ranking
            out.append(res)
        return out

    def save(self, path: Path) -> None:
        raise NotImplementedError(f"the {self.name} router has no trained state to save")

    @classmethod
    def load(cls, path: Path, pool: AgentPool, llm: LLMConfig | None = None) -> "Router":
        raise NotImplementedError(f"the {cls.name} router has no trained state to load")


#: Router kinds and where their classes live (imported lazily: baselines pull in peft etc.).
ROUTERS: dict[str, str] = {
    "agenttoken": "agentlab.metaagent.agenttoken:AgentTokenRouter",
    "icl": "agentlab.metaagent.baselines.icl:ICLRouter",
    "lora": "agentlab.metaagent.baselines.lora:LoRARouter",
    "prompt": "agentlab.metaagent.baselines.prompt_tuning:PromptTuningRouter",
    "embedding": "agentlab.metaagent.baselines.embedding:EmbeddingRouter",
}


def router_class(kind: str) -> type[Router]:
    """The router class for ``kind``; an unknown kind is a :class:`ConfigError`."""
    try:
        target = ROUTERS[kind]
    except KeyError:
        raise ConfigError(f"unknown router '{kind}'; choose one of {', '.join(ROUTERS)}") from None
    module, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"router '{kind}' is not available ({module}:{attr}: {exc})") from None
    return cls
