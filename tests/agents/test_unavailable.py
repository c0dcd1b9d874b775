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
