"""Folder snapshots restore a task folder byte for byte (COLA's backtracking and retries rely on it)."""

from __future__ import annotations

import os
from pathlib import Path

from agentlab.envs.snapshot import FolderStore


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_restore_is_byte_for_byte_and_keeps_scratch(tmp_path) -> None:
    root, store = tmp_path / "ws", FolderStore(tmp_path / "snaps")
    (root / "sub" / "empty").mkdir(parents=True)
    (root / "a.csv").write_bytes(b"x,y\n1,2\n")
    (root / "sub" / "b.bin").write_bytes(bytes(range(256)))
    os.chmod(root / "a.csv", 0o640)
    before = _tree(root)
    snap = store.take(root, "step-0")

    (root / "a.csv").write_bytes(b"changed")
    (root / "sub" / "b.bin").unlink()
    (root / "new").mkdir()
    (root / "new" / "c.txt").write_text("made later")
    (root / ".agentlab").mkdir()
    (root / ".agentlab" / "step_001.py").write_text("print(1)")
    (root / "sub" / "empty").rmdir()
    assert snap.changes(store.take(root, "step-1")).describe() == "added: new/c.txt; changed: a.csv; removed: sub/b.bin"

    done = store.restore(store.load("step-0"), root)
    assert _tree(root) == {**before, ".agentlab/step_001.py": b"print(1)"}  # the scratch folder is not state
    assert (root / "sub" / "empty").is_dir() and not (root / "new").exists()
    assert (root / "a.csv").stat().st_mode & 0o777 == 0o640
    assert (done.added, done.changed, done.removed) == (["sub/b.bin"], ["a.csv"], ["new/c.txt"])


def test_a_file_seen_twice_is_stored_once(tmp_path) -> None:
    root, store = tmp_path / "ws", FolderStore(tmp_path / "snaps")
    root.mkdir()
    (root / "a").write_text("same")
    (root / "b").write_text("same")
    store.take(root, "one")
    store.take(root, "two")
    assert len([p for p in (tmp_path / "snaps" / "objects").rglob("*") if p.is_file()]) == 1
    assert store.take(root, "three").changes(store.load("one")).empty
