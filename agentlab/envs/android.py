"""AndroidEnv: act on a phone over adb (adbutils), AppAgent-style, by element number.

Each observation is a ``screencap`` screenshot plus a ``uiautomator dump`` turned into
numbered elements (:mod:`agentlab.envs.android_ui`); actions are AppAgent's phone space
(:mod:`agentlab.envs.actions.phone`). The device quirks AppAgent users hit are handled here, once:

* ``uiautomator dump`` exits non-zero on some ROMs although the XML is fine: we pull and
  validate the file rather than trusting the exit status;
* dumps fail ("could not get idle state") while the screen animates: retried with back-off;
* ``input text`` splits on spaces and cannot type non-ASCII: spaces become ``%s``, the
  argument is shell-quoted, a literal ``%s`` is typed in two pieces, newlines become ENTER,
  and a character that cannot be typed raises :class:`InvalidActionError` naming it (or use
  ``ime="adbkeyboard"`` with the ADBKeyboard IME installed, which types any Unicode);
* typing with no focused field is silently lost on a phone: the first text field is tapped
  first;
* a device that drops off mid-episode raises :class:`DeviceDisconnectedError`, naming it and the
  step: its listing on the adb server is checked before every action (it may have gone while the
  model was thinking), and an adb failure that finds it gone is one too.

Besides acting, the env moves files over the adb sync protocol (:meth:`AndroidEnv.push_file`,
:meth:`AndroidEnv.pull_file`) and restarts apps (:meth:`AndroidEnv.launch_app`), so a task's
start state can be put on the device and its end state read back.
"""

from __future__ import annotations

import base64
import io
import logging
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from PIL import Image, UnidentifiedImageError

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.phone import PHONE, Back, Finish, LongPress, Swipe, Tap, Text
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.android_ui import (
    UINode,
    editables,
    focused_editable,
    parse_hierarchy,
    screen_signature,
    select_elements,
)
from agentlab.envs.base import Env, Observation, StepResult
from agentlab.errors import (
    AgentlabError,
    DataError,
    DeviceDisconnectedError,
    EnvironmentUnavailableError,
    InvalidActionError,
)

log = logging.getLogger(__name__)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DUMP_PATH = "/data/local/tmp/agentlab_uidump.xml"
KEYCODE_BACK, KEYCODE_ENTER, KEYCODE_TAB = 4, 66, 61
#: Swipe length in tenths of the screen width (AppAgent's unit).
SWIPE_UNITS = {"short": 1, "medium": 2, "long": 3}


