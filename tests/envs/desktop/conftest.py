"""A real X server for desktop tests: one Xvfb + session bus per module, apps per test."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.xdisplay import VirtualDisplay, xvfb_available


@pytest.fixture(scope="module")
def xdisplay():
    reason = xvfb_available()
    if reason:
        pytest.skip(f"no X server for desktop tests: {reason}")
    with VirtualDisplay(width=1280, height=800) as disp:
        yield disp


@pytest.fixture
def needs_a11y():
    reason = pyatspi_available()
    if reason:
        pytest.skip(f"no accessibility tree: {reason}")


class DemoApp:
    """The shipped GTK demo, with its state file."""

    def __init__(self, disp: VirtualDisplay, state: Path) -> None:
        self.state_path = state
        self.proc = disp.launch_demo_app(state)

    def state(self) -> dict:
        return json.loads(self.state_path.read_text())

    def wait_for(self, key: str, value, timeout_s: float = 5.0) -> dict:
        deadline = time.monotonic() + timeout_s
        st = self.state()
        while st.get(key) != value and time.monotonic() < deadline:
            time.sleep(0.05)
            st = self.state()
        return st


@pytest.fixture
def demo_app(xdisplay, tmp_path):
    app = DemoApp(xdisplay, tmp_path / "demo_state.json")
    yield app
    xdisplay.stop_app(app.proc)
