"""AndroidEnv driven through the real adbutils client against the fake adb server."""

from __future__ import annotations

import pytest

from agentlab.envs import AndroidEnv, Observation
from agentlab.envs.actions.desktop import Click
from agentlab.envs.actions.phone import Back, Finish, LongPress, Swipe, Tap, Text
from agentlab.envs.android import input_text_pieces
from agentlab.envs.marks import draw_marks
from agentlab.errors import DeviceDisconnectedError, EnvironmentUnavailableError, InvalidActionError


def _env(server, **kw) -> AndroidEnv:  # type: ignore[no-untyped-def]
    kw.setdefault("settle", 0)
    kw.setdefault("retry_delay", 0.01)
    return AndroidEnv(adb_port=server.port, **kw)


def _find(obs: Observation, needle: str) -> int:
    for e in obs.elements:
        if needle == e.text or (e.resource_id or "").endswith("/" + needle):
            return e.id
    raise AssertionError(f"{needle!r} not on screen:\n{obs.summary()}")


def _open_edit(env: AndroidEnv) -> Observation:
    obs = env.reset()
    obs = env.step(Tap(_find(obs, "Alarms"))).observation
    return env.step(Tap(_find(obs, "add_alarm"))).observation


def test_reset_without_task_observes_screen(fake_adb) -> None:
    with _env(fake_adb) as env:
        obs = env.reset()
    assert obs.screenshot is not None and obs.screenshot.size == (540, 960)
    assert [e.text for e in obs.elements] == ["Alarms", "Settings", "About", "Ad"]
    assert obs.info["package"] == "com.example.clock" and obs.info["xml"].startswith("<?xml")
    assert draw_marks(obs.screenshot, obs.elements).tobytes() != obs.screenshot.tobytes()


def test_tap_navigates_and_back_returns(fake_adb) -> None:
    with _env(fake_adb) as env:
        obs = env.reset("open settings")
        r = env.step(Tap(_find(obs, "Settings")))
        assert not r.done and fake_adb.device.app.screen == "settings"
        vib = _find(r.observation, "vibrate_switch")
        assert r.observation.element(vib).state == ("checked",)
        r = env.step(Tap(vib))
        assert r.observation.element(vib).state == ("unchecked",)
        r = env.step(Back())
        assert fake_adb.device.app.screen == "home" and _find(r.observation, "Settings")
        assert env.step(Finish()).done


def test_text_with_spaces_quotes_and_percent_s_is_typed_exactly(fake_adb) -> None:
    text = "Gym at 6 -- it's \"leg day\" & 50%s off; (bring $5)"
    with _env(fake_adb) as env:
        obs = _open_edit(env)
        r = env.step(Text(text))  # no field focused yet: the env focuses it first
    assert r.info["focused_first"] is True
    assert fake_adb.device.app.label_text == text
    label = next(e for e in r.observation.elements if e.role.endswith("EditText"))
    assert label.text == text and "focused" in label.state
    assert obs.element(_find(obs, "alarm_label"))


def test_newline_and_tab_become_key_events() -> None:
    assert input_text_pieces("a b\nc\td") == [("text", "a%sb"), ("key", "66"), ("text", "c"), ("key", "61"), ("text", "d")]


def test_non_ascii_names_the_character_and_sends_nothing(fake_adb) -> None:
    with _env(fake_adb) as env:
        _open_edit(env)
        before = list(fake_adb.device.commands)
        with pytest.raises(InvalidActionError, match=r"'é' \(U\+00E9.*ADBKeyboard"):
            env.step(Text("café"))
    assert fake_adb.device.commands == before and fake_adb.device.app.label_text == ""


def test_adbkeyboard_types_unicode(fake_adb) -> None:
    fake_adb.device.adbkeyboard = True
    with _env(fake_adb, ime="adbkeyboard") as env:
        _open_edit(env)
        r = env.step(Text("café ☕ 7:00"))
    assert fake_adb.device.app.label_text == "café ☕ 7:00" and "warning" not in r.info


def test_adbkeyboard_missing_is_reported_as_a_warning(fake_adb) -> None:
    with _env(fake_adb, ime="adbkeyboard") as env:
        _open_edit(env)
        r = env.step(Text("café"))
    assert "warning" in r.info and fake_adb.device.app.label_text == ""


def test_text_without_any_field_is_refused(fake_adb) -> None:
    with _env(fake_adb) as env:
        env.reset()
        with pytest.raises(InvalidActionError, match="no text field"):
            env.step(Text("hello"))


def test_swipe_scrolls_and_long_press_selects(fake_adb) -> None:
    with _env(fake_adb) as env:
        obs = env.reset()
        obs = env.step(Tap(_find(obs, "Alarms"))).observation
        assert obs.elements[2].text == "07:00 Wake up"
        obs = env.step(Swipe(_find(obs, "alarm_list"), "up", "medium")).observation
        rows = [e.text for e in obs.elements if e.role.endswith("LinearLayout")]
        assert rows[0] == "08:00 Gym" and rows[-1] == "22:00 Sleep"
        obs = env.step(LongPress(_find(obs, "08:00 Gym"))).observation
        obs = env.step(Tap(_find(obs, "Delete"))).observation
    assert "Gym" not in [a.label for a in fake_adb.device.app.alarms]
    assert any(c.startswith("input swipe") and " 1000;" in c for c in fake_adb.device.commands)


def test_unknown_element_and_desktop_action_are_refused(fake_adb) -> None:
    with _env(fake_adb) as env:
        env.reset()
        with pytest.raises(InvalidActionError, match="labels run from 1 to 4"):
            env.step(Tap(9))
        with pytest.raises(InvalidActionError, match="not a phone action"):
            env.step(Click(element=1))


def test_dump_nonzero_exit_with_valid_xml_is_used(fake_adb) -> None:
    fake_adb.device.dump_exit_nonzero = True
    with _env(fake_adb) as env:
        assert len(env.reset().elements) == 4


def test_dump_idle_failures_are_retried(fake_adb) -> None:
    fake_adb.device.dump_idle_failures = 2
    with _env(fake_adb, dump_retries=3) as env:
        assert len(env.reset().elements) == 4
    fake_adb.device.dump_idle_failures = 10
    with _env(fake_adb, dump_retries=2) as env, pytest.raises(EnvironmentUnavailableError, match="could not get idle state"):
        env.reset()


def test_disconnect_mid_episode(fake_adb) -> None:
    with _env(fake_adb) as env:
        obs = env.reset()
        fake_adb.device.disconnect_after = 1  # the tap goes through, the next command dies
        with pytest.raises(DeviceDisconnectedError, match="emulator-5554 disconnected"):
            env.step(Tap(_find(obs, "Alarms")))


def test_no_device_and_no_server(fake_adb) -> None:
    fake_adb.disconnect()
    with pytest.raises(EnvironmentUnavailableError, match="no Android device is ready"):
        _env(fake_adb).reset()
    with pytest.raises(EnvironmentUnavailableError, match="not connected"):
        AndroidEnv(serial="abc", adb_port=fake_adb.port).reset()
    port = fake_adb.port
    fake_adb.stop()
    with pytest.raises(EnvironmentUnavailableError, match="no adb server answers"):
        AndroidEnv(adb_port=port).reset()
