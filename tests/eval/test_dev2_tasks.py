"""The second development set (data/tasks_dev2, issue #38): loads, four workspace tasks in each of
the ten desktop domains, most needing two or more operations (ops.csv), and each task fails on its
start state and passes once its reference solution ran in the sandboxed workspace."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.pool import DOMAINS
from agentlab.tasks.spec import load_tasks

FOLDER = Path(__file__).resolve().parents[2] / "data" / "tasks_dev2"
TASKS = load_tasks(FOLDER)
OPS = {row["id"]: int(row["ops"]) for row in csv.DictReader((FOLDER / "ops.csv").open(encoding="utf-8"))}


def test_forty_workspace_tasks_four_per_desktop_domain_most_with_two_operations():
    assert len(TASKS) == 40 and all(t.env == "workspace" and t.id.startswith(f"{t.domain}-d2-") for t in TASKS)
    assert set(Counter(t.domain for t in TASKS).values()) == {4}
    assert set(Counter(t.domain for t in TASKS)) == set(DOMAINS["desktop"])
    assert set(OPS) == {t.id for t in TASKS} and min(OPS.values()) >= 1
    assert sum(n >= 2 for n in OPS.values()) >= 22


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_start_state_fails_and_reference_solution_passes(task, tmp_path):
    with Workspace(tmp_path / "ws", WorkspaceConfig(timeout_s=30)) as ws:
        task.prepare(ws.root)
        assert task.evaluate(ws.root).score == 0.0
        sol = task.reference_solution
        run = ws.run_python(sol.code) if sol.language == "python" else ws.run_bash(sol.code)
        assert run.ok, run.summary()
        after = task.evaluate(ws.root)
        assert after.success, after.explain()
