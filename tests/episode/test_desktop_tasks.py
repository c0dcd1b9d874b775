"""Desktop tasks end to end: ``run_task`` opens the task's application under Xvfb, the GUI
runner (AppAgent's deploy loop) acts on it with a scripted model, the evaluator reads the saved
file; and every way the desktop cannot be built here is a harness-error row."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.agents.base import agent_class
from agentlab.envs import desktop_task
from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop_task import LAUNCHERS, AppLauncher, open_desktop_task, wait_settled
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.xdisplay import DEMO_APP, SYSTEM_PYTHON, virtual_display, xvfb_available
from agentlab.run.episode import ExecOptions, run_task
from agentlab.errors import EnvironmentUnavailableError
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.llm.base import ChatMessage
from agentlab.envs.trajectory import load_trajectory


def _needs_desktop(app: str | None = "soffice") -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if app and not shutil.which(app):
        missing_system(f"{app} is not installed (apt-get install libreoffice-calc libreoffice-gtk3)")


def _screen(messages: list[ChatMessage]) -> str:
    """The element listing of the deploy prompt (between the header and the action list)."""
    user = messages[-1].content
    return user.split("Elements on the current screen", 1)[1].split("Actions you can take", 1)[0]


def _element(screen: str, pattern: str) -> int | None:
    """The number of the first listed element whose line matches ``pattern`` (after ``[n] ``)."""
    m = re.search(r"^\[(\d+)\] " + pattern, screen, re.M)
    return int(m.group(1)) if m else None


def _reply(action: str, summary: str) -> str:
    return f"Observation: the spreadsheet.\nThought: next step.\nAction: {action}\nSummary: {summary}"


class CalcPolicy:
    """Replies computed from the prompt, as a model reading the screen would: find the Name Box
    (the text field showing the cursor's cell), jump to A4, type, save, keep the format."""

    def __init__(self) -> None:
        self.stage = 0
        self.seen: list[str] = []
        self.jumps = 0

    def __call__(self, messages: list[ChatMessage]) -> str:
        screen = _screen(messages)
        self.seen.append(screen)
        if self.stage == 0:
            self.stage = 1
            self.jumps += 1
            name_box = _element(screen, r'text "A1"$')
            assert name_box is not None, f"no Name Box listed:\n{screen}"
            return _reply(f'type("A4\\n", {name_box})', "jumped to A4")
        if self.stage == 1 and _element(screen, r'text "A4"$') is None and self.jumps < 3:
            # Calc's toolbars can still move after the window looks settled: the click may have
            # opened the Function Wizard beside the Name Box. Close what opened and try again, as
            # a person would (tests/envs/desktop/test_calc.py does the same)
            self.stage = 0
            return _reply('hotkey("esc")', "the Name Box did not take A4; closing what opened")
        if self.stage == 1:
            self.stage = 2
            return _reply('type("Total\\t60\\n")', "typed Total and 60")
        if self.stage == 2:
            self.stage = 3
            return _reply('hotkey("ctrl", "s")', "saving")
        keep = _element(screen, r'push button "Use Excel')
        if self.stage == 3 and keep is not None:
            self.stage = 4
            return _reply(f"click({keep})", "kept the xlsx format")
        if self.stage == 3:  # the dialog is still opening: a key that does nothing, then look again
            return _reply('hotkey("shift")', "waiting for the save dialog")
        return _reply("FINISH", "done")


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_gui_agent_completes_a_calc_task_under_xvfb(tmp_path, pool, scripted) -> None:
    _needs_desktop()
    task = load_task(tasks_dir() / "calc-enter-total.json")
    policy = CalcPolicy()
    llm = scripted([policy] * 12)
    t0 = time.monotonic()
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path,  # the window, not the file route
                   options=ExecOptions(max_steps=10, runner_options={"route": "gui", "actions": "raw"},
                                       envs=TaskEnvOptions(app_start_timeout_s=240)))
    elapsed = time.monotonic() - t0
    assert row["error"] is None, row["error"]
    last = policy.seen[-1] if policy.seen else ""
    assert (row["success"], row["score"], row["status"], row["agents"]) == (True, 1.0, "done", ["CalcAgent"]), (
        f"stage {policy.stage}, {policy.jumps} jump(s), status {row['status']}; last screen:\n{last[:3000]}")
    assert policy.stage == 4 and row["steps"] >= 4
    print(f"\ndesktop calc task end to end: setup_s={row['setup_s']:.1f} seconds={row['seconds']:.1f} "
          f"(wall {elapsed:.1f}) steps={row['steps']} llm_calls={row['llm_calls']}")
    assert "desktop computer" in llm.prompts[0][0].content  # the desktop system prompt, PC-Agent's actions
    assert "hotkey(*keys: str)" in llm.prompts[0][-1].content
    episode = tmp_path / row["trajectory"]
    traj = load_trajectory(episode)
    shots = [s.screenshot for s in traj.steps if s.screenshot]
    assert len(shots) >= 4 and all((episode / s).is_file() for s in shots)
    assert (episode / "files" / "budget.xlsx").is_file() and not list((episode / "files").glob(".~lock*"))
    left = subprocess.run(["pgrep", "-f", str(episode)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes of the episode survived: {left}"


# -- harness errors ---------------------------------------------------------------------------
def test_an_application_not_installed_is_a_harness_error_row(tmp_path, pool, scripted, monkeypatch) -> None:
    gone = dataclasses.replace(LAUNCHERS["libreoffice-calc"], program="soffice-not-installed-here")
    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc", gone)
    task = load_task(tasks_dir() / "calc-enter-total.json")
    row = run_task(task, pool=pool, llm=scripted([]), out_dir=tmp_path, options=ExecOptions())
    assert (row["success"], row["status"], row["agents"]) == (False, "error", ["CalcAgent"])
    assert "libreoffice-calc is not installed here" in row["error"] and "calc-enter-total" in row["error"]
    assert "soffice-not-installed-here" in row["error"] and "\n" not in row["error"]


def test_an_application_without_a_launcher_is_a_harness_error_row(tmp_path, pool, scripted) -> None:
    raw = json.loads((tasks_dir() / "calc-enter-total.json").read_text())
    path = tmp_path / "vscode-open-settings.json"  # VS Code's GUI is not packaged for Debian: no launcher
    path.write_text(json.dumps({**raw, "id": "vscode-open-settings", "domain": "vscode", "apps": ["code"]}))
    row = run_task(load_task(path), pool=pool, llm=scripted([]), out_dir=tmp_path / "run", options=ExecOptions())
    assert (row["success"], row["agents"]) == (False, ["VSGUIAgent"])
    assert "task vscode-open-settings needs a desktop application this harness cannot open here (apps: code)" in row["error"]


def test_no_xvfb_is_a_harness_error_naming_app_and_task(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc", dataclasses.replace(LAUNCHERS["libreoffice-calc"], program="sh"))
    monkeypatch.setattr("agentlab.envs.xdisplay.xvfb_available", lambda: "Xvfb is not installed")
    task = load_task(tasks_dir() / "calc-enter-total.json")
    with pytest.raises(EnvironmentUnavailableError, match="no X display for libreoffice-calc .task calc-enter-total.: "
                                                         "Xvfb is not installed"):
        open_desktop_task(task, tmp_path, TaskEnvOptions())
    assert (tmp_path / "files" / "budget.xlsx").is_file()  # the start files were written first


def test_libreoffice_gets_a_fresh_profile_and_the_task_file(tmp_path) -> None:
    calc = LAUNCHERS["libreoffice-calc"]
    argv = calc.argv(tmp_path / "files" / "budget.xlsx", tmp_path / "profile")
    assert argv == ["soffice", "--calc", "--norestore", "--nologo", "--nolockcheck", "--nodefault",
                    f"-env:UserInstallation=file://{tmp_path}/profile", str(tmp_path / "files" / "budget.xlsx")]
    assert "--nodefault" not in calc.argv(None, tmp_path / "profile")  # no file: Calc's empty document opens
    assert calc.env == {"SAL_USE_VCLPLUGIN": "gtk3"} and calc.a11y_app == "soffice"
    assert [LAUNCHERS[a].args[0] for a in ("libreoffice-writer", "libreoffice-impress")] == ["--writer", "--impress"]
    task = load_task(tasks_dir() / "calc-enter-total.json")
    assert desktop_task.task_apps(task) == [("libreoffice-calc", calc)]
    (tmp_path / "budget.xlsx").write_text("x")
    assert desktop_task.task_file(task, tmp_path) == tmp_path / "budget.xlsx"
    assert desktop_task.task_file(task.model_copy(update={"outputs": ["new.xlsx"]}), tmp_path) == tmp_path / "budget.xlsx"
    assert desktop_task.task_file(task, tmp_path / "empty") is None


def test_stale_lock_files_are_removed_before_launch(tmp_path, monkeypatch) -> None:
    seen: list[list[str]] = []

    def stop_at_display(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(sorted(p.name for p in (tmp_path / "files").iterdir()))
        raise EnvironmentUnavailableError("stop here")

    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc", dataclasses.replace(LAUNCHERS["libreoffice-calc"], program="sh"))
    monkeypatch.setattr(desktop_task.VirtualDisplay, "start", stop_at_display)
    task = load_task(tasks_dir() / "calc-enter-total.json")
    lock = {"type": "write_text", "path": ".~lock.budget.xlsx#", "content": ",someone,host,01.01.2026 10:00,"}
    with pytest.raises(EnvironmentUnavailableError, match="stop here"):
        open_desktop_task(task.model_copy(update={"setup": [*task.setup, lock]}), tmp_path, TaskEnvOptions())
    assert seen == [["budget.xlsx"]]


def test_saves_settle_before_collecting(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("x")
    t0 = time.monotonic()
    assert wait_settled(tmp_path, quiet_s=0.3, timeout_s=5)
    assert time.monotonic() - t0 < 2
    proc = subprocess.Popen(["sh", "-c", f"for i in 1 2 3 4 5 6 7 8 9 10; do echo $i >> {tmp_path}/a.txt; sleep 0.1; done"])
    t0 = time.monotonic()
    assert wait_settled(tmp_path, quiet_s=0.3, timeout_s=5)
    proc.wait()
    assert (tmp_path / "a.txt").read_text().split()[-1] == "10"  # it waited for the last write
    assert not wait_settled(tmp_path, quiet_s=10, timeout_s=0.5)


def test_the_gui_runner_lists_every_element_a_desktop_shows(pool, scripted) -> None:
    doc = pool.get("CalcAgent")
    cls = agent_class("gui")
    assert cls(doc, {}).config.max_elements == 200  # Calc's Name Box is element ~60
    assert cls(doc, {"max_elements": 30}).config.max_elements == 30  # a document may lower it
    assert agent_class("appagent")(pool.get("ClockAgent"), {}).config.max_elements == 50


@pytest.mark.xvfb
@pytest.mark.timeout(180)
def test_window_that_never_appears_is_a_harness_error(tmp_path, monkeypatch) -> None:
    _needs_desktop(app=None)
    quits = AppLauncher(program="true", args=(), a11y_app="true", install_hint="coreutils")
    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc", quits)
    task = load_task(tasks_dir() / "calc-enter-total.json")
    with pytest.raises(EnvironmentUnavailableError, match="libreoffice-calc did not open budget.xlsx for task "
                                                         "calc-enter-total .*the app exited"):
        open_desktop_task(task, tmp_path, TaskEnvOptions(app_start_timeout_s=20))


@pytest.mark.xvfb
@pytest.mark.timeout(120)
def test_a_window_that_does_not_come_leaves_what_the_screen_showed(tmp_path, monkeypatch) -> None:
    """A timeout (the app runs but shows no window by that name) names the visible windows and
    saves the screen next to the episode, so a flaky start can be diagnosed afterwards."""
    _needs_desktop(app=None)
    silent = AppLauncher(program="sh", args=("-c", "sleep 60"), a11y_app="sh", install_hint="coreutils")
    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc", silent)
    task = load_task(tasks_dir() / "calc-enter-total.json")
    with pytest.raises(EnvironmentUnavailableError, match=r"within 3s \(visible windows: none; screen saved to .*app_timeout.png\)"):
        open_desktop_task(task, tmp_path, TaskEnvOptions(app_start_timeout_s=3))
    assert (tmp_path / "app_timeout.png").is_file()


# -- a person's own screen: every action confirmed ------------------------------------------------
def _demo_task() -> ExecTask:
    """A desktop task on the shipped GTK demo app: press "Add one" once."""
    return ExecTask.model_validate({
        "id": "demo-add-one", "instruction": "Press Add one once.", "domain": "os", "env": "desktop",
        "apps": ["demo-gtk"], "setup": [{"type": "write_json", "path": "state.json", "value": {"count": 0}}],
        "outputs": ["state.json"],
        "evaluator": {"func": "exact_match", "result": {"type": "json_setting", "path": "state.json", "key": "count"},
                      "expected": {"type": "literal", "value": 1}},
    })


@pytest.mark.xvfb
@pytest.mark.timeout(180)
def test_own_display_confirms_every_action_and_stops_only_its_app(tmp_path, pool, scripted, monkeypatch) -> None:
    _needs_desktop(app=None)
    if not Path(SYSTEM_PYTHON).exists():
        missing_system("the GTK demo needs /usr/bin/python3 with python3-gi")
    # the demo app opened on the task's file: its title is the file name, as LibreOffice's is
    demo = AppLauncher(program=SYSTEM_PYTHON, args=(str(DEMO_APP), "--title", "state.json", "--state"),
                       a11y_app="demo_gtk", install_hint="python3-gi")
    monkeypatch.setitem(LAUNCHERS, "demo-gtk", demo)
    answers = iter(["n", "y"])  # the person declines the first click and accepts the second
    asked: list[str] = []

    def person(prompt: str = "") -> str:
        asked.append(prompt)
        return next(answers)

    monkeypatch.setattr("builtins.input", person)

    def click_add(messages: list[ChatMessage]) -> str:
        n = _element(_screen(messages), r'push button "Add one"')
        assert n is not None, _screen(messages)
        return _reply(f"click({n})", "pressed Add one")

    with virtual_display() as screen:  # stands in for the person's screen (their DISPLAY, XAUTHORITY, bus)
        for key in ("DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS"):
            monkeypatch.setenv(key, screen.env[key])
        llm = scripted([click_add, click_add, _reply("FINISH", "done")])
        row = run_task(_demo_task(), pool=pool, llm=llm, out_dir=tmp_path, agent="CalcAgent",
                       options=ExecOptions(max_steps=4, runner_options={"actions": "raw"},
                                           envs=TaskEnvOptions(display=screen.display, app_start_timeout_s=60)))
        assert row["error"] is None, row["error"]
        assert (row["success"], row["steps"]) == (True, 2)
        assert len(asked) == 2 and all("click element" in a for a in asked)
        traj = load_trajectory(tmp_path / row["trajectory"])
        infos = [s.info for s in traj.steps if s.action]
        assert infos[0].get("skipped") is True and infos[1].get("executed") is True
        assert screen._xvfb is not None and screen._xvfb.poll() is None  # the person's screen is left running
        assert "state.json" not in " ".join(screen.window_names())  # but the app we opened is gone


@pytest.mark.xvfb
@pytest.mark.timeout(120)
def test_a_relative_run_folder_still_names_the_file_the_app_opens(tmp_path, monkeypatch) -> None:
    """``agentlab exec --out runs/x`` gives a relative episode folder; the app starts in the files
    folder, so the file it is given must be absolute (a relative one never opened a window)."""
    _needs_desktop(app=None)
    seen = tmp_path / "argv.txt"
    shows = AppLauncher(program="sh", args=("-c", f'echo "$0" > {seen}; sleep 60'), a11y_app="sh", install_hint="coreutils")
    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc", shows)
    monkeypatch.chdir(tmp_path)
    task = load_task(tasks_dir() / "calc-enter-total.json")
    with pytest.raises(EnvironmentUnavailableError):
        open_desktop_task(task, Path("run") / "episode", TaskEnvOptions(app_start_timeout_s=2))
    opened = Path(seen.read_text().strip())
    assert opened.is_absolute() and opened == tmp_path / "run" / "episode" / "files" / "budget.xlsx" and opened.is_file()
