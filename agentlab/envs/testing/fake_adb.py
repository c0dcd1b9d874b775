"""A protocol-level fake adb server: real TCP, the real adb host protocol, a scripted phone.

No Android device or emulator can run on the CI machine, so the tests point the *real*
adbutils client at this server instead of ``adb`` (``ADBUTILS_ADB_PATH=/bin/false`` stops
adbutils from starting a daemon). It speaks the documented wire protocol — requests are
4 hex digits of length + ASCII, replies ``OKAY`` or ``FAIL`` + length + message — and
implements the services adbutils uses:

* host services: ``host:version``, ``host:devices``, ``host:devices-l``, ``host:features``,
  ``host-serial:<s>:{features,get-state,get-serialno}``, ``host:kill``;
* transport selection on the same socket: ``host:tport:serial:<s>`` (OKAY + 8-byte id),
  ``host:tport:any``, ``host:transport:<s>``, ``host:transport-any``;
* device services: ``shell:<cmd>`` (raw output until close), ``shell,v2[,opts]:<cmd>``
  (stdout/stderr/exit packets), ``sync:`` with ``STAT``/``RECV``/``SEND``/``LIST``/``QUIT``.

Shell command lines are tokenised like ``sh`` does (quotes, ``;``, ``&&``, ``||``) and run
against a tiny device model: ``screencap -p``, ``uiautomator dump``, ``input
tap|swipe|text|keyevent``, ``am broadcast`` (ADBKeyboard), ``am start`` / ``monkey -p`` (launch
the app: it loads its saved data), ``am force-stop``, ``wm size``, ``dumpsys display``,
``getprop``, ``rm``, ``echo``. Knobs reproduce the real-device quirks agents must survive:
``dump_exit_nonzero`` (valid XML, exit status 1), ``dump_idle_failures`` (N dumps fail with
"could not get idle state" as on animated screens), ``adbkeyboard`` (IME installed or not),
``disconnect_after`` (the device drops off the bus after N more shell commands).
"""

from __future__ import annotations

import base64
import shlex
import socket
import socketserver
import stat
import struct
import threading
import time
from dataclasses import dataclass, field

from agentlab.envs.testing.fake_app import PKG, ClockApp

ADB_VERSION = 41


