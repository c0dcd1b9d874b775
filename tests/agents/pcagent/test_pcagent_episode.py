"""PC-Agent through the episode runner: a pool folder holding a ``runner: pcagent`` document,
a desktop task on the GTK demo app, a scripted model, the evaluator reading the app's state."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop_task import LAUNCHERS, AppLauncher
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.xdisplay import DEMO_APP, SYSTEM_PYTHON, xvfb_available
from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.llm.base import ChatMessage
from agentlab.pool import AgentPool
from agentlab.envs.trajectory import load_trajectory

AS_INTENDED = "Verdict: as intended\nReason: the screen changed as meant."


def _item(messages: list[ChatMessage], pattern: str) -> int:
    m = re.search(r"^\[(\d+)\] " + re.escape(pattern), messages[-1].content, re.M)
    assert m, messages[-1].content
    return int(m.group(1))


def _greet_task() -> ExecTask:
    return ExecTask.model_validate({
        "id": "demo-greet-ada", "instruction": "Greet Ada in the demo app.", "domain": "os", "env": "desktop",
        "apps": ["demo-gtk"], "setup": [{"type": "write_json", "path": "state.json", "value": {"count": 0}}],
        "outputs": ["state.json"],
        "evaluator": {"func": "exact_match", "result": {"type": "json_setting", "path": "state.json", "key": "greeting"},
                      "expected": {"type": "literal", "value": "Hello, Ada!"}},
    })


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_pcagent_document_carries_a_desktop_task_out_through_run_task(tmp_path, monkeypatch, role_scripted,
                                                                        pc_pool_dir) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if not Path(SYSTEM_PYTHON).exists():
        missing_system("the GTK demo needs /usr/bin/python3 with python3-gi")
    # the demo app opened on the task's file: its title is the file name, as LibreOffice's is
    demo = AppLauncher(program=SYSTEM_PYTHON, args=(str(DEMO_APP), "--title", "state.json", "--state"),
                       a11y_app="demo_gtk", install_hint="python3-gi")
    monkeypatch.setitem(LAUNCHERS, "demo-gtk", demo)
    pool = AgentPool.from_dir(pc_pool_dir)
    llm = role_scripted(
        manager=["1. Find the name to greet in the instruction [outputs: name]\n"
                 "2. Type {name} into the Name field and press Greet"],
        decision=['Thought: the instruction names Ada.\nAction: subtask_done(name="Ada")',
                  lambda m: f'Thought: type it.\nAction: type("Ada", {_item(m, "text " + chr(34) + "Name" + chr(34))})',
                  lambda m: f'Thought: greet.\nAction: click({_item(m, "push button " + chr(34) + "Greet" + chr(34))})',
                  "Thought: the greeting shows.\nAction: subtask_done()"],
        reflection=[AS_INTENDED, AS_INTENDED],
        progress=["Progress: typed Ada; Greet is left.", "Progress: typed Ada and pressed Greet."],
    )
    row = run_task(_greet_task(), pool=pool, llm=llm, out_dir=tmp_path / "run", agent="PCTestAgent",
                   options=ExecOptions(max_steps=6, envs=TaskEnvOptions(app_start_timeout_s=60)))
    assert row["error"] is None, row["error"]
    assert (row["success"], row["status"], row["agents"], row["steps"]) == (True, "done", ["PCTestAgent"], 2)
    assert (row["subtasks"], row["subtasks_done"], row["llm_calls"]) == (2, 2, 9)  # 1 manager, 4 decisions, 2+2
    assert "Text on screen (OCR):" in llm.asked("decision")[1]  # active perception is on by default
    assert "Current subtask: Type Ada into the Name field and press Greet" in llm.asked("decision")[1]
    traj = load_trajectory(tmp_path / "run" / row["trajectory"])
    assert traj.meta.extra["runner"] == "pcagent" and traj.meta.status == "done"
    roles = [[r["role"] for r in s.info["roles"]] for s in traj.steps]
    assert roles == [["manager", "decision", "hub"], ["hub", "decision", "reflection", "progress"],
                     ["decision", "reflection", "progress"], ["decision"]]
    assert all((tmp_path / "run" / row["trajectory"] / s.screenshot).is_file() for s in traj.steps if s.screenshot)


class _CalcDecisions:
    """Decision replies computed from the prompt, as a model reading the listing would: the Name Box
    (the text field showing the cursor's cell), jump to A4, type, save, keep the format, done."""

    def __init__(self) -> None:
        self.stage = 0
        self.prompts: list[str] = []

    def __call__(self, messages: list[ChatMessage]) -> str:
        prompt = messages[-1].content
        self.prompts.append(prompt)
        if self.stage == 0:
            self.stage = 1
            return f'Thought: jump to A4.\nAction: type("A4\\n", {_item(messages, "text " + chr(34) + "A1" + chr(34))})'
        if self.stage == 1:
            self.stage = 2
            return 'Thought: type the row.\nAction: type("Total\\t60\\n")'
        if self.stage == 2:
            self.stage = 3
            return 'Thought: save.\nAction: hotkey("ctrl", "s")'
        keep = re.search(r'^\[(\d+)\] push button "Use Excel', prompt, re.M)
        if self.stage == 3 and keep:
            self.stage = 4
            return f"Thought: keep the format.\nAction: click({keep.group(1)})"
        if self.stage == 3:  # the dialog is still opening: a key that does nothing, then look again
            return 'Thought: wait for the dialog.\nAction: hotkey("shift")'
        return "Thought: saved.\nAction: subtask_done()"


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pcagent_completes_a_calc_task_with_ocr_over_a_big_listing(tmp_path, role_scripted, pc_pool_dir) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if not shutil.which("soffice"):
        missing_system("soffice is not installed (apt-get install libreoffice-calc libreoffice-gtk3)")
    task = load_task(tasks_dir() / "calc-enter-total.json")
    policy = _CalcDecisions()
    llm = role_scripted(manager=["1. Type Total into A4 and 60 into B4\n2. Save the file keeping the .xlsx format"],
                        decision=[policy] * 12, reflection=[AS_INTENDED] * 12,
                        progress=[f"Progress: step {i} done." for i in range(12)])
    # (the scripted decision agent finishes the first subtask only after the save; the second
    # subtask then finishes at once)
    row = run_task(task, pool=AgentPool.from_dir(pc_pool_dir), llm=llm, out_dir=tmp_path, agent="PCTestAgent",
                   options=ExecOptions(max_steps=10, envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    traj = load_trajectory(tmp_path / row["trajectory"])
    what = [(s.action, s.error, [(r["role"], r.get("verdict")) for r in s.info["roles"]]) for s in traj.steps]
    assert (row["success"], row["score"], row["subtasks"], row["subtasks_done"]) == (True, 1.0, 2, 2), (row, what)
    first = policy.prompts[0]
    items = [int(n) for n in re.findall(r"^\[(\d+)\] text .* at \(", first, re.M)]
    elements = [int(n) for n in re.findall(r"^\[(\d+)\] ", first.split("Text on screen (OCR):")[0], re.M)]
    assert items and min(items) > max(elements)  # OCR lines are numbered after every element
    assert 'text "item"' in first or 'text "paper"' in first  # cell contents read by OCR
