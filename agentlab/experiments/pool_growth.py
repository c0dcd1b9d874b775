"""The Figure 3 analog: routing accuracy as agents join the pool, in several addition orders.

The pool grows one agent at a time in seeded random orders, all-GUI-first and all-CLI-first.
At each size the router is retrained from scratch on the current agents' demonstrations and
evaluated on *all* tasks; a task whose application no current agent serves counts as wrong,
so accuracy is bounded by the domain coverage, which is recorded next to it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import ConfigError
from agentlab.eval.metrics import routing_accuracy
from agentlab.metaagent.data import load_training_set
from agentlab.metaagent.router import router_class
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.eval.benchmarks import BenchmarkTask

log = logging.getLogger(__name__)

#: Names of the two interface-first orders in :attr:`PoolGrowth.accuracy`.
GUI_FIRST, CLI_FIRST = "GUI first", "CLI first"


def addition_order(pool: AgentPool, strategy: str, seed: int = 0) -> list[str]:
    """The order in which agents join the pool for a scaling curve (the Figure 3 analog).

    ``random``: a seeded shuffle; ``gui_first`` / ``cli_first``: all agents of one interface
    (each group shuffled with the same seed) before the other.
    """
    rng = random.Random(seed)
    names = pool.names
    if strategy == "random":
        order = names[:]
        rng.shuffle(order)
        return order
    firsts = {"gui_first": "GUI", "cli_first": "CLI"}
    if strategy not in firsts:
        raise ConfigError(f"unknown addition strategy '{strategy}'; use random, gui_first or cli_first")
    first = [n for n in names if pool.get(n).interface == firsts[strategy]]
    rest = [n for n in names if n not in first]
    rng.shuffle(first)
    rng.shuffle(rest)
    return first + rest




def domain_coverage(agents: Sequence[str], pool: AgentPool, gold_domains: Sequence[str]) -> float:
    """Share of tasks whose domain some agent of ``agents`` serves (the ceiling of routing accuracy)."""
    served = {pool.get(a).domain for a in agents}
    return sum(d in served for d in gold_domains) / len(gold_domains) if gold_domains else 0.0


class PoolGrowthConfig(BaseModel):
    """The router retrained at each pool size, the sizes, and how many random orders."""

    model_config = ConfigDict(extra="forbid")

    router: str = "agenttoken"
    #: constructor options of that router (progress bars are always off)
    router_options: dict[str, Any] = Field(default_factory=dict)
    #: pool sizes on the x axis (capped at the pool size, deduplicated, sorted)
    points: list[int] = Field(default_factory=lambda: [1, 5, 10, 15, 20, 30])
    random_orders: int = Field(3, ge=1)
    #: training demonstrations per agent at every size
    per_agent: int | None = 12
    seed: int = 0


@dataclass
class PoolGrowth:
    """Accuracy and coverage per order (``"random (seed s)"``, ``"GUI first"``, ``"CLI first"``) at each size."""

    router: str
    points: list[int]
    accuracy: dict[str, list[float]]
    coverage: dict[str, list[float]]
    fits: int
    seconds: float

    @property
    def random_names(self) -> list[str]:
        return [n for n in self.accuracy if n.startswith("random")]

    def random_accuracy(self) -> np.ndarray:
        """``[orders, points]`` accuracy of the random orders."""
        return np.array([self.accuracy[n] for n in self.random_names])

    def random_coverage(self) -> np.ndarray:
        return np.array([self.coverage[n] for n in self.random_names])


def orders(pool: AgentPool, random_orders: int, seed: int = 0) -> dict[str, list[str]]:
    """The addition orders of one study: ``random_orders`` seeded shuffles, then GUI first and CLI first."""
    out = {f"random (seed {s})": addition_order(pool, "random", seed=seed + s) for s in range(random_orders)}
    out |= {GUI_FIRST: addition_order(pool, "gui_first", seed=seed), CLI_FIRST: addition_order(pool, "cli_first", seed=seed)}
    return out


def run(pool: AgentPool, tasks: Sequence[BenchmarkTask], config: PoolGrowthConfig) -> PoolGrowth:
    """Retrain ``config.router`` on each prefix of each order and route all ``tasks``."""
    gold = [t.domain or "" for t in tasks]
    texts = [t.instruction for t in tasks]
    points = sorted({min(int(k), len(pool)) for k in config.points})
    cls = router_class(config.router)

    def accuracy_with(names: list[str]) -> float:
        sub = pool.subset(names)
        router = cls(sub, **{**config.router_options, "progress": False})
        router.fit(load_training_set(sub, per_agent=config.per_agent, seed=config.seed))
        return routing_accuracy([x.agent for x in router.route(texts)], gold, sub).accuracy

    accuracy: dict[str, list[float]] = {}
    coverage: dict[str, list[float]] = {}
    t0 = time.perf_counter()
    for name, order in orders(pool, config.random_orders, config.seed).items():
        accuracy[name] = [accuracy_with(order[:k]) for k in points]
        coverage[name] = [domain_coverage(order[:k], pool, gold) for k in points]
        log.info("%s: %s", name, ", ".join(f"{k}:{a:.0%}" for k, a in zip(points, accuracy[name])))
    seconds = time.perf_counter() - t0
    fits = len(accuracy) * len(points)
    log.info("%d fits in %.0f s", fits, seconds)
    return PoolGrowth(config.router, points, accuracy, coverage, fits, seconds)
