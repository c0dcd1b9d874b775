"""Snapshots of a task's folder, so a team can roll its shared state back to an earlier step.

COLA's interactive backtracking (and a retried step) must put the files back exactly as they
were before step k, not approximately. A :class:`FolderStore` keeps snapshots in a
content-addressed store outside the task folder: each file's bytes are stored once under their
SHA-256 (``objects/ab/cdef...``), and a snapshot is a manifest ``{path: [sha256, mode]}``
written atomically as ``<label>.json``. A step that changes one file of fifty therefore
costs one blob, and :meth:`FolderStore.restore` rewrites the folder byte for byte: files the
snapshot holds are written back (when their bytes differ), files it does not hold are
removed, emptied folders are pruned.

The folder is the program's: it may hold a symbolic link to a folder outside where a folder
was (a renamed ``sub`` replaced by a link), a FIFO, or a hard link to an outside file. Every
read, listing and write goes through :class:`~agentlab.safepath.SafeFolder`, so a snapshot
never reads through a link (a link is saved as its target's *text*), and a restore removes
whatever stands at a path before it writes there: it never writes into a linked folder
(issue #37, case 1: a retry's rollback wrote the snapshot's files into the outside folder).

The scratch folders of a workspace (top-level names starting with ``.agentlab``: the programs
an agent ran, kept for the record) are not part of the task's state and are left alone, as
:meth:`agentlab.envs.workspace.Workspace.files` leaves them out of the listing.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.config import read_json_object
from agentlab.errors import DataError
from agentlab.fileio import atomic_write_bytes, atomic_write_json
from agentlab.safepath import Entry, SafeFolder, UnsafePathError

log = logging.getLogger(__name__)

#: top-level names that hold an env's own scratch files, not the task's state
SCRATCH_PREFIX = ".agentlab"


def _is_scratch(rel: str) -> bool:
    return rel.split("/", 1)[0].startswith(SCRATCH_PREFIX)


def _state(root: Path) -> list[Entry]:
    """The names under ``root`` that belong to the task's state (scratch folders left out),
    sorted, as :class:`~agentlab.safepath.SafeFolder` sees them: links are links, never followed."""
    return SafeFolder(root).walk(_is_scratch)


@dataclass(frozen=True)
class Snapshot:
    """One saved state of a folder: relative path -> (sha256, permission bits), its folders (so an
    empty folder comes back too) and its symbolic links (path -> target, kept as text: a link is
    put back as it was, never followed)."""

    label: str
    files: dict[str, tuple[str, int]] = field(default_factory=dict)
    dirs: frozenset[str] = frozenset()
    links: dict[str, str] = field(default_factory=dict)

    def _names(self) -> dict[str, tuple[str, str]]:
        return {**{p: ("file", sha) for p, (sha, _) in self.files.items()},
                **{p: ("link", target) for p, target in self.links.items()}}

    def changes(self, other: Snapshot) -> FolderChanges:
        """What changed from this snapshot to ``other`` (a later one): files and links."""
        mine, theirs = self._names(), other._names()
        added = sorted(set(theirs) - set(mine))
        removed = sorted(set(mine) - set(theirs))
        changed = sorted(p for p in set(mine) & set(theirs) if mine[p] != theirs[p])
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
    """Content-addressed snapshots of one task folder, kept in ``store`` (outside that folder).

    The task folder is read and written only through :class:`~agentlab.safepath.SafeFolder`:
    what a program planted there (a link to an outside folder where a folder was, a FIFO, a
    hard link to an outside file) is never followed, read or written through. A regular file
    with a hard link outside is not part of the state (it is not the task's file)."""

    def __init__(self, store: Path) -> None:
        self.store = Path(store)
        (self.store / "objects").mkdir(parents=True, exist_ok=True)

    def _blob(self, sha: str) -> Path:
        return self.store / "objects" / sha[:2] / sha[2:]

    def take(self, root: Path, label: str) -> Snapshot:
        """Save the state of ``root`` as ``label`` (an existing label is replaced)."""
        folder = SafeFolder(root)
        files: dict[str, tuple[str, int]] = {}
        dirs: set[str] = set()
        links: dict[str, str] = {}
        for e in _state(root):
            try:
                if e.kind == "dir":
                    dirs.add(e.rel)
                elif e.kind == "link":
                    links[e.rel] = folder.readlink(e.rel)
                elif e.readable:
                    data = folder.read_bytes(e.rel)
                    sha = hashlib.sha256(data).hexdigest()
                    blob = self._blob(sha)
                    if not blob.exists():
                        blob.parent.mkdir(parents=True, exist_ok=True)
                        atomic_write_bytes(blob, data)
                    files[e.rel] = (sha, e.mode)
            except (UnsafePathError, OSError) as exc:  # replaced or gone since the walk: not state
                log.warning("snapshot %s: %s left out (%s)", label, e.rel, exc)
        snap = Snapshot(label, files, frozenset(dirs), links)
        atomic_write_json(self.store / f"{label}.json",
                          {"label": label, "files": {k: list(v) for k, v in files.items()}, "dirs": sorted(dirs),
                           "links": links})
        return snap

    def load(self, label: str) -> Snapshot:
        """A snapshot saved earlier (by this store or an earlier process)."""
        path = self.store / f"{label}.json"
        if not path.is_file():
            raise DataError(f"no snapshot '{label}' in this store", where=self.store)
        raw = read_json_object(path)
        return Snapshot(label, {k: (str(v[0]), int(v[1])) for k, v in dict(raw["files"]).items()},
                        frozenset(str(d) for d in raw.get("dirs", [])),
                        {str(k): str(v) for k, v in dict(raw.get("links", {})).items()})

    def restore(self, snapshot: Snapshot, root: Path) -> FolderChanges:
        """Make ``root`` hold exactly the snapshot's files, folders and links, byte for byte;
        what had to change. Whatever stands where the snapshot has something else (a link where
        a folder was, a folder where a file was) is removed first, never followed: nothing is
        ever written outside ``root``."""
        folder = SafeFolder(root)
        current = {e.rel: e for e in _state(root)}
        wanted = {*snapshot.files, *snapshot.links}
        keep_dirs = set(snapshot.dirs) | {p for rel in wanted for p in _parents(rel)}
        # names the snapshot does not hold as they are now: removed (a link itself, never its target)
        gone = sorted(rel for rel, e in current.items() if e.kind != "dir" and rel not in wanted)
        for rel in gone:
            folder.remove(rel)
        removed = [rel for rel in gone if current[rel].kind in ("file", "link")]
        added: list[str] = []
        changed: list[str] = []
        for rel in sorted(keep_dirs):
            folder.make_dirs(rel)
        for rel, (sha, mode) in sorted(snapshot.files.items()):
            now = current.get(rel)
            if now is not None and now.kind == "file" and now.nlink == 1 and _same_file(folder, rel, sha):
                if now.mode != mode:
                    folder.chmod(rel, mode)
                continue
            blob = self._blob(sha)
            if not blob.is_file():
                raise DataError(f"snapshot '{snapshot.label}' names a missing blob {sha} for {rel}", where=self.store)
            (changed if now is not None and now.kind in ("file", "link") else added).append(rel)
            folder.write_bytes(rel, blob.read_bytes(), mode=mode)
        for rel, target in sorted(snapshot.links.items()):
            now = current.get(rel)
            if now is not None and now.kind == "link" and _link_target(folder, rel) == target:
                continue
            (changed if now is not None and now.kind in ("file", "link") else added).append(rel)
            folder.symlink(rel, target)
        self._prune_empty(folder, keep_dirs)
        log.info("restored %s to snapshot %s (%d added back, %d rewritten, %d removed)",
                 root, snapshot.label, len(added), len(changed), len(removed))
        return FolderChanges(added=sorted(added), changed=sorted(changed), removed=removed)

    @staticmethod
    def _prune_empty(folder: SafeFolder, keep: set[str]) -> None:
        """Remove folders the snapshot does not hold, deepest first (what they held is gone)."""
        for e in sorted((e for e in _state(folder.root) if e.kind == "dir"), key=lambda e: e.rel.count("/"), reverse=True):
            if e.rel not in keep:
                folder.remove(e.rel)


def _parents(rel: str) -> list[str]:
    """``a/b/c`` -> ``[a, a/b]``."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _same_file(folder: SafeFolder, rel: str, sha: str) -> bool:
    try:
        return hashlib.sha256(folder.read_bytes(rel)).hexdigest() == sha
    except (UnsafePathError, OSError):
        return False


def _link_target(folder: SafeFolder, rel: str) -> str | None:
    try:
        return folder.readlink(rel)
    except OSError:
        return None
