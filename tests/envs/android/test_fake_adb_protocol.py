"""The fake adb server speaks the real host protocol: checked with the real adbutils client."""

from __future__ import annotations

import socket

import adbutils
import pytest
from adbutils.errors import AdbError


def test_host_services(fake_adb) -> None:
    c = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port)
    assert c.server_version() == 41
    assert [(d.serial, d.state) for d in c.list()] == [("emulator-5554", "device")]
    assert c.list(extended=True)[0].tags["model"] == "FakePhone"
    d = c.device()
    assert d.get_state() == "device"
    assert d.get_features() == "shell_v2,cmd"


def test_shell_v1_v2_and_exit_codes(fake_adb) -> None:
    d = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port).device()
    assert d.shell("echo hello") == "hello"
    assert d.shell2("rm -f /x && echo ok").output.strip() == "ok"
    v2 = d.shell2("nosuchcmd", v2=True)
    assert v2.returncode == 127 and "not found" in v2.stderr and v2.stdout == ""
    assert d.window_size() == (540, 960)


def test_sync_push_stat_list_recv(fake_adb) -> None:
    d = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port).device()
    d.sync.push(b"payload", "/data/local/tmp/f.txt")
    assert d.sync.stat("/data/local/tmp/f.txt").size == 7
    assert d.sync.read_bytes("/data/local/tmp/f.txt") == b"payload"
    assert "f.txt" in [f.path for f in d.sync.list("/data/local/tmp")]
    with pytest.raises(AdbError, match="No such file"):
        d.sync.read_bytes("/data/local/tmp/missing")


def test_adbutils_screenshot_and_dump(fake_adb) -> None:
    d = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port).device()
    assert d.screenshot(error_ok=False).size == (540, 960)
    assert d.dump_hierarchy().startswith("<?xml")


def test_dump_quirk_breaks_plain_adbutils(fake_adb) -> None:
    """The non-zero-exit quirk is real in the fake: adbutils' own dump_hierarchy rejects it."""
    fake_adb.device.dump_exit_nonzero = True
    d = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port).device()
    with pytest.raises(AdbError, match="uiautomator dump failed"):
        d.dump_hierarchy()


def test_unknown_device_and_unknown_request_fail(fake_adb) -> None:
    c = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port)
    with pytest.raises(AdbError, match="not found"):
        c.device(serial="nope").shell("echo hi")
    with socket.create_connection(("127.0.0.1", fake_adb.port), timeout=5) as s:
        req = b"host:bogus"
        s.sendall(f"{len(req):04x}".encode() + req)
        assert s.recv(4) == b"FAIL"


def test_disconnect_removes_device(fake_adb) -> None:
    c = adbutils.AdbClient(host="127.0.0.1", port=fake_adb.port)
    fake_adb.disconnect()
    assert c.list() == []
    with pytest.raises(AdbError):
        c.device(serial="emulator-5554").shell("echo hi")
