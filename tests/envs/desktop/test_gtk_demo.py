"""DesktopEnv on a real X server (Xvfb) driving a real GTK app through pyautogui, with the
app's elements read from AT-SPI; the app's own state file is the ground truth."""

from __future__ import annotations

import pytest

from agentlab.envs.actions.desktop import Click, DoubleClick, Hotkey, SelectText, Stop, Type
from agentlab.envs.desktop import DesktopEnv
from agentlab.errors import InvalidActionError

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120)]  # a wedged X connection fails, not hangs


def by_text(obs, text, role=None):
    for el in obs.elements:
        if el.text.startswith(text) and (role is None or el.role == role):
            return el
    raise AssertionError(f"no element {text!r} in:\n{obs.summary()}")


def test_elements_come_from_the_accessibility_tree(xdisplay, demo_app, needs_a11y):
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    obs = env.reset()
    assert obs.info["source"] == "a11y" and obs.screenshot.size == (1280, 800)
    roles = {(e.role, e.text) for e in obs.elements}
    assert {("push button", "Add one"), ("push button", "Greet"), ("push button", "Reset"),
            ("check box", "Dark mode"), ("text", "Name")} <= roles
    assert [e.id for e in obs.elements] == list(range(1, len(obs.elements) + 1))
    add, greet = by_text(obs, "Add one"), by_text(obs, "Greet")
    assert add.clickable and by_text(obs, "Name").focusable and not by_text(obs, "Name").clickable
    # boxes are real screen positions: inside the window at (0, 0), Greet below Add one
    assert 0 <= add.bbox[0] < add.bbox[2] <= 460 and 0 <= add.bbox[1] < add.bbox[3] <= 260
    assert greet.bbox[1] > add.bbox[1] and add.id < greet.id
    # the screenshot shows the window (GTK's light background), not an empty black screen
    assert sum(obs.screenshot.crop(add.bbox).convert("L").histogram()[i] * i for i in range(256)) / (add.width * add.height) > 100
    assert "Count: 0" in obs.text


def test_click_type_select_by_element_number(xdisplay, demo_app, needs_a11y):
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    obs = env.reset()
    res = env.step(Click(element=by_text(obs, "Add one").id))
    assert res.info["executed"] and not res.done
    assert demo_app.wait_for("count", 1)["count"] == 1
    assert "Count: 1" in res.observation.text  # the next observation shows the effect

    obs = env.step(Type("Ana Lopez", element=by_text(obs, "Name").id)).observation
    assert demo_app.wait_for("name", "Ana Lopez")["name"] == "Ana Lopez"
    assert by_text(obs, "Name").text == "Name: Ana Lopez"

    env.step(SelectText("Lopez"))  # through AT-SPI's text interface
    env.step(Type("Li"))  # replaces the selection
    assert demo_app.wait_for("name", "Ana Li")["name"] == "Ana Li"

    obs = env.step(Click(element=by_text(env.observe(), "Greet").id)).observation
    assert demo_app.wait_for("greeting", "Hello, Ana Li!")["greeting"] == "Hello, Ana Li!"
    obs = env.step(DoubleClick(element=by_text(obs, "Dark mode").id)).observation
    assert demo_app.wait_for("dark_mode", False)["dark_mode"] is False  # toggled twice
    env.step(Click(element=by_text(obs, "Dark mode").id))
    assert demo_app.wait_for("dark_mode", True)["dark_mode"] is True


def test_hotkey_and_non_ascii_typing(xdisplay, demo_app, needs_a11y):
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    obs = env.reset()
    env.step(Type("first", element=by_text(obs, "Name").id))
    demo_app.wait_for("name", "first")
    env.step(Hotkey("ctrl", "a"))
    env.step(Type("José Ørsted"))  # not on the key map: bound to spare keycodes
    assert demo_app.wait_for("name", "José Ørsted")["name"] == "José Ørsted"
    env.step(Hotkey("ctrl", "a"))
    # '<' sits unshifted on Xvfb's 102nd key: pyautogui's shift would make it '>'
    env.step(Type("wc -l < in > out | x"))
    assert demo_app.wait_for("name", "wc -l < in > out | x")["name"] == "wc -l < in > out | x"
    with pytest.raises(InvalidActionError, match="unknown key"):
        env.step(Hotkey("ctrl", "banana"))


def test_click_by_coordinates_and_confirm_decline(xdisplay, demo_app, needs_a11y):
    asked = []
    answers = iter([False, True])
    env = DesktopEnv(display=xdisplay, app="demo_gtk",
                     confirm_fn=lambda desc, action: asked.append(desc) or next(answers))
    obs = env.reset()
    x, y = by_text(obs, "Add one").center
    res = env.step(Click(x=x, y=y))
    assert res.info["skipped"] and not res.info["executed"]
    assert demo_app.state()["count"] == 0, "a declined click must not reach the app"
    res = env.step(Click(x=x, y=y))
    assert res.info["executed"] and demo_app.wait_for("count", 1)["count"] == 1
    assert asked == [f"click ({x}, {y})"] * 2
    assert env.step(Stop()).done and len(asked) == 2  # stopping needs no confirmation


def test_grid_fallback_when_no_app_is_accessible(xdisplay, demo_app):
    env = DesktopEnv(display=xdisplay, app="no-such-app", grid=(4, 6))
    obs = env.reset()
    assert obs.info["source"] == "grid" and len(obs.elements) == 24
    # click the grid cell that holds the "Add one" button's centre... the button is smaller
    # than a cell, so click its point instead and check the cell numbering is screen order
    cell = next(e for e in obs.elements if e.bbox[0] <= 237 < e.bbox[2] and e.bbox[1] <= 33 < e.bbox[3])
    assert cell.id == 2 and cell.role == "grid cell"
    env.step(Click(x=237, y=33))
    assert demo_app.wait_for("count", 1)["count"] == 1


def test_typing_into_a_field_waits_for_its_focus(xdisplay, demo_app, needs_a11y):
    """A click the application handles late (a busy LibreOffice under CI load) must not send the
    text elsewhere: typing into a text field waits until the field has the focus, and clicks it
    once more when the first click came to nothing. Here the first click is lost outright."""
    from agentlab.envs.x11 import PyAutoGuiDriver

    class LosesFirstClick(PyAutoGuiDriver):
        lost = 0

        def click(self, x: int, y: int, clicks: int = 1) -> None:
            if not self.lost:
                self.lost += 1
                return
            super().click(x, y, clicks)

    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    env._driver = LosesFirstClick(env.display, env.env_vars.get("XAUTHORITY"))
    obs = env.reset()
    name = by_text(obs, "Name")
    assert env._focus_target(name.id) is not None  # a focusable field without the focus yet
    assert env._focus_target(by_text(obs, "Add one").id) is None  # a button: nothing to wait for
    env.step(Type("Ana", element=name.id))
    assert env._driver.lost == 1
    assert demo_app.wait_for("name", "Ana")["name"] == "Ana"
