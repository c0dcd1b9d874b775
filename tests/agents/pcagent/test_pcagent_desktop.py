"""PC-Agent on a real desktop (the GTK demo app under Xvfb) with SCRIPTED role replies: the
reflection verdicts, the hub carrying a value between subtasks, OCR active perception, and the
ablations without the reflection agent and without the manager.

What leaves the screen identical (checked here): a click on the empty desktop outside the app.
A first click on "Reset" at count 0 is *not* identical (the button's hover highlight appears);
a second one is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentlab.agents.base import Solo
from agentlab.agents.base import AgentResult
from agentlab.agents.pcagent.runner import PCAgent
from agentlab.envs.actions.desktop import SelectText
from agentlab.envs.desktop import DesktopEnv
from agentlab.llm.base import ChatMessage
from agentlab.pool.document import AgentDocument
from agentlab.envs.trajectory import Trajectory, TrajectoryRecorder, load_trajectory
from agentlab.experiments.pcagent_metrics import read_episode


def item(prompt: str, pattern: str) -> int:
    """The number of the first listed item whose line matches ``pattern`` (after ``[n] ``)."""
    m = re.search(r"^\[(\d+)\] " + re.escape(pattern), prompt, re.M)
    assert m, f"no item matching {pattern!r} in:\n{prompt}"
    return int(m.group(1))


pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(240)]

ADD, NAME, GREET, ADD_TEXT = 'push button "Add one"', 'text "Name"', 'push button "Greet"', 'text "Add one"'
AS_INTENDED = "Verdict: as intended\nReason: the screen changed as the action meant."


def _run(llm: Any, doc: AgentDocument, env: DesktopEnv, instruction: str, folder: Path,
         max_steps: int = 8, **options: object) -> tuple[AgentResult, Trajectory]:
    rec = TrajectoryRecorder(folder, task=instruction, env="desktop", agent=doc.name)
    res = Solo(PCAgent(doc, options), llm).run(env, instruction, rec, max_steps)
    return res, load_trajectory(folder)


def _roles(traj: Trajectory) -> list[list[str]]:
    return [[r["role"] for r in s.info["roles"]] for s in traj.steps]


def _user(messages: list[ChatMessage]) -> str:
    return messages[-1].content


def test_reflection_says_no_effect_for_a_click_on_nothing_and_asks_only_when_the_screen_changed(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")

    def add_one_after_no_effect(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        assert "Reflection on your last action: no effect: the screen did not change at all" in prompt
        return f'Thought: that spot is empty; press the button.\nAction: click({item(prompt, ADD)})'

    llm = role_scripted(
        decision=["Thought: try the desktop.\nAction: click(900, 600)", add_one_after_no_effect,
                  "Thought: the count is 1.\nAction: subtask_done()"],
        reflection=[AS_INTENDED],
        progress=["Progress: clicked an empty spot, nothing happened; Add one is left.",
                  "Progress: Add one pressed once; nothing is left."],
    )
    res, traj = _run(llm, pc_doc, env, "Press Add one once.", tmp_path / "ep", manager=False, ocr=False)
    assert (res.status, res.steps, res.subtasks, res.subtasks_done, res.error) == ("done", 2, 1, 1, None)
    assert demo_app.wait_for("count", 1)["count"] == 1
    assert res.llm_calls == len(llm.calls) == 6  # 3 decisions, 1 reflection (not 2), 2 progress updates
    assert len(llm.asked("reflection")) == 1 and "The decision agent did: click element" in llm.asked("reflection")[0]
    assert "Reflection on it: no effect" in llm.asked("progress")[0]
    assert "Reflection on it: as intended" in llm.asked("progress")[1]
    assert _roles(traj) == [["decision", "reflection", "progress"], ["decision", "reflection", "progress"], ["decision"]]
    first, second = traj.steps[0].info["roles"], traj.steps[1].info["roles"]
    assert (first[1]["verdict"], first[1]["asked"]) == ("no effect", False)
    assert (second[1]["verdict"], second[1]["asked"]) == ("as intended", True)
    assert first[0] == {"role": "decision", "text": "try the desktop.", "action": "click(900, 600)"}
    assert traj.steps[1].thought == "that spot is empty; press the button."
    assert traj.steps[1].reflection == "Add one pressed once; nothing is left."
    assert traj.steps[-1].done and traj.meta.extra["prompts"]["pcagent/decision"]
    # the paper's recovery: reflection found the click did nothing, and the next action did as meant
    assert (read_episode(traj).recovered, read_episode(traj).problems, read_episode(traj).plan) == (True, 1, None)


def test_the_hub_passes_a_value_from_one_subtask_into_the_next(xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    plan = ("1. Find the name to greet in the instruction [outputs: name]\n"
            "2. Type {name} into the Name field and press Greet")

    def found(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        assert "Current subtask: Find the name to greet in the instruction" in prompt
        assert 'subtask_done(name="<value>")' in prompt  # the outputs it must report
        return 'Thought: the instruction names Ada.\nAction: subtask_done(name="Ada")'

    def type_it(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        assert "Current subtask: Type Ada into the Name field and press Greet" in prompt  # filled by the hub
        return f'Thought: type the name.\nAction: type("Ada", {item(prompt, NAME)})'

    def greet(messages: list[ChatMessage]) -> str:
        return f'Thought: now Greet.\nAction: click({item(_user(messages), GREET)})'

    llm = role_scripted(
        manager=[plan],
        decision=[found, type_it, greet, "Thought: greeted.\nAction: subtask_done()"],
        reflection=[AS_INTENDED, AS_INTENDED],
        progress=["Progress: typed Ada; Greet is left.", "Progress: typed Ada and pressed Greet."],
    )
    res, traj = _run(llm, pc_doc, env, "Greet Ada in the demo app.", tmp_path / "ep", ocr=False)
    assert (res.status, res.steps, res.subtasks, res.subtasks_done) == ("done", 2, 2, 2), res.error
    state = demo_app.wait_for("greeting", "Hello, Ada!")
    assert (state["name"], state["greeting"]) == ("Ada", "Hello, Ada!")
    assert "Instruction: Greet Ada in the demo app." in llm.asked("manager")[0]
    assert _roles(traj) == [["manager", "decision", "hub"], ["hub", "decision", "reflection", "progress"],
                            ["decision", "reflection", "progress"], ["decision"]]
    manager = traj.steps[0].info["roles"][0]
    assert manager["plan"] == ["Find the name to greet in the instruction [outputs: name]",
                               "Type {name} into the Name field and press Greet"] and manager["replanned"] is False
    produced, filled = traj.steps[0].info["roles"][2], traj.steps[1].info["roles"][0]
    assert produced["values"] == filled["values"] == {"name": "Ada"}
    assert filled["text"] == "subtask 2: filled {name} = 'Ada'"
    assert traj.steps[0].info["outputs"] == {"name": "Ada"} and traj.steps[0].action is None
    assert traj.meta.extra["hub"] == {"name": "Ada"} and traj.meta.extra["subtasks_done"] == 2
    reading = read_episode(traj)  # every action as intended: no recovery; the manager's plan as recorded
    assert (reading.recovered, reading.problems, reading.plan) == (False, 0, manager["plan"])


def test_active_perception_lists_ocr_text_and_a_click_and_a_selection_by_text_land(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    seen: list[str] = []

    def click_ocr_text(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        seen.append(prompt)
        assert "Text on screen (OCR):" in prompt and 'text "Count: 0"' in prompt  # a label no element lists
        return f'Thought: the words "Add one".\nAction: click({item(prompt, ADD_TEXT)})'

    def type_name(messages: list[ChatMessage]) -> str:
        return f'Action: type("Ada Lovelace", {item(_user(messages), NAME)})'

    def select(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        seen.append(prompt)
        return 'Thought: select the surname.\nAction: select_text("Lovelace")'

    llm = role_scripted(
        decision=[click_ocr_text, type_name, select, 'Action: type("Byron")', "Action: subtask_done()"],
        reflection=[AS_INTENDED] * 4,
        progress=[f"Progress: step {i} done." for i in range(1, 5)],
    )
    # intention=False: this test is OCR's own match (a misread word must not call for another role)
    res, traj = _run(llm, pc_doc, env, "Press Add one, then write Ada Byron as the name.", tmp_path / "ep",
                     manager=False, intention=False)
    assert (res.status, res.steps) == ("done", 4), (res.error, seen[-1])
    assert demo_app.wait_for("count", 1)["count"] == 1  # the click on the OCR box reached the button
    assert demo_app.wait_for("name", "Ada Byron")["name"] == "Ada Byron", seen[-1]  # the OCR selection was replaced
    click, _, sel, _ = [s.parsed_action() for s in traj.steps if s.action]
    assert click is not None and click.element is None and click.x is not None  # aimed at the box's centre
    assert traj.steps[0].info["ocr_target"]["ocr"] == "Add one"
    assert sel is not None and sel.start is not None and sel.end is not None  # a drag over the OCR words
    # OCR may read the text cursor after the word as "|" ("Lovelace|"); the match ignores it
    assert traj.steps[2].info["ocr_target"]["ocr"].startswith("Lovelace")
    assert traj.steps[2].info["roles"][0]["target"] == traj.steps[2].info["ocr_target"]


def test_without_reflection_and_without_manager_those_roles_are_skipped(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")

    def add(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        assert "Text on screen (OCR)" not in prompt  # ocr=False
        assert "Current subtask: Press Add one once." in prompt  # the instruction is the one subtask
        return f'Action: click({item(prompt, ADD)})'

    def finish(messages: list[ChatMessage]) -> str:
        assert "Reflection on your last action: (no reflection agent in this run)" in _user(messages)
        return "Action: stop()"

    llm = role_scripted(decision=[add, finish], progress=["Progress: pressed Add one."])
    res, traj = _run(llm, pc_doc, env, "Press Add one once.", tmp_path / "ep",
                     manager=False, reflection=False, ocr=False)
    assert (res.status, res.steps, res.subtasks, res.subtasks_done, res.llm_calls) == ("done", 1, 1, 1, 3)
    assert {role for role, _ in llm.calls} == {"decision", "progress"}
    assert _roles(traj) == [["decision", "progress"], ["decision"]]
    assert "Reflection on it: (no reflection agent in this run)" in llm.asked("progress")[0]
    assert read_episode(traj).recovered is None  # no reflection: no recovery figure, not a 0
    assert demo_app.wait_for("count", 1)["count"] == 1


def test_the_intention_agent_finds_a_selection_described_not_quoted_on_the_real_screen(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path) -> None:
    """"select the surname": OCR cannot find those words, so the intention agent is asked where the
    span starts and ends among the OCR lines; the drag it gives selects "Lovelace", which typing replaces."""
    env = DesktopEnv(display=xdisplay, app="demo_gtk")

    def type_name(messages: list[ChatMessage]) -> str:
        return f'Action: type("Ada Lovelace", {item(_user(messages), NAME)})'

    def where(messages: list[ChatMessage]) -> str:
        prompt = _user(messages)
        assert "The decision agent wants to select: the surname" in prompt and "Lovelace" in prompt
        return "Start: Lovelace\nEnd: Lovelace"

    llm = role_scripted(
        decision=[type_name, 'Thought: select the surname.\nAction: select_text("the surname")', 'Action: type("Byron")',
                  "Action: subtask_done()"],
        intention=[where],
        reflection=[AS_INTENDED] * 3,
        progress=[f"Progress: step {i} done." for i in range(1, 4)],
    )
    res, traj = _run(llm, pc_doc, env, "Write Ada Byron as the name.", tmp_path / "ep", manager=False)
    assert (res.status, res.steps) == ("done", 3), res.error
    assert demo_app.wait_for("name", "Ada Byron")["name"] == "Ada Byron"
    sel = traj.steps[1].parsed_action()
    assert isinstance(sel, SelectText) and sel.start is not None and sel.end is not None
    roles = traj.steps[1].info["roles"]
    assert [r["role"] for r in roles] == ["decision", "intention", "reflection", "progress"]
    assert roles[1]["located"] is True and roles[1]["start"] == "Lovelace"
    assert traj.steps[1].info["ocr_target"]["intention"]["start_ocr"].startswith("Lovelace")