class AndroidEnv(Env):
    """A phone reachable through an adb server (``adb devices`` lists it)."""

    @property
    def actions(self) -> ActionSpace:
        return PHONE

    def __init__(
        self,
        serial: str | None = None,
        adb_host: str = "127.0.0.1",
        adb_port: int = 5037,
        *,
        ime: Literal["input", "adbkeyboard"] = "input",
        dump_retries: int = 3,
        retry_delay: float = 0.5,
        settle: float = 0.5,
        min_dist: float = 30.0,
        long_press_s: float = 1.0,
        swipe_s: float = 0.4,
        socket_timeout: float = 30.0,
    ) -> None:
        if ime not in ("input", "adbkeyboard"):
            raise EnvironmentUnavailableError(f"unknown ime {ime!r}; use 'input' or 'adbkeyboard'")
        self.serial = serial
        self.adb_host, self.adb_port = adb_host, adb_port
        self.ime = ime
        self.dump_retries, self.retry_delay, self.settle = dump_retries, retry_delay, settle
        self.min_dist, self.long_press_s, self.swipe_s = min_dist, long_press_s, swipe_s
        self._client = _client(adb_host, adb_port, socket_timeout)
        self._dev: Any = None
        self._size: tuple[int, int] | None = None
        self._last: Observation | None = None
        self._nodes: list[UINode] = []
        self.task: str | None = None
        #: actions asked for since the last reset (the step a disconnect is reported in)
        self.steps_taken = 0

    # ------------------------------------------------------------------ connection
    @property
    def where(self) -> str:
        return f"adb {self.adb_host}:{self.adb_port}" + (f" serial {self.serial}" if self.serial else "")

    def _list(self) -> list[Any]:
        from adbutils.errors import AdbError

        try:
            return list(self._client.list())
        except (AdbError, OSError) as exc:
            raise EnvironmentUnavailableError(
                f"no adb server answers at {self.adb_host}:{self.adb_port} ({exc}); start one with "
                "`adb start-server` and check `adb devices`",
                where=self.where,
            ) from None

    def _device(self) -> Any:
        if self._dev is not None:
            return self._dev
        infos = self._list()
        if self.serial is None:
            ready = [i for i in infos if i.state == "device"]
            if not ready:
                extra = "; ".join(f"{i.serial} is {i.state}" for i in infos)
                raise EnvironmentUnavailableError(
                    "no Android device is ready"
                    + (f" ({extra}: accept the USB-debugging prompt on the phone)" if extra else "")
                    + "; connect one with USB debugging on and check `adb devices`",
                    where=self.where,
                )
            if len(ready) > 1:
                raise EnvironmentUnavailableError(
                    f"{len(ready)} devices are connected ({', '.join(i.serial for i in ready)}); pass serial=",
                    where=self.where,
                )
            self.serial = ready[0].serial
        else:
            match = [i for i in infos if i.serial == self.serial]
            if not match:
                raise EnvironmentUnavailableError(
                    f"device {self.serial!r} is not connected; `adb devices` lists "
                    f"{[i.serial for i in infos] or 'nothing'}",
                    where=self.where,
                )
            if match[0].state != "device":
                raise EnvironmentUnavailableError(
                    f"device {self.serial!r} is {match[0].state}; unlock it and accept the USB-debugging prompt",
                    where=self.where,
                )
        self._dev = self._client.device(serial=self.serial)
        return self._dev

    def _connected(self) -> bool:
        try:
            return any(i.serial == self.serial and i.state == "device" for i in self._client.list())
        except Exception:
            return False

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """Turn adb failures into one clear error; a vanished device is a disconnect."""
        from adbutils.errors import AdbError

        try:
            yield
        except AgentlabError:
            raise
        except (AdbError, OSError, EOFError, UnidentifiedImageError) as exc:
            if not self._connected():
                self._dev = None
                raise DeviceDisconnectedError(
                    f"device {self.serial} disconnected during {what} ({exc}); reconnect it, check "
                    "`adb devices`, and start a new episode",
                    where=self.where,
                ) from None
            raise EnvironmentUnavailableError(f"adb {what} failed: {exc}", where=self.where) from None

    def _sh(self, cmd: str | list[str], what: str) -> tuple[int, str]:
        """Run a shell command, returning (exit status, combined output)."""
        with self._guard(what):
            r = self._device().shell2(cmd)
        return int(r.returncode), str(r.output)

    # ------------------------------------------------------------------ observing
    def screen_size(self) -> tuple[int, int]:
        if self._size is None:
            with self._guard("wm size"):
                ws = self._device().window_size()
            self._size = (int(ws.width), int(ws.height))
        return self._size

    def screenshot(self) -> Image.Image:
        with self._guard("screencap"):
            data = self._device().shell(["screencap", "-p"], encoding=None)
            if not data.startswith(PNG_MAGIC) and b"\r\n" in data:
                data = data.replace(b"\r\n", b"\n")  # old adbd ran shell: through a PTY
            if not data.startswith(PNG_MAGIC):
                raise UnidentifiedImageError(f"screencap returned {len(data)} bytes that are not a PNG")
            img = Image.open(io.BytesIO(data))
            img.load()
        return img.convert("RGB")

    def dump_xml(self) -> str:
        """``uiautomator dump``, robust to the non-zero exit and idle-state quirks."""
        problem = ""
        for attempt in range(self.dump_retries + 1):
            if attempt:
                time.sleep(self.retry_delay * attempt)
            rc, out = self._sh(f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH}", "uiautomator dump")
            xml = self._pull_text(DUMP_PATH)
            if xml and xml.lstrip().startswith("<?xml"):
                try:
                    parse_hierarchy(xml)
                except DataError as exc:
                    problem = f"{exc.message}"
                    continue
                if rc != 0:
                    log.info("uiautomator dump exited %d but wrote valid XML; using it", rc)
                return xml
            problem = out.strip() or f"exit status {rc} and no XML written"
            log.info("uiautomator dump attempt %d failed: %s", attempt + 1, problem)
        raise EnvironmentUnavailableError(
            f"uiautomator dump failed {self.dump_retries + 1} times ({problem}); the screen may be "
            "animating: turn off animations in Developer options, or wait and retry",
            where=self.where,
        )

    def _pull_text(self, path: str) -> str | None:
        """A device file's text, or None when it does not exist (the dump wrote nothing)."""
        from adbutils.errors import AdbError

        with self._guard(f"pulling {path}"):
            try:
                return self._device().sync.read_bytes(path).decode("utf-8", errors="replace")
            except AdbError:
                if self._connected():
                    return None
                raise

    # ------------------------------------------------------------------ files and apps
    def push_file(self, local: str | Path, remote: str) -> None:
        """Copy a local file to ``remote`` (an absolute device path) over adb sync."""
        with self._guard(f"pushing {remote}"):
            self._device().sync.push(Path(local), remote, mode=0o644)

    def pull_file(self, remote: str, local: str | Path) -> bool:
        """Copy device file ``remote`` to ``local``; False (nothing written) when it does not exist."""
        with self._guard(f"pulling {remote}"):
            sync = self._device().sync
            if not sync.stat(remote).mode & stat.S_IFREG:
                return False
            Path(local).parent.mkdir(parents=True, exist_ok=True)
            sync.pull_file(remote, Path(local))
        return True

    def launch_app(self, package: str) -> None:
        """Force-stop ``package`` and start it again on its launcher activity (it reloads its data)."""
        self._sh(["am", "force-stop", package], f"stopping {package}")
        rc, out = self._sh(["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"], f"starting {package}")
        if rc != 0 or "aborted" in out or "No activities" in out:
            raise EnvironmentUnavailableError(f"cannot start app {package} on the device ({out.strip() or f'exit {rc}'}); "
                                              "is it installed?", where=self.where)

    def observe(self) -> Observation:
        shot = self.screenshot()
        xml = self.dump_xml()
        roots = parse_hierarchy(xml)
        elements = select_elements(roots, self.min_dist)
        self._nodes = roots
        package = next((n.package for r in roots for n in r.walk() if n.package), "")
        focus = focused_editable(roots)
        text = f"App: {package}" if package else ""
        if focus is not None:
            text += f"\nFocused field: {focus.resource_id or focus.cls} = {focus.text!r}"
        obs = Observation(
            screenshot=shot,
            elements=elements,
            text=text.strip(),
            info={
                "platform": "android",
                "serial": self.serial,
                "package": package,
                "screen_size": list(shot.size),
                "xml": xml,
                "signature": screen_signature(roots),
            },
        )
        self._last = obs
        return obs

    # ------------------------------------------------------------------ episode
    def reset(self, task: str | None = None) -> Observation:
        self.task = task
        self.steps_taken = 0
        self._device()
        return self.observe()

    def check_connected(self) -> None:
        """Raise :class:`DeviceDisconnectedError` when the device is no longer listed as ready on
        the adb server: nothing is sent to (or read from) a phone that is gone."""
        if self._dev is not None and not self._connected():
            self._dev = None
            raise DeviceDisconnectedError(
                f"device {self.serial} disconnected before step {self.steps_taken}; reconnect it, check "
                "`adb devices`, and start a new episode", where=self.where)

    def step(self, action: Action) -> StepResult:
        self.steps_taken += 1
        self.check_connected()
        obs = self._last or self.observe()
        info: dict[str, Any] = {"action": action.describe()}
        if isinstance(action, Tap):
            x, y = obs.element(action.element).center
            self._input(["input", "tap", str(x), str(y)], "tap")
        elif isinstance(action, LongPress):
            x, y = obs.element(action.element).center
            ms = str(int(self.long_press_s * 1000))
            self._input(["input", "swipe", str(x), str(y), str(x), str(y), ms], "long press")
        elif isinstance(action, Swipe):
            self._swipe(obs, action)
        elif isinstance(action, Text):
            info.update(self._type(obs, action.text))
        elif isinstance(action, Back):
            self._input(["input", "keyevent", str(KEYCODE_BACK)], "back")
        elif isinstance(action, Finish):
            return StepResult(observation=obs, done=True, info=info)
        else:
            raise InvalidActionError(
                f"{action.call_name}() is not a phone action; AndroidEnv takes "
                + PHONE.call_names()
            )
        if self.settle:
            time.sleep(self.settle)
        new = self.observe()
        if isinstance(action, Text) and "typed_into" in info:
            field = focused_editable(self._nodes)
            if field is None or action.text not in field.text:
                info["warning"] = "the text does not show in the focused field (password field, or the IME dropped it)"
        return StepResult(observation=new, done=False, info=info)

    def close(self) -> None:
        self._dev = None
        self._last = None

    # ------------------------------------------------------------------ actions
    def _input(self, argv: list[str], what: str) -> None:
        rc, out = self._sh(argv, what)
        if rc != 0 or "Exception" in out:
            raise EnvironmentUnavailableError(f"`{' '.join(argv)}` failed on the device: {out.strip()}", where=self.where)

    def _swipe(self, obs: Observation, action: Swipe) -> None:
        x, y = obs.element(action.element).center
        w, h = self.screen_size()
        off = SWIPE_UNITS[action.distance] * w // 10
        dx, dy = {"up": (0, -off), "down": (0, off), "left": (-off, 0), "right": (off, 0)}[action.direction]
        x2, y2 = min(max(x + dx, 0), w - 1), min(max(y + dy, 0), h - 1)
        ms = str(int(self.swipe_s * 1000))
        self._input(["input", "swipe", str(x), str(y), str(x2), str(y2), ms], "swipe")

    def _ensure_focus(self) -> dict[str, Any]:
        """Tap the first text field when none has focus (typing into nothing is lost)."""
        field = focused_editable(self._nodes)
        if field is not None:
            return {"typed_into": field.resource_id or field.cls}
        fields = editables(self._nodes)
        if not fields:
            raise InvalidActionError("there is no text field on this screen to type into; open one first")
        target = fields[0]
        x, y = target.center
        self._input(["input", "tap", str(x), str(y)], "focusing the text field")
        if self.settle:
            time.sleep(min(self.settle, 0.3))
        return {"typed_into": target.resource_id or target.cls, "focused_first": True}

    def _type(self, obs: Observation, text: str) -> dict[str, Any]:
        if not text:
            raise InvalidActionError("text(\"\") types nothing")
        if self.ime == "input":
            check_typeable(text)
        info = self._ensure_focus()
        if self.ime == "adbkeyboard":
            b64 = base64.b64encode(text.encode("utf-8")).decode("ascii")
            rc, out = self._sh(["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", b64], "ADBKeyboard text")
            if rc != 0:
                raise EnvironmentUnavailableError(f"ADBKeyboard broadcast failed: {out.strip()}", where=self.where)
            return info
        for kind, piece in input_text_pieces(text):
            if kind == "key":
                self._input(["input", "keyevent", piece], "key event")
            else:
                self._input(["input", "text", piece], "input text")
        return info


