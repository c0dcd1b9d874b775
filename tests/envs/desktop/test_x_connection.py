"""X connection failures become one clear line (checked in a fresh interpreter each, since
pyautogui connects at import time)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120)]  # a wedged X connection fails, not hangs

SNIPPET = """
from agentlab.envs.desktop import DesktopEnv
from agentlab.errors import AgentlabError
try:
    obs = DesktopEnv(display={display!r}, a11y="off").reset()
except AgentlabError as e:
    print("ERR", type(e).__name__, e)
else:
    print("OK", obs.screenshot.size)
"""


def run(display, xauthority):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["XAUTHORITY"] = xauthority
    r = subprocess.run([sys.executable, "-c", SNIPPET.format(display=display)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert "Traceback" not in r.stderr, r.stderr
    return r.stdout.strip()


def test_connection_errors_are_one_line(xdisplay, tmp_path):
    good = xdisplay.env["XAUTHORITY"]
    assert run(xdisplay.display, good) == "OK (1280, 800)"
    out = run(xdisplay.display, str(tmp_path / "missing" / "Xauthority"))
    assert out.startswith("ERR EnvironmentUnavailableError") and "set XAUTHORITY" in out
    dead = f":{int(xdisplay.display[1:]) + 57}"
    out = run(dead, good)
    assert out.startswith("ERR EnvironmentUnavailableError") and f"cannot connect to X display {dead}" in out
