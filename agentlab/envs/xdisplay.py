"""A private X desktop for tests, notebooks and headless runs: Xvfb plus a session D-Bus.

``with virtual_display() as disp:`` starts Xvfb on a free display number (Xvfb picks it
itself through ``-displayfd``, so parallel runs never collide), an empty ``XAUTHORITY`` file
(without one, python-xlib refuses to connect as root), and a private session D-Bus so that
accessibility (AT-SPI) works and nothing is auto-launched on someone else's bus. Apps
started with :meth:`VirtualDisplay.launch` get that environment and are stopped, with their
whole process group, when the display closes. ``DesktopEnv(display=disp)`` acts on it.

No window manager runs: windows open at (0, 0) and focus follows the pointer, so agents
(and tests) click into a window before typing and click dialog buttons instead of pressing
Enter.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.errors import EnvironmentUnavailableError

log = logging.getLogger(__name__)

#: The small GTK app shipped for demos and tests (run with the system Python, which has gi).
DEMO_APP = Path(__file__).with_name("demo_gtk.py")
SYSTEM_PYTHON = "/usr/bin/python3"


def xvfb_available() -> str | None:
    """None when Xvfb can run here, else the reason it cannot (for skips and errors)."""
    if sys.platform != "linux":
        return "Xvfb is only used on Linux"
    if not shutil.which("Xvfb"):
        return "Xvfb is not installed (Debian: apt-get install xvfb, or run scripts/sysdeps.sh)"
    return None


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 3.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after ``grace_s``."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # children that outlived their leader
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        log.warning("process %s did not exit", proc.pid)


@dataclass
class VirtualDisplay:
    """A running Xvfb (+ session bus). Build it with :func:`virtual_display` or :meth:`start`."""

    width: int = 1280
    height: int = 800
    depth: int = 24
    dbus: bool = True
    display: str = ""
    env: dict[str, str] = field(default_factory=dict)
    #: True for :meth:`attach`: a display someone else runs (we start and stop only our apps)
    attached: bool = False
    _xvfb: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _bus: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _apps: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)
    _tmp: Path | None = field(default=None, repr=False)

    # -- lifecycle -------------------------------------------------------------------
    def start(self, timeout_s: float = 15.0) -> VirtualDisplay:
        reason = xvfb_available()
        if reason:
            raise EnvironmentUnavailableError(reason)
        self._tmp = Path(tempfile.mkdtemp(prefix="agentlab-x-"))
        xauth = self._tmp / "Xauthority"
        xauth.touch()
        read_fd, write_fd = os.pipe()
        try:
            self._xvfb = subprocess.Popen(
                ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{self.width}x{self.height}x{self.depth}",
                 "-nolisten", "tcp", "-noreset", "+extension", "RANDR"],
                pass_fds=(write_fd,),
                stdout=subprocess.DEVNULL,
                stderr=open(self._tmp / "xvfb.log", "wb"),
                start_new_session=True,
            )
        finally:
            os.close(write_fd)
        number = self._read_display_number(read_fd, timeout_s)
        self.display = f":{number}"
        # Apps inherit our environment minus anything pointing at another session (a person's
        # bus or Wayland socket) or disabling the accessibility bridge.
        drop = ("DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY", "NO_AT_BRIDGE")
        base = {k: v for k, v in os.environ.items() if k not in drop}
        self.env = {**base, "DISPLAY": self.display, "XAUTHORITY": str(xauth), "XDG_SESSION_TYPE": "x11"}
        if self.dbus:
            self._start_bus(timeout_s)
        log.info("virtual display %s (%dx%d) ready", self.display, self.width, self.height)
        return self

    def _read_display_number(self, fd: int, timeout_s: float) -> int:
        import select

        buf = b""
        deadline = time.monotonic() + timeout_s
        try:
            while not buf.endswith(b"\n"):
                left = deadline - time.monotonic()
                ready, _, _ = select.select([fd], [], [], max(left, 0))
                chunk = os.read(fd, 64) if ready else b""
                if not chunk:
                    log_text = (self._tmp / "xvfb.log").read_text(errors="replace")[-500:] if self._tmp else ""
                    self.stop()
                    raise EnvironmentUnavailableError(f"Xvfb did not start within {timeout_s:.0f}s: {log_text.strip()}")
                buf += chunk
        finally:
            os.close(fd)
        return int(buf.strip())

    def _start_bus(self, timeout_s: float) -> None:
        exe = shutil.which("dbus-daemon")
        if not exe:
            log.warning("dbus-daemon missing: no accessibility tree on this display")
            return
        self._bus = subprocess.Popen(
            [exe, "--session", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            start_new_session=True,
        )
        assert self._bus.stdout is not None
        import select

        ready, _, _ = select.select([self._bus.stdout], [], [], timeout_s)
        line = self._bus.stdout.readline().decode().strip() if ready else ""
        if not line:
            self.stop()
            raise EnvironmentUnavailableError("the session D-Bus daemon did not start")
        self.env["DBUS_SESSION_BUS_ADDRESS"] = line

    def stop(self) -> None:
        """Stop launched apps, the bus (and the AT-SPI services it activated), then Xvfb."""
        for proc in reversed(self._apps):
            _stop(proc)
        self._apps.clear()
        if self._bus is not None:
            _stop(self._bus)
            self._bus = None
        if self._xvfb is not None:
            _stop(self._xvfb)
            self._xvfb = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    @classmethod
    def attach(cls, display: str) -> VirtualDisplay:
        """An X display that is already running (a person's own screen, ``":0"``): apps are
        launched on it and stopped as on a private one, but nothing else is started, and
        :meth:`stop` stops only those apps. Our environment is used as it is (its XAUTHORITY
        and session bus, so the person's accessibility tree), with DISPLAY set."""
        env = {**os.environ, "DISPLAY": display}
        return cls(display=display, env=env, dbus=False, attached=True)

    def __enter__(self) -> VirtualDisplay:
        return self if self._xvfb is not None or self.attached else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- apps ------------------------------------------------------------------------
    def launch(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
               log_path: str | Path | None = None) -> subprocess.Popen[bytes]:
        """Start an app on this display (its own process group; stopped with the display)."""
        out = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(argv, env={**self.env, **(env or {})}, cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT if log_path else subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            raise EnvironmentUnavailableError(f"cannot start {argv[0]}: {exc}") from None
        self._apps.append(proc)
        return proc

    def stop_app(self, proc: subprocess.Popen[bytes]) -> None:
        _stop(proc)
        if proc in self._apps:
            self._apps.remove(proc)

    def press_in(self, window: str, keys: str) -> bool:
        """Press ``keys`` (xdotool spelling, ``ctrl+q``) in ``window``: with no window manager the
        keyboard follows the pointer, so the pointer is moved into the window first. False when
        xdotool could not (the window is gone)."""
        for cmd in (["mousemove", "--window", window, "40", "10"], ["key", "--clearmodifiers", keys]):
            r = subprocess.run(["xdotool", *cmd], env=self.env, capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                return False
            time.sleep(0.2)
        return True

    def quit_app(self, proc: subprocess.Popen[bytes], grace_s: float, *, window: str = "", keys: str = "") -> bool:
        """Ask an app to quit as a person or a session manager would: its own quit shortcut
        (``keys`` pressed in ``window``) when given, else SIGTERM to its main process only (not its
        helpers, which it shuts down itself after writing its state); up to ``grace_s`` to exit,
        then :meth:`stop_app` for whatever is left. True when it exited by itself."""
        clean = False
        if keys and window and proc.poll() is None and self.press_in(window, keys):
            try:
                proc.wait(timeout=grace_s)
                clean = True
            except subprocess.TimeoutExpired:
                log.warning("process %s did not quit within %.0fs of %s", proc.pid, grace_s, keys)
        if not clean and proc.poll() is None:
            try:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=grace_s)
                clean = True
            except subprocess.TimeoutExpired:
                log.warning("process %s did not quit within %.0fs of SIGTERM", proc.pid, grace_s)
            except ProcessLookupError:
                pass
        self.stop_app(proc)
        return clean

    def launch_demo_app(self, state_path: str | Path, title: str = "agentlab demo") -> subprocess.Popen[bytes]:
        """The shipped GTK demo (buttons, an entry, a check box) that writes its state as JSON
        to ``state_path`` after every change; returns once its window is mapped."""
        if not Path(SYSTEM_PYTHON).exists():
            raise EnvironmentUnavailableError(f"{SYSTEM_PYTHON} (with python3-gi) is needed for the GTK demo app")
        proc = self.launch([SYSTEM_PYTHON, str(DEMO_APP), "--state", str(state_path), "--title", title])
        self.wait_for_window(title, proc=proc)
        return proc

    def wait_for_window(self, name: str, timeout_s: float = 30.0, proc: subprocess.Popen[bytes] | None = None) -> str:
        """Wait until a window whose title contains ``name`` is mapped; returns its X id."""
        if not shutil.which("xdotool"):
            raise EnvironmentUnavailableError("xdotool is needed to find windows (apt-get install xdotool)")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise EnvironmentUnavailableError(f"the app exited (status {proc.returncode}) before showing {name!r}")
            r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name], env=self.env,
                               capture_output=True, text=True, timeout=10)
            ids = r.stdout.split()
            if ids:
                return ids[-1]
            time.sleep(0.2)
        raise EnvironmentUnavailableError(f"no window named {name!r} appeared on {self.display} within {timeout_s:.0f}s")

    def window_names(self) -> list[str]:
        """Titles of the visible top-level windows (for diagnostics)."""
        r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "."], env=self.env,
                           capture_output=True, text=True, timeout=10)
        names = []
        for wid in r.stdout.split():
            n = subprocess.run(["xdotool", "getwindowname", wid], env=self.env, capture_output=True, text=True, timeout=10)
            if n.stdout.strip():
                names.append(n.stdout.strip())
        return names


@contextmanager
def virtual_display(width: int = 1280, height: int = 800, *, dbus: bool = True) -> Iterator[VirtualDisplay]:
    """``with virtual_display() as disp: DesktopEnv(display=disp) ...`` (stopped at exit)."""
    disp = VirtualDisplay(width=width, height=height, dbus=dbus).start()
    try:
        yield disp
    finally:
        disp.stop()