def _client(host: str, port: int, socket_timeout: float) -> Any:
    """An adbutils client that never starts an adb daemon.

    When a connection fails, adbutils runs ``adb start-server``, which starts a daemon on the
    default port 5037 whatever port was asked for, and leaves it running after we exit. An
    unreachable server is reported instead (see ``AndroidEnv._list``).
    """
    import adbutils
    from adbutils._adb import AdbConnection
    from adbutils.errors import AdbTimeout

    class _Connection(AdbConnection):
        def _safe_connect(self) -> Any:
            return self._create_socket()

    class _Client(adbutils.AdbClient):
        def make_connection(self, timeout: float | None = None) -> AdbConnection:
            try:
                conn = _Connection(self.host, self.port)
            except TimeoutError:
                raise AdbTimeout("connect to adb server timeout") from None
            if timeout or socket_timeout:
                conn.conn.settimeout(timeout or socket_timeout)
            return conn

    return _Client(host=host, port=port, socket_timeout=socket_timeout)


def check_typeable(text: str) -> None:
    """Raise :class:`InvalidActionError` naming the first character ``input text`` can't type."""
    for i, ch in enumerate(text):
        if ch in "\n\t":
            continue
        if ord(ch) > 126 or ord(ch) < 32:
            raise InvalidActionError(
                f"cannot type {ch!r} (U+{ord(ch):04X}, position {i + 1} of {text!r}) with `adb shell input text`: "
                "it only types printable ASCII. Install the ADBKeyboard IME on the phone and use "
                "AndroidEnv(ime='adbkeyboard') to type any Unicode"
            )


def input_text_pieces(text: str) -> list[tuple[str, str]]:
    """Split text into ``input text`` arguments and key events.

    Spaces become ``%s`` (``input text`` splits its argument on spaces); a literal ``%s``
    is sent as ``%`` then ``s`` so it is not turned into a space; ``\\n``/``\\t`` become
    ENTER/TAB key events. Shell quoting of each piece is done by adbutils (``shlex.quote``).
    """
    out: list[tuple[str, str]] = []
    for line_i, line in enumerate(text.split("\n")):
        if line_i:
            out.append(("key", str(KEYCODE_ENTER)))
        for tab_i, seg in enumerate(line.split("\t")):
            if tab_i:
                out.append(("key", str(KEYCODE_TAB)))
            parts = seg.split("%s")
            for k, part in enumerate(parts):
                piece = ("s" if k else "") + part + ("%" if k < len(parts) - 1 else "")
                if piece:
                    out.append(("text", piece.replace(" ", "%s")))
    return out
