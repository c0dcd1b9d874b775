"""GUI reference solutions: the step model, how a step finds its element and becomes a desktop
action, which applications have GUI-solved tasks, and one real replay under Xvfb (GIMP: its
popup menus only show through the walker's open-menu rule, and its dialogs only get keys
through the driver's click-to-focus)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agentlab.envs.testing.system import missing_system
from pydantic import ValidationError

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.base import Element, Observation
from agentlab.envs.gui_replay import action_for, check_task_gui, find
from agentlab.envs.xdisplay import xvfb_available
from agentlab.tasks.gui_solution import GuiStep, Target
from agentlab.tasks.spec import load_task, load_tasks, tasks_dir


def _el(n: int, role: str, text: str, y: int = 0) -> Element:
    return Element(id=n, bbox=(0, y, 50, y + 20), role=role, text=text, resource_id=None, clickable=True)


SCREEN = Observation(screenshot=None, elements=[
    _el(1, "menu", "File"), _el(2, "menu item", "Overwrite logo.png", 30),
    _el(3, "push button", "Export", 400), _el(4, "push button", "Export", 600),
    _el(5, "spin button", "640", 300)])


def test_a_step_holds_exactly_one_action() -> None:
    assert GuiStep.model_validate({"click": {"role": "menu", "name": "File"}}).action == "click"
    with pytest.raises(ValidationError, match="exactly one"):
        GuiStep.model_validate({"click": {"name": "File"}, "key": "ctrl+s"})
    with pytest.raises(ValidationError, match="'into' goes with 'type'"):
        GuiStep.model_validate({"key": "ctrl+a", "into": {"name": "A1"}})
    with pytest.raises(ValidationError, match="needs a role"):
        Target.model_validate({})


def test_a_target_finds_its_element_by_role_name_pattern_and_order() -> None:
    assert find(SCREEN, Target(role="menu item", pattern="Overwrite .*")).id == 2  # type: ignore[union-attr]
    assert find(SCREEN, Target(role="push button", name="Export")).id == 3  # type: ignore[union-attr]
    assert find(SCREEN, Target(role="push button", name="Export", nth=-1)).id == 4  # type: ignore[union-attr]
    assert find(SCREEN, Target(role="push button", name="Export", nth=2)) is None
    assert find(SCREEN, Target(role="menu", name="Edit")) is None


def test_steps_become_desktop_actions() -> None:
    def call(step: dict) -> str | None:
        action = action_for(GuiStep.model_validate(step), SCREEN)
        return None if action is None else action.to_call()

    assert call({"click": {"role": "menu", "name": "File"}}) == "click(1)"
    assert call({"type": "320\t", "into": {"role": "spin button", "name": "640"}}) == 'type("320\\t", element=5)'
    assert call({"key": "ctrl+a"}) == 'hotkey("ctrl", "a")'
    assert call({"click": {"role": "menu", "name": "Edit"}}) is None  # not on this screen
    assert call({"sleep": 1}) is None


def test_a_check_never_starts_on_what_an_earlier_one_left(tmp_path: Path) -> None:
    """A replay's files (an exported image, a recovery file) would be the next check's start state."""
    from agentlab.envs.gui_replay import fresh_folder

    folder = tmp_path / "calc-set_cell"
    assert fresh_folder(folder) == folder
    folder.mkdir()
    assert fresh_folder(folder) == folder  # empty: nothing left in it
    (folder / "stock.xlsx").write_bytes(b"x")
    assert fresh_folder(folder) == tmp_path / "calc-set_cell-2"
    (tmp_path / "calc-set_cell-2").mkdir()
    assert fresh_folder(folder) == tmp_path / "calc-set_cell-3"


def test_each_new_desktop_application_has_five_gui_solved_tasks() -> None:
    solved = Counter(app for t in load_tasks(tasks_dir()) if t.env == "desktop" and t.gui_solution
                     for app in t.apps)
    for app in ("chromium", "thunderbird", "vlc", "gimp"):
        assert solved[app] >= 5, (app, solved)


def test_ground_truth_sends_each_desktop_task_to_a_gui_agent_of_its_application() -> None:
    from agentlab.metaagent.ground_truth import gt_agent
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    agents = {a.name: a for a in pool.agents}
    routed: Counter[str] = Counter()
    for task in load_tasks(tasks_dir()):
        if task.env != "desktop":
            continue
        agent = agents[gt_agent(task, pool)]
        assert agent.interface == "GUI" and agent.platform == "desktop", (task.id, agent.name)
        # multi-application tasks go to a general GUI agent (Agent S2), the rest to their own
        assert agent.domain == (task.domain if task.domain != "multi_apps" else "general"), (task.id, agent.name)
        routed[agent.name] += 1
    # every GUI agent of one application has tasks to act on; VS Code has no GUI here
    # (not in Debian): it stays a workspace domain (docs/desktop.md)
    for agent in pool.agents:
        if agent.platform == "desktop" and agent.interface == "GUI" and agent.domain not in ("general", "vscode"):
            assert routed[agent.name] >= 3, (agent.name, routed)


def _one_task_per_application() -> list[str]:
    from agentlab.experiments.desktop_apps import DesktopAppsConfig, gui_tasks

    ids = [tasks[0].id for tasks in gui_tasks(DesktopAppsConfig(tasks_per_app=1)).values()]
    # GIMP's sample is the scale task: a popup menu (Image > Scale Image...), keys typed into a dialog, a save
    return ["gimp-g-scale-banner" if i.startswith("gimp-") else i for i in ids]


@pytest.mark.slow
@pytest.mark.xvfb
@pytest.mark.timeout(300)
@pytest.mark.parametrize("task_id", _one_task_per_application())
def test_one_task_of_each_application_replays(task_id: str, tmp_path: Path) -> None:
    """A sample of ``agentlab tasks check --gui`` (which replays them all): every launcher opens
    its application, the replay solves the task, and its state reaches the disk."""
    task = load_task(tasks_dir() / f"{task_id}.json")
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    from agentlab.envs.launchers import LAUNCHERS, installed

    missing = [a for a in task.apps if a in LAUNCHERS and not installed(LAUNCHERS[a])]
    if missing:
        missing_system(f"not installed: {', '.join(missing)} (scripts/sysdeps.sh)")
    check = check_task_gui(task, tmp_path / "episode")
    assert check.error is None and check.ok, check.line()
    assert check.start == 0.0 and check.solved == 1.0
    assert check.steps == len(task.gui_solution) and check.a11y_nodes > 0


@pytest.mark.xvfb
@pytest.mark.timeout(300)
def test_a_recorded_replay_is_an_episode_the_inspector_reads(tmp_path: Path) -> None:
    """Notebook 05's Chromium replay: every action of the GUI solution is a recorded step with
    the screen it acted on, and the episode's end says whether the task was solved."""
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    from agentlab.experiments.desktop_apps import record_gui_check
    from agentlab.envs.launchers import LAUNCHERS, installed
    from agentlab.envs.trajectory import load_trajectory

    task = load_task(tasks_dir() / "chrome-g-show-home-button.json")
    if not all(installed(LAUNCHERS[a]) for a in task.apps if a in LAUNCHERS):
        missing_system("chromium is not installed (scripts/sysdeps.sh)")
    check = record_gui_check(task, tmp_path / "episode")
    assert check.ok, check.line()
    traj = load_trajectory(tmp_path / "episode" / "replay")
    acting = [s for s in task.gui_solution if s.action not in ("wait", "gone") and s.sleep is None]
    assert len(traj.steps) == len(acting) and all(s.screenshot for s in traj.steps)
    assert traj.meta.status == "done" and traj.meta.extra["solved"] == 1.0
