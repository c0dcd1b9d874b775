"""Branches of the AppAgent loops, with a SCRIPTED backend (a labelled test double) driving
the real AndroidEnv against the fake adb server. The real-model runs are in test_appagent_e2e."""

from __future__ import annotations

import json

import pytest

from agentlab.agents import AppAgent, AppAgentConfig, DocStore, record_demo
from agentlab.envs import AndroidEnv, Element, Env, Observation, StepResult
from agentlab.envs.actions.desktop import DESKTOP, Click
from agentlab.errors import DeviceDisconnectedError
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory


def _agent(backend, tmp_path, **kw) -> AppAgent:  # type: ignore[no-untyped-def]
    return AppAgent(backend, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", **kw))


def _env(server) -> AndroidEnv:  # type: ignore[no-untyped-def]
    return AndroidEnv(adb_port=server.port, settle=0, retry_delay=0.01)


def _user(backend, i: int) -> str:  # type: ignore[no-untyped-def]
    return backend.prompts[i][-1].content


def test_deploy_happy_path_uses_summary_and_finishes(fake_adb, scripted, tmp_path) -> None:
    llm = scripted(["Observation: home\nThought: open settings\nAction: tap(2)\nSummary: opened settings",
                    "**Action:** tap(2)\nSummary: opened settings, turned vibration off",
                    "Thought: done\nAction: FINISH\nSummary: vibration is off"])
    res = _agent(llm, tmp_path).deploy(_env(fake_adb), "turn off vibration", tmp_path / "run" / "ep")
    assert (res.status, res.steps, res.summary) == ("done", 2, "vibration is off")
    assert fake_adb.device.app.vibrate is False
    assert "opened settings" in _user(llm, 1) and "turn off vibration" in _user(llm, 0)
    assert '[2] Button "Settings"' in _user(llm, 0) and "tap(element: int)" in _user(llm, 0)
    t = load_trajectory(tmp_path / "run" / "ep")
    assert t.meta.status == "done" and t.meta.model_id == "scripted-test-double"
    assert set(t.meta.extra["prompts"]) >= {"appagent/deploy", "appagent/system"}
    assert [a.call_name for a in t.actions()] == ["tap", "tap", "exit"] and t.steps[-1].done


def test_deploy_garbage_is_recorded_fed_back_and_bounded(fake_adb, scripted, tmp_path) -> None:
    llm = scripted(["I like turtles", "Action: tap(99)", "blah", "never used"])
    res = _agent(llm, tmp_path, max_retries=2).deploy(_env(fake_adb), "set an alarm", tmp_path / "ep")
    assert res.status == "failed" and res.steps == 0 and "3 unusable replies" in res.error
    assert [p.temperature for p in llm.params] == [0.0, 0.7, 0.7]
    assert "could not be used" in _user(llm, 1) and "labels run from 1 to 4" in _user(llm, 2)
    assert not any(c.startswith("input") for c in fake_adb.device.commands)
    errors = [s.error for s in load_trajectory(tmp_path / "ep").steps if s.error]
    assert len(errors) >= 3 and "no 'Action:' line" in errors[0] and "no element 99" in errors[1]


def test_deploy_stops_at_max_steps(fake_adb, scripted, tmp_path) -> None:
    llm = scripted(["Action: tap(1)", "Action: back()", "Action: tap(1)"])
    res = _agent(llm, tmp_path, max_steps=2).deploy(_env(fake_adb), "look around", None)
    assert (res.status, res.steps, res.path) == ("max_steps", 2, None)


def test_deploy_shows_docs_of_on_screen_elements(fake_adb, scripted, tmp_path) -> None:
    store = DocStore("clock", tmp_path / "docs")
    el = Element(2, (20, 240, 520, 320), "android.widget.Button", "Settings", "com.example.clock:id/settings_btn", True,
                 uid="com.example.clock.id_settings_btn")
    store.update(el, "tap", "Opens the settings page.")
    llm = scripted(["Action: FINISH"])
    _agent(llm, tmp_path).deploy(_env(fake_adb), "x", None)
    assert "[2] tap: Opens the settings page." in _user(llm, 0)
    llm = scripted(["Action: FINISH"])
    _agent(llm, tmp_path, use_docs=False).deploy(_env(fake_adb), "x", None)
    assert "Opens the settings page" not in _user(llm, 0)


def test_exploration_writes_and_refines_docs(fake_adb, scripted, tmp_path) -> None:
    llm = scripted([
        "Action: tap(2)\nSummary: opened settings",
        "Decision: CONTINUE\nThought: a settings page\nDocumentation: Opens the settings page.",
        "Action: tap(2)",
        "Decision: SUCCESS\nThought: it toggled\nDocumentation: Turns vibration on or off.",
        "Action: FINISH",
    ])
    res = _agent(llm, tmp_path).explore(_env(fake_adb), "turn off vibration", tmp_path / "x" / "ep")
    assert res.status == "done" and res.steps == 2
    doc = json.loads((tmp_path / "docs" / "clock" / "com.example.clock.id_settings_btn.json").read_text())
    assert doc["docs"] == {"tap": "Opens the settings page."} and doc["seen"] == {"tap": 1}
    assert (tmp_path / "docs" / "clock" / "com.example.clock.id_vibrate_switch.json").exists()
    reflect_prompt = _user(llm, 1)
    assert "Screen before the action" in reflect_prompt and '"Settings"' in reflect_prompt
    # the screen after: the switch is named by its row's text (android_ui.row_label), nothing else says Vibrate
    assert reflect_prompt.count("Vibrate") == 1 and 'Switch "Vibrate"' in reflect_prompt
    # Seen again: the old text is shown to be refined, and the entry is updated.
    fake_adb.device.app.stack = ["home"]
    llm2 = scripted(["Action: tap(2)", "Decision: CONTINUE\nDocumentation: Opens settings (vibration, theme).", "Action: FINISH"])
    _agent(llm2, tmp_path).explore(_env(fake_adb), "turn off vibration", None)
    assert "Opens the settings page." in _user(llm2, 1)
    doc = json.loads((tmp_path / "docs" / "clock" / "com.example.clock.id_settings_btn.json").read_text())
    assert doc["docs"]["tap"] == "Opens settings (vibration, theme)." and doc["seen"]["tap"] == 2


def test_exploration_ineffective_is_judged_without_llm_and_hidden_after(fake_adb, scripted, tmp_path) -> None:
    llm = scripted([
        "Action: tap(3)",  # About
        "Decision: CONTINUE\nDocumentation: Shows the app's version and licences.",
        "Action: tap(2)",  # "Open source licences" does nothing on this app
        "Action: FINISH",
    ])
    res = _agent(llm, tmp_path).explore(_env(fake_adb), "read the licences", tmp_path / "ep")
    assert res.status == "done" and len(llm.prompts) == 4  # no reflection call for the no-op
    assert DocStore("clock", tmp_path / "docs").useless() == {"com.example.clock.id_licences"}
    assert "Open source licences" in _user(llm, 2) and "Open source licences" not in _user(llm, 3)
    decisions = [s.info.get("decision") for s in load_trajectory(tmp_path / "ep").steps]
    assert decisions[:2] == ["CONTINUE", "INEFFECTIVE"]


def test_exploration_back_decision_returns(fake_adb, scripted, tmp_path) -> None:
    llm = scripted(["Action: tap(4)", "Decision: BACK\nDocumentation: An advertisement.", "Action: FINISH"])
    _agent(llm, tmp_path).explore(_env(fake_adb), "set an alarm", None)
    assert fake_adb.device.app.screen == "home" and "back from ad" in fake_adb.device.app.events
    assert '[4] ImageView "Ad"' in _user(llm, 2)


def test_demo_recording_and_learning(fake_adb, scripted, tmp_path) -> None:
    rec = TrajectoryRecorder(tmp_path / "demos" / "vib", task="turn off vibration", env="AndroidEnv")
    errors: list[str] = []
    n = record_demo(_env(fake_adb), rec, ["tap(2)", "nonsense", "tap(2)", "exit()"], on_error=errors.append)
    assert n == 2 and len(errors) == 1 and fake_adb.device.app.vibrate is False
    llm = scripted(["Documentation: Opens settings.", "garbage", "Documentation: Toggles vibration."])
    out = _agent(llm, tmp_path).learn_from_demo(tmp_path / "demos" / "vib")
    assert out["documented"] == ["com.example.clock.id_settings_btn", "com.example.clock.id_vibrate_switch"]
    assert len(out["errors"]) == 1
    assert "Vibrate" in _user(llm, 0) or "vibrate" in _user(llm, 0)  # the 'after' screen is shown
    doc = DocStore("clock", tmp_path / "docs").get("com.example.clock.id_vibrate_switch")
    assert doc is not None and doc.sources == {"tap": "demo"}


def test_disconnect_ends_episode_with_trajectory_saved(fake_adb, scripted, tmp_path) -> None:
    llm = scripted(["Action: tap(2)", "Action: tap(2)"])
    env = _env(fake_adb)
    fake_adb.device.disconnect_after = 4  # reset works, the device vanishes during step 1
    with pytest.raises(DeviceDisconnectedError):
        _agent(llm, tmp_path).deploy(env, "turn off vibration", tmp_path / "ep")
    t = load_trajectory(tmp_path / "ep")
    assert t.meta.status == "disconnected" and "disconnected" in t.steps[-1].error
    assert t.steps[-1].done


class _CounterDesktop(Env):
    """TEST DOUBLE env in the desktop action space (proves the agent is env-agnostic)."""

    actions = DESKTOP

    def __init__(self) -> None:
        self.clicks = 0

    def _obs(self) -> Observation:
        el = Element(1, (0, 0, 100, 30), "push button", f"Clicked {self.clicks}", None, True, uid="demo_gtk.py:push button:Add one")  # a real desktop uid: not a file name
        return Observation(screenshot=None, elements=[el], info={"signature": str(self.clicks)})

    def reset(self, task=None):  # type: ignore[no-untyped-def]
        return self._obs()

    def step(self, action):  # type: ignore[no-untyped-def]
        assert isinstance(action, Click)
        self.clicks += 1
        return StepResult(self._obs(), done=False)


def test_agent_runs_on_a_desktop_action_space(scripted, tmp_path) -> None:
    llm = scripted(["Action: click(1)", "Action: stop()"])
    env = _CounterDesktop()
    res = _agent(llm, tmp_path).deploy(env, "click once", tmp_path / "ep")
    assert res.status == "done" and env.clicks == 1
    assert "click(element: int)" in _user(llm, 0) and "desktop computer" in llm.prompts[0][0].content


def test_desktop_exploration_documents_and_deployment_reads_desktop_uids(scripted, tmp_path) -> None:
    llm = scripted(["Action: click(1)", "Decision: CONTINUE\nThought: it counted\nDocumentation: Adds one to the count.",
                    "Action: stop()"])
    res = _agent(llm, tmp_path).explore(_CounterDesktop(), "click once", tmp_path / "ex")
    assert res.status == "done" and res.steps == 1
    store = DocStore("clock", tmp_path / "docs")
    assert store.documented() == ["demo_gtk.py:push button:Add one"]
    doc = store.get("demo_gtk.py:push button:Add one")
    assert doc is not None and doc.docs == {"click": "Adds one to the count."}
    llm = scripted(["Action: stop()"])
    _agent(llm, tmp_path).deploy(_CounterDesktop(), "click once", None)
    assert "[1] click: Adds one to the count." in _user(llm, 0)
