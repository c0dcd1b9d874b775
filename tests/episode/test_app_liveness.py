"""Liveness (issue #37, case 9): a desktop application or a phone that dies in the middle of an
episode ends it as a harness-error row naming it, noticed before the next action, instead of the
agent clicking a black screen (or a phone that is gone) until its steps run out."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop_task import LAUNCHERS, AppLauncher
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.testing.fake_adb import FakeAdbServer
from agentlab.envs.xdisplay import DEMO_APP, SYSTEM_PYTHON, xvfb_available
from agentlab.run.episode import ExecOptions, run_task
from agentlab.llm.base import ChatMessage
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.envs.trajectory import load_trajectory


def _reply(action: str) -> str:
    return f"Observation: the demo app.\nThought: next step.\nAction: {action}\nSummary: {action}"


def _click_add(messages: list[ChatMessage]) -> str:
    m = re.search(r'^\[(\d+)\] push button "Add one"', messages[-1].content, re.M)
    assert m, messages[-1].content
    return _reply(f"click({m.group(1)})")


def _click_on(messages: list[ChatMessage]) -> str:
    """What a model shown a dead app's screen does: clicks on (Add one if still listed, else 1)."""
    m = re.search(r'^\[(\d+)\] push button "Add one"', messages[-1].content, re.M)
    return _reply(f"click({m.group(1) if m else 1})")


def _demo_task() -> ExecTask:
    return ExecTask.model_validate({
        "id": "demo-add-three", "instruction": "Press Add one three times.", "domain": "os", "env": "desktop",
        "apps": ["gtk_demo"], "setup": [{"type": "write_json", "path": "state.json", "value": {"count": 0}}],
        "outputs": ["state.json"],
        "evaluator": {"func": "exact_match", "result": {"type": "json_setting", "path": "state.json", "key": "count"},
                      "expected": {"type": "literal", "value": 3}},
    })


def _kill_and_wait(pid: int) -> None:
    """SIGKILL ``pid`` (a child of this process: the launched app) and wait until it is a zombie."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return
        time.sleep(0.02)
    raise AssertionError(f"pid {pid} did not die")


@pytest.mark.xvfb
@pytest.mark.timeout(180)
def test_a_desktop_app_killed_mid_episode_is_a_harness_error_row_naming_it(tmp_path, pool, scripted,
                                                                          monkeypatch) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        pytest.skip(f"no desktop here: {reason}")
    if not Path(SYSTEM_PYTHON).exists():
        pytest.skip("the GTK demo needs /usr/bin/python3 with python3-gi")
    demo = AppLauncher(program=SYSTEM_PYTHON, args=(str(DEMO_APP), "--title", "state.json", "--state"),
                       a11y_app="demo_gtk", install_hint="python3-gi")
    monkeypatch.setitem(LAUNCHERS, "gtk_demo", demo)
    killed: list[int] = []

    def kill_then_click(messages: list[ChatMessage]) -> str:
        """The model is thinking about step 2 when the application dies."""
        pids = subprocess.run(["pgrep", "-f", f"{DEMO_APP}.*{tmp_path}"], capture_output=True, text=True).stdout.split()
        assert len(pids) == 1, pids
        killed.append(int(pids[0]))
        _kill_and_wait(killed[0])
        return _click_add(messages)

    # without the check the agent clicks on until its steps run out (status max_steps, no error)
    llm = scripted([_click_add, kill_then_click, _click_on, _click_on, _reply("FINISH")])
    row = run_task(_demo_task(), pool=pool, llm=llm, out_dir=tmp_path, agent="CalcAgent",
                   options=ExecOptions(max_steps=4, envs=TaskEnvOptions(app_start_timeout_s=60)))
    assert killed, "the scripted model never reached step 2"
    assert row["error"] is not None, row
    assert (f"the application gtk_demo (pid {killed[0]}) was killed by SIGKILL (status -9) during step 2"
            in row["error"]), row["error"]
    assert row["success"] is False and len(llm.prompts) == 2  # nothing was asked after the death
    traj = load_trajectory(tmp_path / row["trajectory"])
    assert "gtk_demo" in (traj.steps[-1].error or "") and traj.meta.status != "done"
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes of the episode survived: {left}"


def test_a_phone_that_disconnects_between_actions_is_a_harness_error_row_naming_it(tmp_path, pool, scripted) -> None:
    task = load_task(tasks_dir() / "clock-vibrate-off.json")
    with FakeAdbServer() as server:

        def unplug_then_tap(messages: list[ChatMessage]) -> str:
            server.disconnect()  # the cable is pulled while the model thinks about step 2
            return "Observation: settings\nThought: the first switch\nAction: tap(2)\nSummary: vibration off"

        llm = scripted(["Observation: home\nThought: settings\nAction: tap(2)\nSummary: opened Settings",
                        unplug_then_tap, "Observation: done\nThought: done\nAction: FINISH\nSummary: done"])
        options = ExecOptions(max_steps=5, envs=TaskEnvOptions(device=f"emulator-5554@127.0.0.1:{server.port}"))
        row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=options)
    assert row["success"] is False and row["error"], row
    assert "device emulator-5554 disconnected before step 2" in row["error"], row["error"]
    assert f"127.0.0.1:{server.port}" in row["error"] and len(llm.prompts) == 2


# -- the checks themselves, without an X server ---------------------------------------------------
class _Driver:
    """Stands in for pyautogui: records what would have been sent to the machine."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def screenshot(self):  # type: ignore[no-untyped-def]
        from PIL import Image

        return Image.new("RGB", (400, 300))

    def click(self, x: int, y: int, clicks: int = 1) -> None:
        self.calls.append((x, y))


