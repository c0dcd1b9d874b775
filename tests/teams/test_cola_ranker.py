"""COLA's scheduler ranks with a router the run built (issue #39): built once per run, and a new
run builds its own instead of finding one a module-level cache kept from an earlier run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentlab.metaagent import router as router_module
from agentlab.metaagent.router import Router, RouterShelf
from agentlab.pool import AgentPool
from agentlab.llm.roles import Backends
from agentlab.run import RunSpec, execute
from agentlab.run.episode import ExecOptions
from agentlab.run.worker import EpisodeRecipe, Worker
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.teams.cola.options import ColaOptions

from .conftest import TeamScript, py

TASK = load_task(tasks_dir() / "csv-sales-summary.json")
assert TASK.reference_solution is not None
SOLVE = py(TASK.reference_solution.code)
ONE_STEP = "1. Write the per-region sales summary into report.xlsx"
YES = "Verdict: yes\nReason: report.xlsx holds the summary"


class CoderFirst(Router):
    """Ranks the code agent first, then the rest of the pool (the scheduler keeps those that can act)."""

    name = "coder-first"

    def fit(self, train: Any) -> dict[str, float]:
        return {"seconds": 0.0}

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        names = ["CoderAgent"] + [n for n in self.pool.names if n != "CoderAgent"]
        return [[(n, 1.0 / len(names)) for n in names] for _ in tasks]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path | None]]:
    """Every router the shelves build, by (kind, checkpoint)."""
    calls: list[tuple[str, Path | None]] = []

    def build(kind: str, pool: AgentPool, tokens: Path | None = None, **_: Any) -> Router:
        calls.append((kind, tokens))
        return CoderFirst(pool, progress=False)

    monkeypatch.setattr(router_module, "build_router", build)
    return calls


def test_a_run_builds_the_scheduler_router_once_and_the_next_run_its_own(tmp_path: Path, pool: AgentPool,
                                                                        built: list[tuple[str, Path | None]]) -> None:
    options = ExecOptions(team="cola", max_steps=3, seeds=2, team_settings=ColaOptions())
    for run in ("first", "second"):
        llm = TeamScript(planner=[ONE_STEP] * 2, agent=[SOLVE] * 2, reviewer=[YES] * 2)
        summary = execute(RunSpec(EpisodeRecipe(tmp_path / run, options)), [TASK], worker=Worker(pool, Backends(llm)),
                          progress=False)
        assert summary.ran == 2 and summary.execution_acc == 1.0  # two episodes, both through the scheduler
    assert built == [("embedding", None), ("embedding", None)]  # once per run, not once per process


def test_the_shelf_keeps_one_router_per_kind_and_checkpoint(pool: AgentPool, built: list[tuple[str, Path | None]]) -> None:
    shelf = RouterShelf(pool)
    assert shelf.get("embedding") is shelf.get("embedding")
    assert shelf.get("embedding", Path("tokens")) is not shelf.get("embedding")
    assert RouterShelf(pool).get("embedding") is not shelf.get("embedding")
    assert built == [("embedding", None), ("embedding", Path("tokens")), ("embedding", None)]
