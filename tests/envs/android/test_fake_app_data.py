"""The fake Clock app keeps its data on the device's storage, and AndroidEnv moves it over adb."""

from __future__ import annotations

import json

import adbutils

from agentlab.envs import AndroidEnv
from agentlab.envs.testing.fake_app import STATE_PATH, ClockApp

START = {"alarms": [{"hour": 5, "label": "Run", "enabled": False}], "vibrate": False, "dark_theme": True}


def _env(server) -> AndroidEnv:  # type: ignore[no-untyped-def]
    return AndroidEnv(adb_port=server.port, settle=0, retry_delay=0.01)


def test_every_change_is_saved_and_a_launch_loads_it() -> None:
    storage: dict[str, bytes] = {}
    app = ClockApp(storage)
    app.launch()  # no file yet: the built-in alarms stay
    assert STATE_PATH not in storage and len(app.alarms) == 5
    app.stack = ["home", "settings"]
    app.tap(460, 195)  # the Vibrate switch
    saved = json.loads(storage[STATE_PATH])
    assert saved["vibrate"] is False and saved["dark_theme"] is False and len(saved["alarms"]) == 5
    storage[STATE_PATH] = json.dumps(START).encode()
    app.launch()
    assert (app.screen, app.vibrate, app.dark, [(a.hour, a.label, a.enabled) for a in app.alarms]) == (
        "home", False, True, [(5, "Run", False)])
    storage[STATE_PATH] = b"{not json"
    app.launch()  # an unreadable file keeps the data as it was
    assert app.alarms[0].label == "Run" and app.events[-1].startswith("unreadable state file")


def test_the_hour_picker_swipes_and_save_uses_the_hour() -> None:
    app = ClockApp()
    app.stack = ["home", "alarms", "edit"]
    app.swipe(140, 360, 140, 250)  # finger up: one hour later
    app.swipe(140, 360, 140, 250)
    app.swipe(140, 360, 140, 470)  # finger down: one hour earlier
    app.tap(100, 190)
    app.type_text("Bins")
    app.tap(140, 815)  # Save
    assert (app.alarms[-1].hour, app.alarms[-1].label) == (8, "Bins")
    assert json.loads(app.storage[STATE_PATH])["alarms"][-1] == {"hour": 8, "label": "Bins", "enabled": True}


def test_push_launch_pull_through_the_real_protocol(fake_adb, tmp_path) -> None:
    local = tmp_path / "state.json"
    local.write_text(json.dumps(START))
    env = _env(fake_adb)
    env.push_file(local, STATE_PATH)
    assert fake_adb.device.app.vibrate is True  # pushed, but the running app has not reloaded
    env.launch_app("com.example.clock")
    assert fake_adb.device.app.vibrate is False and fake_adb.device.app.dark is True
    assert [c.split(";")[0] for c in fake_adb.device.commands[-2:]] == [
        "am force-stop com.example.clock", "monkey -p com.example.clock -c android.intent.category.LAUNCHER 1"]
    back = tmp_path / "out" / "state.json"
    assert env.pull_file(STATE_PATH, back) and json.loads(back.read_text()) == START
    assert env.pull_file("/sdcard/nothing.json", tmp_path / "none.json") is False
    assert not (tmp_path / "none.json").exists()


def test_launching_an_app_that_is_not_installed_is_an_error(fake_adb) -> None:
    import pytest

    from agentlab.errors import EnvironmentUnavailableError

    with pytest.raises(EnvironmentUnavailableError, match="cannot start app com.example.maps"):
        _env(fake_adb).launch_app("com.example.maps")
    d = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port).device()
    assert "Starting: Intent" in d.shell("am start -n com.example.clock/.MainActivity")
