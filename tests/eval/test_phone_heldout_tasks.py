"""The blind phone held-out sets (data/tasks_phone_heldout and its v2, issue #40): every task loads as a clock
task with a GUI solution, the README lists every task, the folder is an evaluation set (no
synthesized request near one of its instructions is trained on), and every GUI solution replays
on the fake device through `agentlab tasks check --gui`, from a start state that scores 0."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentlab.selfinstruct.calls.leakage import EVAL_SETS
from agentlab.tasks.spec import load_tasks

DATA = Path(__file__).resolve().parents[2] / "data"
SETS = ("tasks_phone_heldout", "tasks_phone_heldout_v2")


@pytest.mark.parametrize("name", SETS)
def test_a_dozen_clock_tasks_each_with_a_gui_solution_and_nothing_an_agent_could_copy(name: str) -> None:
    folder = DATA / name
    tasks = load_tasks(folder)
    assert len(tasks) >= 12
    for t in tasks:
        assert t.env == "phone" and t.domain == "clock" and t.apps == ["com.example.clock"], t.id
        assert t.gui_solution and t.reference_solution is None and t.plan is None and t.agent is None, t.id
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| (clock[a-z]-[a-z0-9-]+) \|", readme, re.M)) == {t.id for t in tasks}
    assert name in EVAL_SETS


@pytest.mark.parametrize("name", SETS)
def test_every_gui_solution_replays_on_the_fake_device(name: str, capsys) -> None:  # type: ignore[no-untyped-def]
    from agentlab.cli import main

    folder = DATA / name
    tasks = load_tasks(folder)
    try:
        main(["tasks", "check", "--gui", "--dir", str(folder)])
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().out
    out = capsys.readouterr().out
    assert f"gui check: {len(tasks)} ok, 0 failed" in out, out
