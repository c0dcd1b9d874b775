"""An agent that cannot be built here (a resource it needs is not configured) is left out of the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.agents.base import unavailable
from agentlab.agents.code import DRIVE_ENV, SEARCH_ENV
from agentlab.run.episode import router_route


def test_an_agent_missing_its_drive_folder_is_unavailable_until_one_is_set(pool, monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    monkeypatch.delenv(DRIVE_ENV, raising=False)
    monkeypatch.delenv(SEARCH_ENV, raising=False)
    missing = unavailable(pool)
    assert "GoogleDrive" in missing and DRIVE_ENV in missing["GoogleDrive"]
    assert "SheetAgent" not in missing and "Friday" not in missing
    monkeypatch.setenv(DRIVE_ENV, str(tmp_path))
    assert "GoogleDrive" not in unavailable(pool)


def test_the_store_never_routes_to_an_unavailable_agent(pool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(DRIVE_ENV, raising=False)
    route = router_route("embedding", pool)
    acting = route.acting("workspace")  # type: ignore[attr-defined]
    assert "GoogleDrive" not in acting and "SheetAgent" in acting
    monkeypatch.setenv(DRIVE_ENV, str(tmp_path))
    assert "GoogleDrive" in router_route("embedding", pool).acting("workspace")  # type: ignore[attr-defined]


def test_a_clause_plan_never_gives_a_part_to_an_agent_that_cannot_be_built(pool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The executed clause manager once handed a web-search part to Searcher without a search
    endpoint: the step could only end as a harness error. The planner's ``acting`` now leaves it out."""
    from types import SimpleNamespace

    from agentlab.agents.base import RunnableAgents
    from agentlab.metaagent.router import build_router
    from agentlab.teams.clauses import clause_plan
    from agentlab.teams.planning import ManagerOptions, router_planner

    monkeypatch.delenv(SEARCH_ENV, raising=False)
    router = build_router("embedding", pool)
    text = "look up online the current population of Norway, then write it into report.txt"
    unrestricted = clause_plan(text, router).plan
    assert unrestricted and unrestricted[0].agent == "Searcher"  # the part that would have failed
    plan = router_planner(router, None, ManagerOptions(kind="clauses"), acting=RunnableAgents(pool))  # type: ignore[arg-type]
    res = plan(SimpleNamespace(instruction=text, env="workspace"))  # type: ignore[arg-type]
    assert res.plan and len(res.plan) >= 1 and all(step.agent != "Searcher" for step in res.plan)
