"""App skills on the real applications under Xvfb: a desktop specialist's typed loop calls its
learned skills with values no demonstration used (a scripted model: the loop, not the model, is
under test), the skills replay on Chromium and LibreOffice Calc, and the task's own evaluator
reads the end state. The demonstrations themselves replay in `agentlab skills check`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentlab.agents.gui_skills import load_demos
from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.testing.system import missing_system
from agentlab.envs.trajectory import load_trajectory
from agentlab.envs.xdisplay import xvfb_available
from agentlab.llm.base import Capabilities
from agentlab.llm.testing import ScriptedChat
from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import ExecTask

pytestmark = [pytest.mark.xvfb, pytest.mark.slow, pytest.mark.timeout(600)]


def _needs(binary: str) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason or not shutil.which(binary):
        missing_system(f"no desktop with {binary} here: {reason or binary + ' not installed'}")


def _demo_task(skill: str, **changes) -> ExecTask:  # type: ignore[no-untyped-def]
    demo = next(d for d in load_demos() if d.skill == skill)
    raw = {**demo.task.model_dump(exclude_none=True), **changes, "gui_solution": None}
    return ExecTask.model_validate(raw)


def _skill_steps(out: Path, row: dict) -> list[str]:  # type: ignore[type-arg]
    t = load_trajectory(out / row["trajectory"])
    return [s.info["gui_call"] for s in t.steps if s.info.get("skill")]


def test_browser_skills_follow_a_link_and_download_what_the_request_names(tmp_path: Path, pool) -> None:  # type: ignore[no-untyped-def]
    _needs("chromium")
    task = _demo_task("follow_link", id="skill-use-catering",
                      instruction="Open the Catering page of the bakery site and download the Catering menu there.")
    llm = ScriptedChat(["follow_link('Catering')", "download_link('Catering menu')", "done()"],
                       Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, agent="WebAgent",
                   options=ExecOptions(max_steps=3, envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    assert (row["success"], row["status"], row["route"]) == (True, "done", "gui"), row
    assert _skill_steps(tmp_path, row) == ['follow_link("Catering")', 'download_link("Catering menu")']
    grammar = llm.params[0].grammar
    # Chromium has a fitted skill prior (data/gui_priors/chrome): its skills come first, the GUI
    # operations only once no skill fits or every ask had one
    assert grammar is not None and {"follow_link", "download_link"} <= set(grammar.tools)
    assert "click" not in grammar.tools


def test_a_skill_scrolls_to_an_element_below_the_fold(tmp_path: Path, pool) -> None:  # type: ignore[no-untyped-def]
    """toggle_setting was demonstrated on a switch in view; Chromium's settings search for "show"
    puts the "Show home button" switch below the fold, so the skill looks for it by scrolling (and
    the accessibility walk enters the page's container that scrolled out of view, which Chromium
    marks as not showing), then switches it: the task's own evaluator reads the profile."""
    _needs("chromium")
    from agentlab.tasks.spec import load_task, tasks_dir

    task = load_task(tasks_dir() / "chrome-g-show-home-button.json").model_copy(update={"gui_solution": None})
    llm = ScriptedChat(["toggle_setting('show')", "done()"], Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, agent="ChromeAgent",
                   options=ExecOptions(max_steps=2, runner_options={"route": "gui"},
                                       envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    assert (row["success"], row["route"]) == (True, "gui"), row
    step = next(s for s in load_trajectory(tmp_path / row["trajectory"]).steps if s.info.get("skill"))
    assert "skill_error" not in step.info and any(a.startswith("scroll(") for a in step.info["expanded"]), step.info


def test_a_drags_destination_is_grounded_on_the_screen_and_one_name_for_two_is_ruled_out(tmp_path: Path, pool) -> None:  # type: ignore[no-untyped-def]
    """move_to_folder's folder is found on the file manager's screen as its file is: the embedded
    model's run of words ("paperwork folder") is grounded on the cell 'paperwork'. A call whose two
    names become one once grounded stops before acting, and the name it found is then no longer
    offered for the other parameter."""
    _needs("thunar")
    task = _demo_task("move_to_folder", id="skill-use-paperwork")
    llm = ScriptedChat(["move_to_folder('paperwork', 'paperwork folder')",
                        "move_to_folder('tax-return-2024.txt', 'paperwork folder')", "done()"],
                       Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, agent="OSAgent",
                   options=ExecOptions(max_steps=3, runner_options={"route": "gui", "stop_after_skills": False},
                                       envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    steps = [s for s in load_trajectory(tmp_path / row["trajectory"]).steps if s.info.get("skill")]
    assert "nothing would change" in steps[0].info["skill_error"] and steps[0].info["ruled_out"] == {"file": "paperwork"}
    assert steps[1].info["grounded"] == {"folder": "paperwork"} and "skill_error" not in steps[1].info
    assert (row["success"], row["route"]) == (True, "gui"), row
    offered = llm.params[1].grammar.tools["move_to_folder"]
    assert offered[0] is not None and "'paperwork'" not in offered[0]


def test_spreadsheet_skills_set_another_cell_and_save_keeping_the_format(tmp_path: Path, pool) -> None:  # type: ignore[no-untyped-def]
    _needs("soffice")
    evaluator = {"func": ["number_close", "number_close"], "conj": "and",
                 "result": [{"type": "xlsx_cell", "path": "stock.xlsx", "sheet": "Stock", "cell": "B4"},
                            {"type": "xlsx_cell", "path": "stock.xlsx", "sheet": "Stock", "cell": "C3"}],
                 "expected": [{"type": "literal", "value": 99}, {"type": "literal", "value": 7}]}
    task = _demo_task("set_cell", id="skill-use-b4", instruction="Set B4 in stock.xlsx to 99 and save it as xlsx.",
                      evaluator=json.loads(json.dumps(evaluator)))
    llm = ScriptedChat(["set_cell('B4', '99')", "save_keep_format()", "done()"], Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, agent="CalcAgent",
                   options=ExecOptions(max_steps=3, runner_options={"route": "gui"},
                                       envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    assert (row["success"], row["route"]) == (True, "gui"), row
    # the model's save_keep_format() is not asked for: the app saves once its one operation ran
    assert _skill_steps(tmp_path, row) == ['set_cell("B4", "99")', "save_keep_format()"]
    assert [s.info.get("auto_finish") for s in load_trajectory(tmp_path / row["trajectory"]).steps if s.info.get("skill")] == [
        None, "save_keep_format"]


def test_a_spreadsheet_edit_the_model_never_saves_is_saved_as_the_episode_ends(tmp_path: Path, pool) -> None:  # type: ignore[no-untyped-def]
    """The request's one operation ran as a skill and the model said nothing of saving: the app's
    finishing skill (its save in the file's own format) runs once and the episode ends; with
    ``save_on_end`` off the same edit stays in the window and the file is judged unchanged."""
    _needs("soffice")
    evaluator = {"func": "number_close", "result": {"type": "xlsx_cell", "path": "stock.xlsx", "sheet": "Stock", "cell": "B4"},
                 "expected": {"type": "literal", "value": 77}}
    task = _demo_task("set_cell", id="skill-use-b4-unsaved", instruction="Put 77 into B4 of stock.xlsx.",
                      evaluator=json.loads(json.dumps(evaluator)))
    for save_on_end, solved in ((True, True), (False, False)):
        out = tmp_path / str(save_on_end)
        llm = ScriptedChat(["set_cell('B4', '77')", "done()"], Capabilities(plan_grammar=True))
        row = run_task(task, pool=pool, llm=llm, out_dir=out, agent="CalcAgent",
                       options=ExecOptions(max_steps=3, runner_options={"route": "gui", "save_on_end": save_on_end},
                                           envs=TaskEnvOptions(app_start_timeout_s=240)))
        assert row["error"] is None, row["error"]
        assert (row["success"], row["status"]) == (solved, "done"), row
        steps = load_trajectory(out / row["trajectory"]).steps
        finishes = [s.info["gui_call"] for s in steps if s.info.get("auto_finish")]
        assert finishes == (["save_keep_format()"] if save_on_end else [])
        # either way the episode ended on its own once the request's one ask had its skill (only the
        # first question was asked); without save_on_end nothing saved the edit
        assert len(llm.prompts) == 1
        # the save is the deployment's: the model is not offered it (it is, with save_on_end off)
        grammar = llm.params[0].grammar
        assert grammar is not None and ("save_keep_format" in grammar.tools) is not save_on_end


def _desktop_demos() -> list:  # type: ignore[type-arg]
    return [d for d in load_demos() if d.task.env == "desktop"]


@pytest.mark.parametrize("demo", _desktop_demos(), ids=lambda d: f"{d.app}.{d.skill}")
def test_every_desktop_demonstration_replays_on_its_application(demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`agentlab skills check`, one demonstration per test: the start state fails its checker, the
    replayed steps make it pass (a skill whose application changed its menus fails here first)."""
    from agentlab.agents.gui_skills import check_demo

    _needs({"calc": "soffice", "writer": "soffice", "impress": "soffice", "chrome": "chromium", "gimp": "gimp",
            "thunderbird": "thunderbird", "vlc": "vlc", "os": "thunar"}.get(demo.app, "true"))
    ok, line = check_demo(demo, tmp_path / demo.skill)
    assert ok, line
