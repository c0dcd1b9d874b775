"""The routing table's two options that change who may take a task: the device and the store's policy."""

from __future__ import annotations

from typing import Any

from agentlab.eval.benchmarks import BenchmarkTask
from agentlab.experiments.routing_table import score_set
from agentlab.metaagent.router import Router
from agentlab.pool import AgentPool


class Fixed(Router):
    """Ranks the phone's shopping app first, then a generalist, then the desktop's specialists."""

    name = "fixed"

    def fit(self, train: Any) -> dict[str, float]:
        return {"seconds": 0.0}

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        return [[("TemuAgent", 0.4), ("PCAgent", 0.3), ("ChromeAgent", 0.2), ("SheetAgent", 0.1)] for _ in tasks]


def _task(i: int, text: str, domain: str) -> BenchmarkTask:
    return BenchmarkTask(f"t{i}", text, "osworld", domain, (domain,), domain, platform="desktop")


def test_device_and_store_policy_change_who_takes_the_task(pool: AgentPool) -> None:
    tasks = [_task(1, "Browse the shop for toys and sort them by price", "chrome"),
             _task(2, "Copy the totals from report.docx into budget.xlsx", "calc")]
    sub = pool.subset(["TemuAgent", "PCAgent", "ChromeAgent", "SheetAgent", "WordAgent"])
    router = Fixed(sub)
    picks = lambda **kw: [r.agent for r in score_set(router, tasks, sub, **kw).results]  # noqa: E731
    assert picks() == ["TemuAgent", "TemuAgent"]  # open: every agent competes
    assert picks(device_aware=True) == ["PCAgent", "PCAgent"]  # the desktop's best: here a generalist
    # the store: specialists first, the generalist only for the request naming two applications
    assert picks(device_aware=True, policy="store") == ["ChromeAgent", "PCAgent"]
    assert picks(policy="store") == ["TemuAgent", "PCAgent"]  # without the device a phone specialist may win
