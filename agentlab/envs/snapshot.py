"""Snapshots of a task's folder, so a team can roll its shared state back to an earlier step.

COLA's interactive backtracking (and a retried step) must put the files back exactly as they
were before step k, not approximately. A :class:`FolderStore` keeps snapshots in a
content-addressed store outside the task folder: each file's bytes are stored once under their
SHA-256 (``objects/ab/cdef...``), and a snapshot is a manifest ``{path: [sha256, mode]}``
written atomically as ``<label>.json``. A step that changes one file of fifty therefore
costs one blob, and :meth:`FolderStore.restore` rewrites the folder byte for byte: files the
snapshot holds are written back (when their bytes differ), files it does not hold are
removed, emptied folders are pruned.

The scratch folders of a workspace (top-level names starting with ``.agentlab``: the programs
an agent ran, kept for the record) are not part of the task's state and are left alone, as
:meth:`agentlab.envs.workspace.Workspace.files` leaves them out of the listing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.config import read_json_object
from agentlab.errors import DataError
from agentlab.fileio import atomic_write_bytes, atomic_write_json

log = logging.getLogger(__name__)

#: top-level names that hold an env's own scratch files, not the task's state
SCRATCH_PREFIX = ".agentlab"


def _state_paths(root: Path) -> tuple[list[Path], list[Path]]:
    """The regular files and the folders under ``root`` that belong to the task's state, sorted."""
    files, dirs = [], []
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if rel.parts[0].startswith(SCRATCH_PREFIX) or p.is_symlink():
            continue
        if p.is_dir():
            dirs.append(p)
        elif p.is_file():
            files.append(p)
    return sorted(files), sorted(dirs)


def _state_files(root: Path) -> list[Path]:
    return _state_paths(root)[0]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """One saved state of a folder: relative path -> (sha256, permission bits), and its folders
    (so an empty folder comes back too)."""

    label: str
    files: dict[str, tuple[str, int]] = field(default_factory=dict)
    dirs: frozenset[str] = frozenset()

    def changes(self, other: Snapshot) -> FolderChanges:
        """What changed from this snapshot to ``other`` (a later one)."""
        added = sorted(set(other.files) - set(self.files))
        removed = sorted(set(self.files) - set(other.files))
        changed = sorted(p for p in set(self.files) & set(other.files) if self.files[p][0] != other.files[p][0])
        return FolderChanges(added=added, changed=changed, removed=removed)


@dataclass(frozen=True)
class FolderChanges:
    """Files added, changed (other bytes) and removed between two snapshots."""

    added: list[str]
    changed: list[str]
    removed: list[str]

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def paths(self) -> list[str]:
        """Every path touched, sorted."""
        return sorted({*self.added, *self.changed, *self.removed})

    def describe(self) -> str:
        """One line per kind of change ('no file changed' when none)."""
        if self.empty:
            return "no file changed"
        parts = [f"{kind}: {', '.join(paths)}" for kind, paths in
                 (("added", self.added), ("changed", self.changed), ("removed", self.removed)) if paths]
        return "; ".join(parts)


class FolderStore:
    """Content-addressed snapshots of one task folder, kept in ``store`` (outside that folder)."""

    def __init__(self, store: Path) -> None:
        self.store = Path(store)
        (self.store / "objects").mkdir(parents=True, exist_ok=True)

    def _blob(self, sha: str) -> Path:
        return self.store / "objects" / sha[:2] / sha[2:]

    def take(self, root: Path, label: str) -> Snapshot:
        """Save the state of ``root`` as ``label`` (an existing label is replaced)."""
        files: dict[str, tuple[str, int]] = {}
        paths, folders = _state_paths(root)
        for path in paths:
            sha = _sha256(path)
            blob = self._blob(sha)
            if not blob.exists():
                blob.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(blob, path.read_bytes())
            files[path.relative_to(root).as_posix()] = (sha, path.stat().st_mode & 0o777)
        dirs = frozenset(p.relative_to(root).as_posix() for p in folders)
        snap = Snapshot(label, files, dirs)
        atomic_write_json(self.store / f"{label}.json",
                          {"label": label, "files": {k: list(v) for k, v in files.items()}, "dirs": sorted(dirs)})
        return snap

    def load(self, label: str) -> Snapshot:
        """A snapshot saved earlier (by this store or an earlier process)."""
        path = self.store / f"{label}.json"
        if not path.is_file():
            raise DataError(f"no snapshot '{label}' in this store", where=self.store)
        raw = read_json_object(path)
        return Snapshot(label, {k: (str(v[0]), int(v[1])) for k, v in dict(raw["files"]).items()},
                        frozenset(str(d) for d in raw.get("dirs", [])))

    def restore(self, snapshot: Snapshot, root: Path) -> FolderChanges:
        """Make ``root`` hold exactly the snapshot's files, byte for byte; what had to change."""
        current = {p.relative_to(root).as_posix(): p for p in _state_files(root)}
        removed = sorted(set(current) - set(snapshot.files))
        for rel in removed:
            current[rel].unlink()
        added: list[str] = []
        changed: list[str] = []
        for rel in sorted(snapshot.dirs):
            (root / rel).mkdir(parents=True, exist_ok=True)
        for rel, (sha, mode) in sorted(snapshot.files.items()):
            target = root / rel
            if rel in current and _sha256(target) == sha:
                if target.stat().st_mode & 0o777 != mode:
                    os.chmod(target, mode)
                continue
            blob = self._blob(sha)
            if not blob.is_file():
                raise DataError(f"snapshot '{snapshot.label}' names a missing blob {sha} for {rel}", where=self.store)
            (changed if rel in current else added).append(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir() and not target.is_symlink():  # a folder made where the file was (its files are gone)
                shutil.rmtree(target)
            atomic_write_bytes(target, blob.read_bytes())
            os.chmod(target, mode)
        self._prune_empty(root, snapshot)
        log.info("restored %s to snapshot %s (%d added back, %d rewritten, %d removed)",
                 root, snapshot.label, len(added), len(changed), len(removed))
        return FolderChanges(added=added, changed=changed, removed=removed)

    @staticmethod
    def _prune_empty(root: Path, snapshot: Snapshot) -> None:
        """Remove folders left empty that the snapshot does not hold (deepest first)."""
        keep = {root, *(root / d for d in snapshot.dirs)}
        for rel in snapshot.files:
            keep.update((root / rel).parents)
        for folder in sorted((p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()),
                             key=lambda p: len(p.parts), reverse=True):
            if folder.relative_to(root).parts[0].startswith(SCRATCH_PREFIX) or folder in keep:
                continue
            if not any(folder.iterdir()):
                folder.rmdir()
