"""The typed episode row (agentlab/record/row.py): old run folders still read, rows round-trip, and
nothing outside the row module writes a row's fields by key.

``tests/fixtures/run_484eadd/`` is a run folder written by the code of commit 484eadd (before the
typed row; the episodes left out): ``agentlab exec``'s suite over a solved, a failed and a
harness-error single-agent task, a gold two-step plan, then a COLA task resumed into the same folder.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentlab
from agentlab.cli import exit_status
from agentlab.fileio import read_jsonl
from agentlab.record.row import PARTS, ColaPart, EpisodeRow, PlanPart, rebased

OLD_RUN = Path(__file__).parent / "fixtures" / "run_484eadd"
OLD_ROWS = read_jsonl(OLD_RUN / "results.jsonl", tolerate_torn_tail=False)


def test_every_old_row_round_trips_to_the_same_json_fields() -> None:
    assert len(OLD_ROWS) == 5
    for line, d in enumerate(OLD_ROWS, 1):
        row = EpisodeRow.load(d, line)
        assert row.to_json() == d and row.line == line
        assert not row.model_extra, f"{d['id']}: fields the row does not type: {sorted(row.model_extra or {})}"


def test_each_team_s_fields_are_read_into_its_typed_part() -> None:
    rows = {d["id"]: EpisodeRow.load(d) for d in OLD_ROWS}
    assert rows["csv-sales-summary"].team_part is None and rows["csv-sales-summary"].success is True
    assert rows["csv-sales-summary-unreachable"].harness_error and "unreachable" in str(rows["csv-sales-summary-unreachable"].error)
    plan = rows["multi-sales-report"].part(PlanPart)
    assert plan is not None and type(plan) is PlanPart and plan.plan_source == "gold"
    assert [s["agent"] for s in plan.step_outcomes] == ["SheetAgent", "WordAgent"]
    cola = rows["csv-sales-summary-cola"].part(ColaPart)
    assert cola is not None and (cola.reviews, cola.questions, cola.team_status) == (1, 0, "done")
    assert rows["csv-sales-summary-cola"].part(PlanPart) is cola  # a COLA row is a plan row too
    assert rows["multi-sales-report"].part(ColaPart) is None


def test_a_row_set_by_attribute_writes_only_what_was_set() -> None:
    row = EpisodeRow(id="t", success=False, error=None)
    row.status, row.team_part = "no_plan", PlanPart(plan=[], step_outcomes=[])
    row.team_part.plan_error = "the manager wrote no plan"
    assert row.to_json() == {"id": "t", "success": False, "error": None, "status": "no_plan", "plan": [],
                             "step_outcomes": [], "plan_error": "the manager wrote no plan"}


def test_a_forged_row_reads_with_its_mistyped_fields_absent_and_its_unknown_ones_kept() -> None:
    row = EpisodeRow.load({"id": 7, "success": "yes", "steps": True, "score": "1", "agents": "SheetAgent",
                           "plan": "not a list", "plan_source": "gold", "arm": "hybrid"}, 3)
    assert (row.id, row.success, row.steps, row.score, row.agents) == ("7", None, None, None, ["SheetAgent"])
    part = row.part(PlanPart)
    assert part is not None and part.plan == [] and part.plan_source == "gold"
    assert row.to_json()["arm"] == "hybrid"
    assert EpisodeRow.load({"status": "done"}, 4).id == "(row 4 without an id)"


_FIELDS = set(EpisodeRow.model_fields) | {f for p in PARTS for f in p.model_fields}
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(base=st.sampled_from(OLD_ROWS),
       extra=st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in _FIELDS), _JSON, max_size=4))
def test_keys_a_newer_or_older_version_wrote_survive_a_read_and_a_write(base: dict[str, Any], extra: dict[str, Any]) -> None:
    d = base | extra
    assert EpisodeRow.load(d).to_json() == d


def test_a_row_rebased_for_a_study_s_arm_changes_only_its_trajectory_and_router() -> None:
    d = OLD_ROWS[3]
    moved = rebased(d, "../../by_agent/", router="hybrid")
    assert moved == d | {"trajectory": f"../../by_agent/{d['trajectory']}", "router": "hybrid"}


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    return Path(shutil.copytree(OLD_RUN, tmp_path / "old"))


def test_the_old_folder_loads_in_view(old_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(["view", str(old_run)]) == 0, capsys.readouterr().err
    index = (old_run / "view" / "index.html").read_text()
    for d in OLD_ROWS:
        assert d["id"] in index


def test_the_old_folder_loads_in_report(old_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(["report", str(old_run)]) == 0, capsys.readouterr().err
    md = (old_run / "report.md").read_text()
    assert "| overall | 5 | 1 | 5 | 60.0 |" in md and "### Harness errors: 1" in md


#: a write of a row's field by key (``row["status"] = ...``), or a row's ``update(``
_WRITES = re.compile(r"\b\w*(?:row|kept)\w*(?:\[\s*[\"'](" + "|".join(sorted(_FIELDS)) + r")[\"']\s*\]\s*=(?!=)|\.update\()")


def test_no_module_but_the_row_s_own_writes_a_row_by_key() -> None:
    package = Path(agentlab.__file__).parent
    found = [f"{p.relative_to(package)}:{n}: {line.strip()}"
             for p in sorted(package.rglob("*.py")) if p != package / "record" / "row.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if _WRITES.search(line)]
    assert not found, "set the row's attributes instead (agentlab/record/row.py):\n" + "\n".join(found)
