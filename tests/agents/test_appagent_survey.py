"""The survey (agentlab.agents.appagent.survey): AppAgent's exploration with the reflection read
off the screens, on the protocol-level fake phone (real AndroidEnv, real adbutils, the scripted
clock app) and on hand-made observations."""

from __future__ import annotations

import pytest

from agentlab.agents import DocStore
from agentlab.agents.appagent.survey import DEAD_END, OPENS, SOURCE, describe_effect, survey_app
from agentlab.envs import AndroidEnv
from agentlab.envs.base import Element, Observation

PKG = "com.example.clock"
SETTINGS, DARK, VIBRATE = f"{PKG}.id_settings_btn", f"{PKG}.id_dark_switch", f"{PKG}.id_vibrate_switch"
ABOUT, AD = f"{PKG}.id_about_btn", "ImageView_540_100_Ad"


def _env(server) -> AndroidEnv:
    return AndroidEnv(adb_port=server.port, settle=0, retry_delay=0.01)


def _survey(server, tmp_path, depth: int = 2):
    env = _env(server)

    def relaunch() -> Observation:
        env.launch_app(PKG)
        return env.reset()

    store = DocStore(PKG, tmp_path / "docs")
    return store, survey_app(env, store, depth=depth, relaunch=relaunch)


def _tap(store: DocStore, uid: str) -> str:
    doc = store.get(uid)
    assert doc is not None, f"{uid} was not documented"
    return doc.docs.get("tap", "")


def test_the_survey_documents_settings_the_switches_and_the_dead_ends(fake_adb, tmp_path) -> None:
    app = fake_adb.device.app
    start = app.state()
    store, report = _survey(fake_adb, tmp_path)
    settings = _tap(store, SETTINGS)
    assert settings.startswith(OPENS) and "Dark theme" in settings and "Vibrate" in settings
    assert _tap(store, DARK) == "Switches Dark theme on or off"
    assert _tap(store, VIBRATE) == "Switches Vibrate on or off"
    # the about page and the advert lead nowhere: documented as such at their openers (the paper's BACK)
    assert _tap(store, ABOUT).startswith(DEAD_END) and _tap(store, AD).startswith(DEAD_END)
    assert not _tap(store, f"{PKG}.id_alarms_tab").startswith(DEAD_END)
    # the buttons that change nothing go on the useless list, and get no document
    assert store.useless() == {f"{PKG}.id_install", f"{PKG}.id_licences"}
    assert store.get(f"{PKG}.id_install") is None
    assert _tap(store, "ImageButton_80_80_Navigate_up") == "Goes back to the previous screen"
    row = next(d for d in map(store.get, store.documented()) if d and "long_press" in d.docs)
    assert row.docs["long_press"] == "Shows: Delete" and "tap" not in row.docs
    assert {s for uid in store.documented() for s in (store.get(uid).sources.values())} == {SOURCE}
    # switches flipped back: the app's data is as it was
    assert app.state() == start
    assert report.screens == 5 and set(report.useless) == store.useless()


def test_depth_one_acts_on_the_launch_screen_only(fake_adb, tmp_path) -> None:
    store, report = _survey(fake_adb, tmp_path, depth=1)
    assert {f.level for f in report.findings} == {1}
    assert store.get(DARK) is None  # the settings screen was seen, not surveyed
    assert _tap(store, SETTINGS).startswith(OPENS) and _tap(store, AD).startswith(OPENS)  # not known as dead ends
    assert store.useless() == set()


def _el(i: int, text: str, uid: str, *, state: tuple[str, ...] = (), y: int = 0) -> Element:
    return Element(i, (0, y, 100, y + 40), "button", text, None, True, uid=uid, state=state)


def _obs(*els: Element, sig: str | None = None) -> Observation:
    return Observation(screenshot=None, elements=list(els), info={"signature": sig} if sig else {})


@pytest.mark.parametrize("case", ["nothing", "switch", "opens", "shows"])
def test_effects_are_read_off_the_two_screens(case: str) -> None:
    """Without a dump (a desktop env) the elements' texts are the screen's texts."""
    go = _el(1, "Preferences", "prefs")
    box = _el(2, "Wi-Fi", "wifi", state=("unchecked",), y=50)
    before = _obs(go, box)
    after = {
        "nothing": _obs(go, box),
        "switch": _obs(go, _el(2, "Wi-Fi", "wifi", state=("checked",), y=50)),
        "opens": _obs(_el(1, "Language", "lang"), _el(2, "Fonts", "fonts", y=50)),
        "shows": _obs(go, box, _el(3, "Advanced", "adv", y=100)),
    }[case]
    effect, doc = describe_effect(before, after, go if case != "switch" else box, parent=None)
    want = {"nothing": ("nothing", ""), "switch": ("switch", "Switches Wi-Fi on or off"),
            "opens": ("opens", f"{OPENS}Language, Fonts"), "shows": ("shows", "Shows: Advanced")}[case]
    assert (effect, doc) == want


def test_a_screen_equal_to_the_parent_is_going_back() -> None:
    home = _obs(_el(1, "Home", "home"))
    parent_sig = "\n".join(e.label() for e in home.elements)
    effect, doc = describe_effect(_obs(_el(1, "Navigate up", "up")), home, _el(1, "Navigate up", "up"), parent_sig)
    assert (effect, doc) == ("back", "Goes back to the previous screen")
