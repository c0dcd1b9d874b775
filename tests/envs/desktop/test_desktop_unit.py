"""DesktopEnv's logic without an X server: grid fallback, confirm mode, action checks, and the
accessibility-node conversion (including LibreOffice's shifted boxes)."""

from __future__ import annotations

import builtins

import pytest
from PIL import Image

from agentlab.envs.a11y import A11yNode, fix_vcl_offsets, nodes_to_elements
from agentlab.envs.actions.desktop import DESKTOP, Click, DoubleClick, Drag, Hotkey, Scroll, SelectText, Stop, Type
from agentlab.envs.actions.phone import Tap
from agentlab.envs.desktop import DesktopEnv, grid_elements, terminal_confirm
from agentlab.errors import InvalidActionError


class RecordingDriver:
    """Stands in for pyautogui: records what would have been sent to the machine."""

    def __init__(self, size=(800, 600)):
        self.size = size
        self.calls: list[tuple] = []

    def screenshot(self):
        return Image.new("RGB", self.size, (40, 40, 40))

    def click(self, x, y, clicks=1):
        self.calls.append(("click", x, y, clicks))

    def drag(self, start, end):
        self.calls.append(("drag", start, end))

    def scroll(self, clicks, horizontal, at):
        self.calls.append(("scroll", clicks, horizontal, at))

    def write(self, text):
        self.calls.append(("write", text))

    def hotkey(self, keys):
        self.calls.append(("hotkey", keys))

    def untypeable(self, text):
        return sorted({c for c in text if not c.isascii()})

    def key_names(self):
        return frozenset({"ctrl", "shift", "alt", "enter", "s", "a", "esc", "win", "f5"})


def grid_env(**kw):
    return DesktopEnv(display=":99", a11y="off", grid=(3, 4), driver=RecordingDriver(), settle_s=0, **kw)


def test_grid_covers_the_screen_in_reading_order():
    cells = grid_elements((800, 600), 3, 4)
    assert [c.id for c in cells] == list(range(1, 13))
    assert cells[0].bbox == (0, 0, 200, 200) and cells[-1].bbox == (600, 400, 800, 600)
    assert cells[5].text == "row 2, column 2" and cells[5].center == (300, 300)
    assert sum(c.width * c.height for c in cells) == 800 * 600
    assert all(c.clickable and c.resource_id is None for c in cells)


def test_grid_fallback_observation_and_actions():
    env = grid_env()
    obs = env.reset("anything")
    assert obs.info["source"] == "grid" and len(obs.elements) == 12
    env.step(Click(element=6))
    env.step(DoubleClick(x=10, y=20))
    env.step(Drag(source=1, target=12))
    env.step(Scroll("down", 2, element=1))
    env.step(Scroll("right", 1))
    env.step(Type("hi", element=2))
    env.step(Hotkey("Control", "s"))
    env.step(SelectText(start=(1, 2), end=(30, 40)))
    assert env.driver.calls == [
        ("click", 300, 300, 1), ("click", 10, 20, 2), ("drag", (100, 100), (700, 500)),
        ("scroll", -2, False, (100, 100)), ("scroll", 1, True, None),
        ("click", 300, 100, 1), ("write", "hi"), ("hotkey", ("ctrl", "s")), ("drag", (1, 2), (30, 40)),
    ]


def test_confirm_decline_performs_nothing_and_records_a_skip():
    asked = []
    env = grid_env(confirm_fn=lambda desc, action: asked.append((desc, action)) or False)
    env.reset()
    res = env.step(Click(element=3))
    assert env.driver.calls == []
    assert res.info["skipped"] and not res.info["executed"] and not res.done
    assert asked[0][0] == "click element 3" and isinstance(asked[0][1], Click)
    res = env.step(Stop())
    assert res.done and len(asked) == 1  # ending the episode does not touch the machine


def test_confirm_accept_performs_the_action():
    env = grid_env(confirm_fn=lambda desc, action: True)
    env.reset()
    assert env.step(Hotkey("ctrl", "a")).info["executed"]
    assert env.driver.calls == [("hotkey", ("ctrl", "a"))]


def test_terminal_confirm_default(monkeypatch):
    answers = iter(["y", "", "no", "YES"])
    monkeypatch.setattr(builtins, "input", lambda prompt: next(answers))
    assert [terminal_confirm("click", Stop()) for _ in range(4)] == [True, False, False, True]

    def eof(prompt):
        raise EOFError

    monkeypatch.setattr(builtins, "input", eof)
    assert terminal_confirm("click", Stop()) is False
    assert DesktopEnv(display=":99", confirm=True, driver=RecordingDriver()).confirm_fn is terminal_confirm


@pytest.mark.parametrize(
    "action, match",
    [
        (Click(element=13), "no element 13"),
        (Click(x=900, y=5), "off the 800x600 screen"),
        (Hotkey("ctrl", "banana"), "unknown key"),
        (Type("naïve"), "cannot type 'ï'"),
        (Tap(element=1), "not a desktop action"),
        (SelectText("hello"), "no element on this screen shows the text"),
    ],
)
def test_invalid_actions_fail_clearly_and_do_nothing(action, match):
    env = grid_env(confirm_fn=lambda d, a: pytest.fail("must not ask about an invalid action"))
    env.reset()
    with pytest.raises(InvalidActionError, match=match):
        env.step(action)
    assert env.driver.calls == []