@dataclass
class FakeDevice:
    serial: str = "emulator-5554"
    app: ClockApp = field(default_factory=ClockApp)
    files: dict[str, bytes] = field(default_factory=dict)
    online: bool = True
    transport_id: int = 1
    # quirks
    dump_exit_nonzero: bool = False
    dump_idle_failures: int = 0
    adbkeyboard: bool = False
    disconnect_after: int | None = None
    # what the client asked for, in order (for tests that check the wire traffic)
    commands: list[str] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.app.storage = self.files  # the app keeps its data on this device's storage

    # ------------------------------------------------------------------ shell model
    def run_shell(self, line: str) -> tuple[bytes, bytes, bytes, int]:
        """Run one command line; returns (stdout, stderr, both interleaved in order, status)."""
        with self.lock:
            self.commands.append(line)
            lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lex.whitespace_split = True
            try:
                tokens = list(lex)
            except ValueError as exc:
                msg = f"/system/bin/sh: syntax error: {exc}\n".encode()
                return b"", msg, msg, 2
            out, err, both, rc = b"", b"", b"", 0
            op = ";"
            cmd: list[str] = []
            for tok in [*tokens, ";"]:
                if tok in (";", "&&", "||", "&"):
                    if cmd and (op == ";" or (op == "&&" and rc == 0) or (op == "||" and rc != 0)):
                        o, e, rc = self._run_one(cmd, rc)
                        out, err, both = out + o, err + e, both + o + e
                    op, cmd = (";" if tok == "&" else tok), []
                else:
                    cmd.append(tok)
            return out, err, both, rc

    def _run_one(self, argv: list[str], last_rc: int) -> tuple[bytes, bytes, int]:
        name, args = argv[0], argv[1:]
        app = self.app
        if name == "echo":
            return (" ".join(a.replace("$?", str(last_rc)) for a in args) + "\n").encode(), b"", 0
        if name == "screencap":
            return app.screencap_png(), b"", 0
        if name == "rm":
            for p in (a for a in args if not a.startswith("-")):
                self.files.pop(p, None)
            return b"", b"", 0
        if name == "uiautomator" and args[:1] == ["dump"]:
            path = args[1] if len(args) > 1 else "/sdcard/window_dump.xml"
            if self.dump_idle_failures > 0:
                self.dump_idle_failures -= 1
                return b"", b"ERROR: could not get idle state.\n", 1
            self.files[path] = app.hierarchy_xml().encode("utf-8")
            # Real message (sic). Some ROMs exit non-zero even though the file is fine.
            return f"UI hierchary dumped to: {path}\n".encode(), b"", 1 if self.dump_exit_nonzero else 0
        if name == "input":
            return self._input(args)
        if name == "am" and args[:1] == ["broadcast"]:
            return self._broadcast(args[1:])
        if name == "am" and args[:1] == ["force-stop"]:
            app.events.append(f"force-stop {' '.join(args[1:])}")
            return b"", b"", 0
        if (name == "am" and args[:1] == ["start"]) or name == "monkey":
            return self._launch(name, args)
        if name == "wm" and args[:1] == ["size"]:
            return b"Physical size: 540x960\n", b"", 0
        if name == "dumpsys" and args[:1] == ["display"]:
            return b"DISPLAY MANAGER (dumpsys display)\n  mDefaultViewport= orientation=0, deviceWidth=540, deviceHeight=960\n", b"", 0
        if name == "getprop":
            props = {"ro.product.model": "FakePhone", "ro.build.version.sdk": "34", "ro.product.name": "fake"}
            return (props.get(args[0], "") + "\n").encode() if args else b"", b"", 0
        return b"", f"/system/bin/sh: {name}: inaccessible or not found\n".encode(), 127

    def _input(self, args: list[str]) -> tuple[bytes, bytes, int]:
        app = self.app
        try:
            if args[0] == "tap":
                app.tap(int(float(args[1])), int(float(args[2])))
            elif args[0] == "swipe":
                x1, y1, x2, y2 = (int(float(a)) for a in args[1:5])
                dur = int(args[5]) if len(args) > 5 else 300
                if abs(x2 - x1) < 10 and abs(y2 - y1) < 10 and dur >= 500:
                    app.long_press(x1, y1)  # how adb does a long press
                else:
                    app.swipe(x1, y1, x2, y2)
            elif args[0] == "keyevent":
                if args[1] in ("4", "KEYCODE_BACK"):
                    app.back()
                elif args[1] in ("66", "KEYCODE_ENTER"):
                    app.type_text("\n")
                elif args[1] in ("61", "KEYCODE_TAB"):
                    app.type_text("\t")
            elif args[0] == "text":
                # Like Android's `input text`: only the first argument is typed (an unquoted
                # space on the command line loses the rest), and "%s" means a space.
                text = _android_unescape(args[1])
                if any(ord(c) > 126 for c in text):
                    # What `input text` does with characters the key map lacks.
                    return b"", b"Exception occurred while executing 'text':\njava.lang.IllegalArgumentException: invalid character\n", 1
                app.type_text(text)
            else:
                return b"", f"Error: Unknown command: {args[0]}\n".encode(), 1
        except (IndexError, ValueError):
            return b"", f"Error: bad input arguments {args}\n".encode(), 1
        return b"", b"", 0

    def _launch(self, name: str, args: list[str]) -> tuple[bytes, bytes, int]:
        """``am start -n <pkg>/<activity>`` or ``monkey -p <pkg> ...``: only the clock app is installed."""
        flag = "-n" if name == "am" else "-p"
        target = args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else ""
        if target.split("/")[0] != PKG:
            msg = f"Error: Activity not started, unable to resolve {target or 'nothing'}\n" if name == "am" else "** No activities found to run, monkey aborted.\n"
            return (b"", msg.encode(), 1) if name == "monkey" else (msg.encode(), b"", 1)
        self.app.launch()
        if name == "am":
            return f"Starting: Intent {{ cmp={target} }}\n".encode(), b"", 0
        return b"  bash arg: -p\n  bash arg: " + PKG.encode() + b"\nEvents injected: 1\n", b"", 0

    def _broadcast(self, args: list[str]) -> tuple[bytes, bytes, int]:
        action = args[args.index("-a") + 1] if "-a" in args else ""
        msg = args[args.index("--es") + 2] if "--es" in args and len(args) > args.index("--es") + 2 else ""
        if self.adbkeyboard and action in ("ADB_INPUT_TEXT", "ADB_INPUT_B64"):
            text = base64.b64decode(msg).decode("utf-8") if action == "ADB_INPUT_B64" else msg
            self.app.type_text(text)
            return f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\nBroadcast completed: result=-1\n".encode(), b"", 0
        return f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\nBroadcast completed: result=0\n".encode(), b"", 0


