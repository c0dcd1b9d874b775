"""The blind phone held-out set (data/tasks_phone_heldout, issue #40): every task loads as a clock
task with a GUI solution, the README lists every task, the folder is an evaluation set (no
synthesized request near one of its instructions is trained on), and every GUI solution replays
on the fake device through `agentlab tasks check --gui`, from a start state that scores 0."""

from __future__ import annotations

import re
from pathlib import Path

from agentlab.selfinstruct.calls.leakage import EVAL_SETS
from agentlab.tasks.spec import load_tasks

FOLDER = Path(__file__).resolve().parents[2] / "data" / "tasks_phone_heldout"
TASKS = load_tasks(FOLDER)


def test_a_dozen_clock_tasks_each_with_a_gui_solution_and_nothing_an_agent_could_copy() -> None:
    assert len(TASKS) >= 12
    for t in TASKS:
        assert t.env == "phone" and t.domain == "clock" and t.apps == ["com.example.clock"], t.id
        assert t.gui_solution and t.reference_solution is None and t.plan is None and t.agent is None, t.id
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| (clockh-[a-z0-9-]+) \|", readme, re.M)) == {t.id for t in TASKS}
    assert "tasks_phone_heldout" in EVAL_SETS


def test_every_gui_solution_replays_on_the_fake_device(capsys) -> None:  # type: ignore[no-untyped-def]
    from agentlab.cli import main

    try:
        main(["tasks", "check", "--gui", "--dir", str(FOLDER)])
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().out
    out = capsys.readouterr().out
    assert f"gui check: {len(TASKS)} ok, 0 failed" in out, out
