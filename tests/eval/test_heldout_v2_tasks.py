"""The held-out set v2 (data/tasks_heldout_v2, issue #38): written blind, loads, covers the ten desktop
domains with 6+ workspace tasks each, at least half need two or more operations (ops.csv, and the
README's table says the same), every instruction names its outputs, and each task fails on its start
state and passes once its reference solution ran in the sandboxed workspace."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.pool import DOMAINS
from agentlab.tasks.spec import load_tasks

FOLDER = Path(__file__).resolve().parents[2] / "data" / "tasks_heldout_v2"
TASKS = load_tasks(FOLDER)
OPS = {row["id"]: row for row in csv.DictReader((FOLDER / "ops.csv").open(encoding="utf-8"))}


def test_sixty_plus_workspace_tasks_over_the_ten_desktop_domains():
    assert len(TASKS) >= 60
    assert all(t.env == "workspace" and t.plan is None and t.agent is None for t in TASKS)
    assert all(t.id.startswith(f"{t.domain}-b-") for t in TASKS)
    per_domain = Counter(t.domain for t in TASKS)
    assert set(per_domain) == set(DOMAINS["desktop"]) and min(per_domain.values()) >= 6, per_domain
    assert all(t.reference_solution is not None for t in TASKS)


def test_ops_csv_marks_every_task_and_half_need_two_or_more_operations():
    assert set(OPS) == {t.id for t in TASKS}
    assert all(OPS[t.id]["domain"] == t.domain and int(OPS[t.id]["ops"]) >= 1 for t in TASKS)
    multi = sum(int(r["ops"]) >= 2 for r in OPS.values())
    assert 2 * multi >= len(TASKS), f"only {multi} of {len(TASKS)} tasks need two or more operations"


def test_the_readme_table_matches_the_tasks():
    table = {m.group(1): tuple(map(int, m.group(2, 3, 4))) for m in
             re.finditer(r"^\| (\w+) \| (\d+) \| (\d+) \| (\d+) \|$", (FOLDER / "README.md").read_text(encoding="utf-8"), re.M)}
    for domain in DOMAINS["desktop"]:
        rows = [r for r in OPS.values() if r["domain"] == domain]
        single = sum(int(r["ops"]) == 1 for r in rows)
        assert table[domain] == (len(rows), single, len(rows) - single), domain


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_instruction_names_every_output_and_setup_is_small(task):
    for out in task.outputs:
        assert out in task.instruction, f"{task.id}: the instruction never names the output {out}"
    assert task.outputs, f"{task.id}: no outputs"
    assert len(json.dumps(task.setup)) < 4000, f"{task.id}: keep start files small (use setup writers)"


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_start_state_fails_and_reference_solution_passes(task, tmp_path):
    with Workspace(tmp_path / "ws", WorkspaceConfig(timeout_s=30)) as ws:
        task.prepare(ws.root)
        before = task.evaluate(ws.root)
        assert before.score == 0.0, before.explain()
        sol = task.reference_solution
        run = ws.run_python(sol.code) if sol.language == "python" else ws.run_bash(sol.code)
        assert run.ok, run.summary()
        ws.check_outputs(task.outputs)
        after = task.evaluate(ws.root)
        assert after.success, after.explain()