def _android_unescape(arg: str) -> str:
    """The escape rule of Android's Input.sendText: a "%" followed by "s" becomes a space."""
    out: list[str] = []
    escape = False
    for c in arg:
        if escape and c == "s":
            out[-1] = " "
            escape = False
            continue
        escape = c == "%"
        out.append(c)
    return "".join(out)


class _Handler(socketserver.BaseRequestHandler):
    server: FakeAdbServer

    # --------------------------------------------------------------- wire helpers
    def _recv_exact(self, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = self.request.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _read_request(self) -> str | None:
        head = self._recv_exact(4)
        if head is None:
            return None
        body = self._recv_exact(int(head, 16))
        return None if body is None else body.decode("utf-8")

    def _okay(self, payload: bytes = b"") -> None:
        self.request.sendall(b"OKAY" + payload)

    def _fail(self, msg: str) -> None:
        data = msg.encode()
        self.request.sendall(b"FAIL" + f"{len(data):04x}".encode() + data)

    def _block(self, text: str) -> bytes:
        data = text.encode()
        return f"{len(data):04x}".encode() + data

    # --------------------------------------------------------------- dispatch
    def handle(self) -> None:
        self.server.track(self.request)
        try:
            self._serve()
        except (ConnectionError, OSError):
            pass
        finally:
            self.server.untrack(self.request)

    def _serve(self) -> None:
        dev = self.server.device
        req = self._read_request()
        if req is None:
            return
        if req == "host:version":
            return self._okay(self._block(f"{ADB_VERSION:04x}"))
        if req in ("host:devices", "host:devices-l"):
            lines = ""
            if dev.online:
                lines = f"{dev.serial}\tdevice\n" if req == "host:devices" else (
                    f"{dev.serial}          device product:fake model:FakePhone device:fake transport_id:{dev.transport_id}\n")
            return self._okay(self._block(lines))
        if req == "host:kill":
            return self._okay()
        if req in ("host:features", "host:host-features"):
            return self._okay(self._block("shell_v2,cmd"))
        if req.startswith("host-serial:"):
            _, serial, what = req.split(":", 2)
            if not (dev.online and serial == dev.serial):
                return self._fail(f"device '{serial}' not found")
            answers = {"features": "shell_v2,cmd", "get-state": "device", "get-serialno": dev.serial, "get-devpath": "usb:fake"}
            if what not in answers:
                return self._fail(f"unsupported host-serial request {what!r}")
            return self._okay(self._block(answers[what]))
        if req.startswith(("host:tport:", "host:transport")):
            wanted = req.split(":")[-1] if req.startswith(("host:tport:serial:", "host:transport:")) else None
            if not dev.online or (wanted is not None and wanted != dev.serial):
                return self._fail(f"device '{wanted or ''}' not found" if wanted else "no devices/emulators found")
            self._okay(struct.pack("<Q", dev.transport_id) if req.startswith("host:tport:") else b"")
            return self._device_service()
        return self._fail(f"unknown host service {req!r}")

    def _device_service(self) -> None:
        dev = self.server.device
        req = self._read_request()
        if req is None:
            return
        if req.startswith("shell"):
            head, _, cmd = req.partition(":")
            v2 = head.startswith("shell,v2")
            if dev.disconnect_after is not None:
                if dev.disconnect_after <= 0:
                    # The cable is pulled while this command is in flight.
                    self._okay()
                    self.server.disconnect()
                    return
                dev.disconnect_after -= 1
            self._okay()
            out, err, both, rc = dev.run_shell(cmd)
            if v2:
                pkt = b""
                if out:
                    pkt += b"\x01" + struct.pack("<I", len(out)) + out
                if err:
                    pkt += b"\x02" + struct.pack("<I", len(err)) + err
                pkt += b"\x03" + struct.pack("<I", 1) + bytes([rc & 0xFF])
                self.request.sendall(pkt)
            else:
                self.request.sendall(both)
            return
        if req == "sync:":
            self._okay()
            return self._sync()
        return self._fail(f"closed: unknown service {req!r}")

    def _sync(self) -> None:
        dev = self.server.device
        while True:
            head = self._recv_exact(8)
            if head is None:
                return
            cmd, n = head[:4].decode(), struct.unpack("<I", head[4:])[0]
            if cmd == "QUIT":
                return
            path = (self._recv_exact(n) or b"").decode("utf-8")
            now = int(time.time())
            if cmd == "STAT":
                with dev.lock:
                    data = dev.files.get(path)
                if data is not None:
                    self.request.sendall(b"STAT" + struct.pack("<III", stat.S_IFREG | 0o644, len(data), now))
                elif path.rstrip("/") in ("/data/local/tmp", "/sdcard", ""):
                    self.request.sendall(b"STAT" + struct.pack("<III", stat.S_IFDIR | 0o771, 4096, now))
                else:
                    self.request.sendall(b"STAT" + struct.pack("<III", 0, 0, 0))
            elif cmd == "RECV":
                with dev.lock:
                    data = dev.files.get(path)
                if data is None:
                    msg = b"No such file or directory"
                    self.request.sendall(b"FAIL" + struct.pack("<I", len(msg)) + msg)
                    return
                for i in range(0, len(data), 65536):
                    chunk = data[i : i + 65536]
                    self.request.sendall(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
                self.request.sendall(b"DONE" + struct.pack("<I", 0))
            elif cmd == "SEND":
                target = path.rsplit(",", 1)[0]
                buf = b""
                while True:
                    h = self._recv_exact(8)
                    if h is None:
                        return
                    kind, size = h[:4], struct.unpack("<I", h[4:])[0]
                    if kind == b"DATA":
                        buf += self._recv_exact(size) or b""
                    elif kind == b"DONE":
                        break
                    else:
                        return
                with dev.lock:
                    dev.files[target] = buf
                self.request.sendall(b"OKAY" + struct.pack("<I", 0))
            elif cmd == "LIST":
                prefix = path.rstrip("/") + "/"
                with dev.lock:
                    entries = [(p[len(prefix):], d) for p, d in dev.files.items() if p.startswith(prefix) and "/" not in p[len(prefix):]]
                for name, d in entries:
                    nb = name.encode()
                    self.request.sendall(b"DENT" + struct.pack("<IIII", stat.S_IFREG | 0o644, len(d), now, len(nb)) + nb)
                self.request.sendall(b"DONE" + b"\x00" * 16)
            else:
                msg = f"unknown sync command {cmd!r}".encode()
                self.request.sendall(b"FAIL" + struct.pack("<I", len(msg)) + msg)
                return


class FakeAdbServer(socketserver.ThreadingTCPServer):
    """Listens on an ephemeral loopback port; ``with FakeAdbServer() as s: s.port``."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, device: FakeDevice | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.device = device or FakeDevice()
        self._socks: set[socket.socket] = set()
        self._socks_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.server_address[1]

    def track(self, s: socket.socket) -> None:
        with self._socks_lock:
            self._socks.add(s)

    def untrack(self, s: socket.socket) -> None:
        with self._socks_lock:
            self._socks.discard(s)

    def disconnect(self) -> None:
        """The device drops off the bus: it stops being listed and open streams break."""
        self.device.online = False
        with self._socks_lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def start(self) -> FakeAdbServer:
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAdbServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
