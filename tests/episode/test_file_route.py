"""A desktop GUI specialist's file route (issue #40): where the task's state lives in a file a
toolkit can change, the specialist stops the application and its workspace specialist edits the
files; the row says which path it took. End to end under Xvfb with LibreOffice Calc, and at the
unit level with a stand-in desktop."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentlab.agents.appagent.runner import GuiRunner
from agentlab.agents.base import build_agent
from agentlab.agents.context import Models, RunContext
from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.testing.system import missing_system
from agentlab.envs.trajectory import TrajectoryRecorder
from agentlab.envs.xdisplay import xvfb_available
from agentlab.errors import ConfigError
from agentlab.llm.base import Capabilities
from agentlab.llm.testing import ScriptedChat as Scripted
from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import load_task, tasks_dir

CALLS = "set_cell('budget.xlsx', 'Budget', 'A4', 'Total')\nset_cell('budget.xlsx', 'Budget', 'B4', '60')\ndone()"


class StandInDesktop:
    """What the GUI runner reads of a desktop opened for a task: the files folder and the call
    that stops the applications (it records when it was called)."""

    def __init__(self, files: Path) -> None:
        self.task_files = files
        self.released: list[int] = []
        self.llm: Scripted | None = None

    def release_files(self) -> None:
        self.released.append(len(self.llm.params) if self.llm is not None else 0)


def _budget(folder: Path) -> Path:
    import openpyxl

    folder.mkdir(parents=True, exist_ok=True)
    wb = openpyxl.Workbook()
    wb.active.title = "Budget"
    for row in (["item", "cost"], ["paper", 10], ["ink", 50]):
        wb.active.append(row)
    wb.save(folder / "budget.xlsx")
    return folder


def test_the_file_route_stops_the_app_first_and_its_specialist_edits_the_files(tmp_path, pool) -> None:
    import openpyxl

    files = _budget(tmp_path / "files")
    desktop = StandInDesktop(files)
    llm = Scripted([CALLS], Capabilities(plan_grammar=True))
    desktop.llm = llm
    agent = build_agent(pool.get("CalcAgent"))
    assert isinstance(agent, GuiRunner) and agent.file_agent == "SheetAgent" and agent.route == "auto"
    ctx = RunContext(Models(llm), TrajectoryRecorder(tmp_path / "episode"), max_steps=2)
    res = agent.run(desktop, "In budget.xlsx, put Total in A4 and 60 in B4.", ctx)  # type: ignore[arg-type]
    assert (res.route, res.status) == ("file", "done")
    assert desktop.released == [0]  # the application was stopped before the model was asked anything
    ws = openpyxl.load_workbook(files / "budget.xlsx").active
    assert (ws["A4"].value, ws["B4"].value) == ("Total", 60)
    assert llm.params[0].grammar is not None and "set_cell" in llm.params[0].grammar.tools  # the toolkit's grammar
    assert ctx.recorder.meta.extra["route"] == {"route": "file", "file_agent": "SheetAgent"}


def test_auto_takes_the_file_route_only_where_the_toolkit_can_act(tmp_path, pool) -> None:
    sheets = GuiRunner(pool.get("CalcAgent"), {"file_agent": "SheetAgent"}).specialist
    assert sheets is not None
    assert sheets.can_act_on(_budget(tmp_path / "a"), "Put Total in A4 of budget.xlsx")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "notes.txt").write_text("nothing a spreadsheet tool reads\n")
    assert not sheets.can_act_on(tmp_path / "b", "Freeze the first row")


def test_route_options_are_checked_in_one_line(pool) -> None:
    doc = pool.get("CalcAgent")
    with pytest.raises(ConfigError, match="route: 'sideways' is not one of auto, gui, file") as err:
        GuiRunner(doc, {"route": "sideways"})
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="needs runner_options.file_agent"):
        GuiRunner(doc, {"route": "file", "file_agent": None})
    # a file agent that is not there (or not a tool specialist) is refused when the agent is built
    with pytest.raises(ConfigError, match="no agent document Nobody.md"):
        GuiRunner(doc, {"file_agent": "Nobody"})
    with pytest.raises(ConfigError, match="not a tool specialist"):
        GuiRunner(doc, {"file_agent": "Friday"})
    # route=gui never takes the file route, so its file agent is not built
    assert GuiRunner(doc, {"route": "gui", "file_agent": "Nobody"}).specialist is None


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_calc_task_through_its_file_under_xvfb(tmp_path, pool, scripted) -> None:
    """The real desktop: LibreOffice Calc opens budget.xlsx, CalcAgent takes the file route (the
    application is stopped, SheetAgent's calls edit the file), the evaluator reads the file, and
    no process of the episode survives. With ``-O route=gui`` the same agent acts on the window."""
    reason = xvfb_available() or pyatspi_available()
    if reason or not shutil.which("soffice"):
        missing_system(f"no desktop with LibreOffice here: {reason or 'soffice not installed'}")
    task = load_task(tasks_dir() / "calc-enter-total.json")
    llm = Scripted([CALLS], Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "file",
                   options=ExecOptions(max_steps=3, envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    assert (row["success"], row["status"], row["agents"], row["route"]) == (True, "done", ["CalcAgent"], "file")
    episode = tmp_path / "file" / row["trajectory"]
    assert not list((episode / "files").glob(".~lock*"))
    left = subprocess.run(["pgrep", "-f", str(episode)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes of the episode survived: {left}"
    gui = scripted(["Observation: x\nThought: y\nAction: FINISH\nSummary: z"] * 3)
    row = run_task(task, pool=pool, llm=gui, out_dir=tmp_path / "gui",
                   options=ExecOptions(max_steps=1, runner_options={"route": "gui", "actions": "raw"},
                                       envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None and row["route"] == "gui" and row["success"] is False
    assert "desktop computer" in gui.prompts[0][0].content  # the GUI loop's prompt, not the toolkit's


def test_a_profile_full_of_a_browsers_files_still_fits_the_prompt(tmp_path, pool) -> None:
    """After Chromium ran, its profile holds a hundred caches and databases: the browser toolkit
    describes only the files it reads, and the workspace's description is capped at a line."""
    import json

    from agentlab.envs.workspace import Workspace, WorkspaceConfig
    from agentlab.envs.workspace_env import WorkspaceEnv

    profile = tmp_path / "files" / "chrome" / "Default"
    profile.mkdir(parents=True)
    (profile / "Bookmarks").write_text(json.dumps({"roots": {"bookmark_bar": {"name": "Bookmarks bar", "children": [
        {"type": "url", "name": "Bank", "url": "https://bank.example/"}]}}}))
    for i in range(150):
        (profile / f"Cache_{i:03d}").write_bytes(bytes(range(256)) * 4)
    agent = GuiRunner(pool.get("ChromeAgent"), {"file_agent": "BrowserAgent"})._file_specialist()
    with Workspace(root=tmp_path / "files", config=WorkspaceConfig()) as ws:
        text = agent.observation(WorkspaceEnv(ws))
    assert len(text) <= agent.options.max_observation_chars + 100 and "not valid JSON" not in text
    assert "Bank <https://bank.example/>" in text or "left out" in text
    small = GuiRunner(pool.get("ChromeAgent"), {"file_agent": "BrowserAgent"})._file_specialist()
    with Workspace(root=tmp_path / "files", config=WorkspaceConfig()) as ws:
        (tmp_path / "files" / "chrome" / "Default").joinpath("Preferences").write_text(json.dumps({"homepage": "x"}))
        listing = small.observation(WorkspaceEnv(ws, max_files=5))
    assert "Bank <https://bank.example/>" in listing and "(settings)" in listing  # the files it reads are described
