"""SafeFolder reads and writes a folder a program controlled without following what it planted
(issue #37): links are listed as links and never followed, FIFOs are never opened, a hard link to
an outside file is refused, and a write replaces whatever stands at its path. Real symlinks,
FIFOs and hard links on the real file system."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from agentlab.errors import DataError
from agentlab.safepath import SafeFolder, UnsafePathError

MARKER = "zq-outside-marker-5e1d"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[SafeFolder, Path]:
    """A folder holding a file, a sub-folder, and links out; an outside folder with a marker."""
    out, root = tmp_path / "outside", tmp_path / "ws"
    (out / "sub").mkdir(parents=True)
    (out / "secret.txt").write_text(MARKER)
    (out / "sub" / "note.txt").write_text(MARKER)
    (root / "d").mkdir(parents=True)
    (root / "a.txt").write_text("hello")
    (root / "d" / "b.txt").write_text("inner")
    (root / "link.txt").symlink_to(out / "secret.txt")
    (root / "dirlink").symlink_to(out / "sub")
    (root / "rel.txt").symlink_to("../outside/secret.txt")
    (root / "env").symlink_to("/proc/self/environ")
    (root / "inside-link.txt").symlink_to("a.txt")
    return SafeFolder(root), out


def test_walk_lists_links_as_links_and_never_descends_them(layout) -> None:
    folder, _ = layout
    kinds = {e.rel: e.kind for e in folder.walk()}
    assert kinds == {"a.txt": "file", "d": "dir", "d/b.txt": "file", "dirlink": "link", "env": "link",
                     "inside-link.txt": "link", "link.txt": "link", "rel.txt": "link"}
    assert [e.rel for e in folder.walk(lambda rel: rel.startswith("d"))] == [
        "a.txt", "env", "inside-link.txt", "link.txt", "rel.txt"]
    assert [e.rel for e in folder.listdir("d")] == ["d/b.txt"]


@pytest.mark.parametrize("rel", ["link.txt", "rel.txt", "env", "inside-link.txt", "dirlink/note.txt", "dirlink"])
def test_reading_through_a_link_is_refused(layout, rel: str) -> None:
    folder, _ = layout
    with pytest.raises(UnsafePathError, match="symbolic link|not a folder"):
        folder.read_bytes(rel)
    assert folder.kind(rel) == "link"
    assert not folder.is_file(rel)


def test_regular_files_read_and_paths_out_are_the_callers_error(layout) -> None:
    folder, _ = layout
    assert folder.read_text("d/b.txt") == "inner" and folder.read_bytes("./a.txt") == b"hello"
    for bad in ["../outside/secret.txt", "/etc/hostname", "d/../../outside/secret.txt"]:
        with pytest.raises(DataError) as err:
            folder.read_bytes(bad)
        assert not isinstance(err.value, UnsafePathError)
    with pytest.raises(FileNotFoundError):
        folder.read_bytes("missing.txt")
    with pytest.raises(UnsafePathError, match="larger than 3 bytes"):
        folder.read_bytes("a.txt", limit=3)


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "out.txt")
    result: list[BaseException] = []

    def read() -> None:
        try:
            SafeFolder(tmp_path).read_bytes("out.txt")
        except BaseException as exc:  # handed to the test
            result.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "reading a FIFO blocked"
    assert isinstance(result[0], UnsafePathError) and "FIFO" in str(result[0])


def test_a_hard_link_to_an_outside_file_is_refused_one_inside_is_read(tmp_path: Path) -> None:
    out, root = tmp_path / "outside.txt", tmp_path / "ws"
    root.mkdir()
    out.write_text(MARKER)
    os.link(out, root / "h.txt")
    (root / "mine.txt").write_text("twice")
    os.link(root / "mine.txt", root / "again.txt")
    folder = SafeFolder(root)
    mode = stat.S_IMODE(out.stat().st_mode)
    with pytest.raises(UnsafePathError, match="hard link"):
        folder.read_bytes("h.txt")
    assert folder.read_text("again.txt") == "twice"
    entries = {e.rel: e for e in folder.walk()}
    assert entries["h.txt"].foreign and not entries["h.txt"].readable
    assert entries["again.txt"].readable and entries["mine.txt"].readable
    with pytest.raises(UnsafePathError):
        folder.chmod("h.txt", 0o600)
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_writes_replace_links_and_never_write_through_them(layout) -> None:
    folder, out = layout
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    folder.write_bytes("link.txt", b"new")  # a link to a file: the link goes, a file comes
    folder.write_bytes("dirlink/note.txt", b"new")  # a link where a folder belongs: replaced by a folder
    folder.make_dirs("env/x")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert folder.kind("link.txt") == "file" and folder.read_text("link.txt") == "new"
    assert folder.kind("dirlink") == "dir" and folder.read_text("dirlink/note.txt") == "new"
    assert folder.kind("env") == "dir"
    folder.symlink("d", "/somewhere")  # a folder where a link goes: removed with what it holds
    assert folder.kind("d") == "link" and folder.readlink("d") == "/somewhere"
    assert folder.remove("rel.txt") and folder.kind("rel.txt") is None
    assert (out / "secret.txt").read_text() == MARKER
    assert not folder.remove("dirlink/nothing") and not folder.remove("link.txt/x")


def test_a_private_copy_holds_only_the_regular_files(layout) -> None:
    folder, _ = layout
    with folder.private_copy() as copy:
        got = {p.relative_to(copy).as_posix(): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
        assert stat.S_IMODE(copy.stat().st_mode) == 0o700
    assert got == {"a.txt": b"hello", "d/b.txt": b"inner"}
    assert not copy.exists()


def test_chown_all_never_reowns_what_a_link_or_hard_link_points_to(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("changing owners needs root")
    out, root = tmp_path / "outside", tmp_path / "ws"
    out.mkdir()
    (out / "secret.txt").write_text(MARKER)
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("x")
    (root / "link").symlink_to(out)
    os.link(out / "secret.txt", root / "h.txt")
    SafeFolder(root).chown_all(65534, 65534)
    assert (root / "d" / "f.txt").stat().st_uid == 65534 and root.stat().st_uid == 65534
    assert os.lstat(root / "link").st_uid == 65534
    assert out.stat().st_uid == 0 and (out / "secret.txt").stat().st_uid == 0