def test_nothing_is_sent_or_listed_once_the_app_is_dead() -> None:
    from agentlab.envs.actions.desktop import Click, Stop
    from agentlab.envs.desktop import DesktopEnv
    from agentlab.errors import ApplicationExitedError, HarnessError

    dead: list[str] = []
    driver = _Driver()
    env = DesktopEnv(display=":99", a11y="off", grid=(2, 2), driver=driver, settle_s=0,  # type: ignore[arg-type]
                     liveness=lambda: dead[0] if dead else None)
    env.reset()
    env.step(Click(element=1))
    assert len(driver.calls) == 1
    dead.append("the application demo (pid 7) exited with status 1")
    with pytest.raises(ApplicationExitedError, match=r"demo \(pid 7\) exited with status 1 during step 2") as exc:
        env.step(Click(element=1))
    assert isinstance(exc.value, HarnessError) and len(driver.calls) == 1  # the click was never sent
    with pytest.raises(ApplicationExitedError):
        env.observe()  # no observation of a dead app's screen either
    with pytest.raises(ApplicationExitedError, match="during step 3"):
        env.step(Stop())
    with pytest.raises(ApplicationExitedError, match="before the first step"):
        env.reset()


def test_only_the_processes_that_should_live_are_watched(tmp_path) -> None:
    import dataclasses

    from agentlab.envs.desktop import DesktopEnv
    from agentlab.envs.desktop_task import DesktopTaskEnv

    calc, writer = LAUNCHERS["libreoffice-calc"], LAUNCHERS["libreoffice-writer"]
    other = dataclasses.replace(writer, profile_arg="")  # a writer that does not join calc's process
    host = subprocess.Popen(["sleep", "30"])
    joined = subprocess.Popen(["true"])  # a second soffice hands its file over and exits: by design
    joined.wait()
    try:
        env = DesktopEnv(display=":99", a11y="off", driver=_Driver())  # type: ignore[arg-type]
        opened = DesktopTaskEnv(env, tmp_path, display=None, apps=[host, joined], launchers=[calc, writer],  # type: ignore[arg-type]
                                names=["libreoffice-calc", "libreoffice-writer"])
        assert env.liveness is not None and opened.dead_app() is None
        opened.launchers = [calc, other]
        assert opened.dead_app() == f"the application libreoffice-writer (pid {joined.pid}) exited with status 0"
        opened.launchers = [calc, writer]
        host.kill()
        host.wait()
        assert opened.dead_app() == f"the application libreoffice-calc (pid {host.pid}) was killed by SIGKILL (status -9)"
    finally:
        host.kill()
        host.wait()
