"""Headless Chromium as an offline renderer: figure HTML → PNG, notebook HTML → page screenshot.

Plotly's own PNG export needs kaleido (and a Chrome it downloads); Debian's ``chromium``
already renders the same HTML offline, so one subprocess per picture is all we need. The
flags keep the browser from reaching the network, and every call gets a fresh profile.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from agentlab.errors import EnvironmentUnavailableError

log = logging.getLogger(__name__)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)


def find_chromium() -> str | None:
    """The browser binary: ``AGENTLAB_CHROMIUM`` or the first of chromium/chrome on PATH."""
    env = os.environ.get("AGENTLAB_CHROMIUM")
    if env:
        return env if Path(env).exists() or shutil.which(env) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(args: list[str], where: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    binary = find_chromium()
    if binary is None:
        raise EnvironmentUnavailableError(
            "no Chromium found; install Debian's 'chromium' (scripts/sysdeps.sh) or set AGENTLAB_CHROMIUM"
        )
    env = dict(os.environ)
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    with tempfile.TemporaryDirectory(prefix="agentlab-chromium-") as profile:
        cmd = [binary, *FLAGS, f"--user-data-dir={profile}", *args]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
        except subprocess.TimeoutExpired:
            raise EnvironmentUnavailableError(f"chromium took over {timeout_s:.0f} s", where=where) from None


def dump_dom(html: str | Path, *, budget_ms: int = 5000, timeout_s: float = 90.0) -> str:
    """The page's DOM after its scripts ran (``--dump-dom``): what a reader's browser shows."""
    html = Path(html).resolve()
    if not html.is_file():
        raise EnvironmentUnavailableError("HTML to render does not exist", where=html)
    proc = _run([f"--virtual-time-budget={budget_ms}", "--dump-dom", html.as_uri()], html, timeout_s)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise EnvironmentUnavailableError(f"chromium exited {proc.returncode} without a DOM", where=html)
    return proc.stdout


def screenshot(
    html: str | Path,
    png: str | Path,
    *,
    width: int = 1000,
    height: int = 700,
    budget_ms: int = 5000,
    timeout_s: float = 60.0,
) -> Path:
    """Render a local HTML file in headless Chromium and save a ``width``×``height`` PNG.

    ``budget_ms`` is Chromium's virtual-time budget: scripts (plotly) get that long to draw
    before the picture is taken. Raises :class:`EnvironmentUnavailableError` when no browser
    is installed or it fails to produce the file.
    """
    html, png = Path(html).resolve(), Path(png).resolve()
    if not html.is_file():
        raise EnvironmentUnavailableError("HTML to screenshot does not exist", where=html)
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp_png = png.with_name(f".{png.name}.tmp.png")
    args = [
        f"--window-size={width},{height}",
        f"--virtual-time-budget={budget_ms}",
        f"--screenshot={tmp_png}",
        html.as_uri(),
    ]
    proc = _run(args, html, timeout_s)
    if proc.returncode != 0 or not tmp_png.is_file():
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise EnvironmentUnavailableError(
            f"chromium exited {proc.returncode} without a screenshot ({tail[0][:200]})", where=html
        )
    os.replace(tmp_png, png)
    log.info("screenshot %s -> %s", html.name, png)
    return png