def test_no_display_is_one_clear_line(monkeypatch):
    from agentlab.errors import EnvironmentUnavailableError

    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(EnvironmentUnavailableError, match="no X display: set DISPLAY"):
        DesktopEnv().reset()


def node(path, role, name="", bbox=(0, 0, 10, 10), states=("showing", "visible", "enabled"), actions=(), text=None):
    return A11yNode(tuple(path), len(path), "app", role, name, bbox, frozenset(states), tuple(actions), text)


def test_nodes_to_elements_keeps_interactive_visible_enabled_nodes():
    nodes = [
        node([0], "application", bbox=None, states=()),
        node([0, 0], "frame", "Win", (0, 0, 400, 300)),
        node([0, 0, 0], "push button", "OK", (300, 250, 380, 290), actions=("click",)),
        node([0, 0, 1], "text", "Name", (10, 50, 200, 80), states=("showing", "enabled", "editable", "focusable"), text="Ana"),
        node([0, 0, 2], "push button", "Disabled", (10, 100, 80, 120), states=("showing", "visible")),
        node([0, 0, 3], "push button", "Hidden", (10, 130, 80, 150), states=("visible", "enabled")),
        node([0, 0, 4], "label", "Just text", (10, 10, 100, 30)),
        node([0, 0, 5], "panel", "", (0, 0, 400, 40), actions=("press",)),
        node([0, 0, 6], "menu bar", "", (0, 0, 400, 0)),  # zero size: hides its items
        node([0, 0, 6, 0], "menu", "File", (0, 0, 40, 20)),
        node([0, 0, 7], "check box", "Off screen", (900, 900, 950, 920)),
        node([0, 0, 8], "combo box", "Outer", (10, 200, 100, 230)),
        node([0, 0, 8, 0], "push button", "Inner", (10, 200, 100, 230), actions=("press",)),
    ]
    els, sources = nodes_to_elements(nodes, (800, 600))
    assert [(e.id, e.role, e.text) for e in els] == [
        (1, "text", "Name: Ana"), (2, "push button", "Inner"), (3, "push button", "OK")]
    assert els[0].focusable and not els[0].clickable and els[2].clickable
    assert [s.path for s in sources] == [(0, 0, 1), (0, 0, 8, 0), (0, 0, 0)]
    assert els[2].uid == "app:push button:OK"


def test_vcl_offsets_are_corrected_until_an_embedded_gtk_widget():
    # LibreOffice/gtk3: the VCL root pane reports y=50 under a GTK panel at y=75; everything
    # VCL draws is 25 px too high, an embedded GTK entry reports its true position.
    nodes = [
        node([0], "application", bbox=None),
        node([0, 0], "panel", "", (57, 75, 1222, 750)),
        node([0, 0, 0], "root pane", "Calc", (57, 50, 1222, 725)),
        node([0, 0, 0, 0], "push button", "Save", (149, 52, 193, 87)),
        node([0, 0, 0, 1], "panel", "", (61, 130, 223, 164)),
        node([0, 0, 0, 1, 0], "panel", "", (61, 155, 223, 189)),
        node([0, 0, 0, 1, 0, 0], "text", "", (61, 155, 187, 189)),
    ]
    fixed = {n.path: n.bbox for n in fix_vcl_offsets(nodes)}
    assert fixed[(0, 0, 0)] == (57, 75, 1222, 750)
    assert fixed[(0, 0, 0, 0)] == (149, 77, 193, 112)
    assert fixed[(0, 0, 0, 1)] == (61, 155, 223, 189)
    assert fixed[(0, 0, 0, 1, 0)] == (61, 155, 223, 189)  # true from here on
    assert fixed[(0, 0, 0, 1, 0, 0)] == (61, 155, 187, 189)
    plain = [node([0], "application", bbox=None), node([0, 0], "frame", "", (0, 0, 100, 100)),
             node([0, 0, 0], "push button", "x", (5, 5, 20, 20))]
    assert fix_vcl_offsets(plain) == plain


def test_desktop_env_hands_out_the_desktop_space():
    assert grid_env().actions is DESKTOP


def test_a_black_screen_grabbed_before_the_listed_windows_painted_is_grabbed_again(monkeypatch):
    """On a loaded machine the first grab can come before the app's window paints while the
    accessibility tree, read after it, already lists its buttons: an all-black screenshot with
    elements is grabbed once more (CI saw the demo app's 'Add one' button as black pixels)."""
    from agentlab.envs.a11y import A11yTree

    class LatePaint(RecordingDriver):
        grabs = 0

        def screenshot(self):
            LatePaint.grabs += 1
            return Image.new("RGB", self.size, (0, 0, 0) if LatePaint.grabs == 1 else (230, 230, 230))

    node = A11yNode(path=(0, 0), depth=1, app="demo", role="push button", name="Add one", bbox=(10, 10, 90, 40),
                    states=frozenset({"showing", "visible", "enabled", "sensitive"}), actions=("click",))
    env = DesktopEnv(display=":99", a11y="on", driver=LatePaint(), settle_s=0)
    monkeypatch.setattr(env, "accessibility_tree", lambda: A11yTree(nodes=[node], apps=["demo"]))
    obs = env.observe()
    assert obs.info["source"] == "a11y" and obs.info["regrabbed"] and LatePaint.grabs == 2
    assert obs.screenshot.getpixel((50, 20)) == (230, 230, 230)
    again = env.observe()  # a screen that is painted is grabbed once
    assert "regrabbed" not in again.info and LatePaint.grabs == 3
