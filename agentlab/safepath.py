"""A folder a sandboxed program controlled, read and written without following what it left there.

agentlab's own process runs outside the sandbox: after a program ran in a workspace, it lists
the workspace for the next prompt, describes its files, snapshots and restores it (a team's
retry or backtrack), and the evaluator's getters read it. Anything the program left -- a
symbolic link to ``/proc/self/environ``, to a task file or to a folder outside, a folder renamed
and replaced by a link, a FIFO, a hard link to a file outside -- must never make this process
read or write outside the folder (issue #37: a rollback wrote into a linked outside folder, a
prompt carried the runner's environment).

:class:`SafeFolder` therefore works relative to the folder's root with one open descriptor per
folder (``openat``-style, ``O_NOFOLLOW`` on every component):

- a symbolic link is reported as a link (``lstat``) and never followed, also in the middle of a
  path (``sub/x`` where ``sub`` is a link is refused, not read);
- a FIFO, socket or device is never opened for reading (``O_NONBLOCK``, then ``fstat``);
- a regular file with more hard links than the folder holds (one of them lies outside) is
  refused for reading and never written through or re-owned;
- a write replaces whatever is at its path (link, file, folder) by a new file renamed into
  place, and creating a folder replaces a link or file standing where it belongs.

What a planted path does to a *reader* is the agent's problem, never a harness error:
:class:`UnsafePathError` says what is there ("not a regular file: a symbolic link"). A path that
is absolute or climbs out with ``..`` is the caller's bug (a task file's), a plain
:class:`~agentlab.errors.DataError`. The root itself is trusted: the runner made it.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import shutil
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from agentlab.errors import DataError

log = logging.getLogger(__name__)

Kind = Literal["file", "dir", "link", "other"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: a FIFO would block an ordinary open; a terminal would become ours
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
#: entries a walk looks at before it stops (a program can make millions of files)
MAX_ENTRIES = 200_000


class UnsafePathError(DataError):
    """A path in the folder is not what a reader may open: a symbolic link (or goes through one),
    a FIFO, socket or device, or a hard link to a file outside the folder. What a sandboxed
    program planted: the agent's failure where it matters, never followed."""


@dataclass(frozen=True)
class Entry:
    """One name under the folder, as ``lstat`` saw it (a link is a link, never its target)."""

    rel: str  #: ``/``-separated, relative to the root
    kind: Kind
    size: int
    mode: int  #: permission bits
    mtime_ns: int
    nlink: int
    #: a regular file with a hard link outside the folder (more links than the folder holds)
    foreign: bool = False

    @property
    def readable(self) -> bool:
        """A regular file every hard link of which is inside the folder."""
        return self.kind == "file" and not self.foreign


def _kind(mode: int) -> Kind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "link" if stat.S_ISLNK(mode) else "other"


def _what(mode: int) -> str:
    """What stands at a path, for a message."""
    if stat.S_ISLNK(mode):
        return "a symbolic link (not followed)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a regular file" if stat.S_ISREG(mode) else "not a file"


def parts_of(rel: str | os.PathLike[str]) -> tuple[str, ...]:
    """The components of a relative path; an absolute path or one climbing out with ``..`` is a
    :class:`DataError` (the caller named a path outside the folder)."""
    text = os.fspath(rel)
    p = PurePosixPath(text)
    if p.is_absolute():
        raise DataError(f"{text!r} is an absolute path, not one relative to the folder")
    parts = tuple(x for x in p.parts if x not in ("", "."))
    if ".." in parts:
        raise DataError(f"{text!r} climbs out of the folder ('..')")
    return parts


class SafeFolder:
    """A folder (``root``) whose contents a program controlled; see the module docstring."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    # -- descriptors -------------------------------------------------------------------
    @contextmanager
    def _root_fd(self) -> Iterator[int]:
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            yield fd
        finally:
            os.close(fd)

    @contextmanager
    def _folder(self, parts: tuple[str, ...], *, create: bool = False, replace: bool = False) -> Iterator[int]:
        """A descriptor of the folder ``parts`` (each component opened without following a link).
        ``create``: make missing folders; ``replace``: a link or file where a folder belongs is
        removed (the link itself, never its target) and a folder made in its place. Otherwise a
        component that is not a folder raises :class:`UnsafePathError`; a missing one
        :class:`FileNotFoundError`."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for i, name in enumerate(parts):
                try:
                    nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(name, 0o777, dir_fd=fd)
                    nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    shown = "/".join(parts[: i + 1])
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                    if not replace:
                        raise UnsafePathError(f"{shown}: not a folder but {_what(mode)}") from None
                    log.warning("%s: %s where a folder belongs; replaced by a folder", shown, _what(mode))
                    os.unlink(name, dir_fd=fd)
                    os.mkdir(name, 0o777, dir_fd=fd)
                    nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nfd
            yield fd
        finally:
            os.close(fd)

    # -- looking ----------------------------------------------------------------------
    def lstat(self, rel: str | os.PathLike[str]) -> os.stat_result | None:
        """``lstat`` of ``rel`` (a link is a link); ``None`` when nothing is there. A path going
        through a link or a file raises :class:`UnsafePathError`."""
        parts = parts_of(rel)
        if not parts:
            return os.stat(self.root)
        try:
            with self._folder(parts[:-1]) as fd:
                return os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def kind(self, rel: str | os.PathLike[str]) -> Kind | None:
        """What is at ``rel``: ``file``, ``dir``, ``link``, ``other``, or ``None`` (nothing); a
        path through a link or a file counts as ``link`` (nothing of the folder is there)."""
        try:
            st = self.lstat(rel)
        except UnsafePathError:
            return "link"
        return None if st is None else _kind(st.st_mode)

    def is_file(self, rel: str | os.PathLike[str]) -> bool:
        """A regular file of the folder is at ``rel`` (a link to one is not)."""
        return self.kind(rel) == "file"

    def walk(self, prune: Callable[[str], bool] | None = None, *, under: str | os.PathLike[str] = "",
             max_entries: int = MAX_ENTRIES) -> list[Entry]:
        """Every name under the folder (or its sub-folder ``under``), sorted by path, never
        following a link. ``prune(rel)`` true leaves that name (and what a folder holds) out.
        Hard links are counted over the whole walk (``Entry.foreign``): a pruned name's links
        count as outside, which only ever refuses more."""
        found: list[tuple[str, os.stat_result]] = []
        base = parts_of(under)
        prefix = "/".join(base) + "/" if base else ""
        with self._folder(base) as fd:
            self._scan(fd, prefix, found, prune, max_entries)
        inside = Counter((st.st_dev, st.st_ino) for _, st in found if stat.S_ISREG(st.st_mode))
        out = [Entry(rel, _kind(st.st_mode), st.st_size, stat.S_IMODE(st.st_mode), st.st_mtime_ns, st.st_nlink,
                     foreign=stat.S_ISREG(st.st_mode) and st.st_nlink > inside[(st.st_dev, st.st_ino)])
               for rel, st in found]
        return sorted(out, key=lambda e: e.rel)

    def _scan(self, fd: int, prefix: str, found: list[tuple[str, os.stat_result]],
              prune: Callable[[str], bool] | None, max_entries: int) -> None:
        try:
            with os.scandir(fd) as it:
                names = sorted(e.name for e in it)
        except OSError as exc:  # a folder the program made unreadable: what it holds is not listed
            log.warning("%s: cannot list %s (%s)", self.root, prefix or ".", exc.strerror)
            return
        for name in names:
            if len(found) >= max_entries:
                log.warning("%s: more than %d entries; the rest is not looked at", self.root, max_entries)
                return
            rel = prefix + name
            if prune is not None and prune(rel):
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:  # gone between listing and looking
                continue
            found.append((rel, st))
            if stat.S_ISDIR(st.st_mode):
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:  # replaced by a link meanwhile, or unreadable: not descended
                    continue
                try:
                    self._scan(sub, rel + "/", found, prune, max_entries)
                finally:
                    os.close(sub)

    def _links_inside(self, st: os.stat_result) -> int:
        """How many names of the folder are hard links to the file ``st``."""
        return sum(1 for rel, other in self._all_stats() if stat.S_ISREG(other.st_mode)
                   and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino))

    def _all_stats(self) -> list[tuple[str, os.stat_result]]:
        found: list[tuple[str, os.stat_result]] = []
        with self._root_fd() as fd:
            self._scan(fd, "", found, None, MAX_ENTRIES)
        return found

    # -- reading ----------------------------------------------------------------------
    def read_bytes(self, rel: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
        """The bytes of the regular file at ``rel``. A link (at ``rel`` or on the way), a FIFO,
        socket, device or folder, or a hard link to a file outside raises
        :class:`UnsafePathError`; a missing file :class:`FileNotFoundError`; a file larger
        than ``limit`` bytes :class:`UnsafePathError` too (nothing of it is read)."""
        parts = parts_of(rel)
        shown = "/".join(parts) or "."
        if not parts:
            raise UnsafePathError(f"{shown}: not a regular file but a folder")
        with self._folder(parts[:-1]) as dfd:
            try:
                fd = os.open(parts[-1], _READ_FLAGS, dir_fd=dfd)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                raise UnsafePathError(f"{shown}: not a regular file but a symbolic link (not followed)") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePathError(f"{shown}: not a regular file but {_what(st.st_mode)}")
            if st.st_nlink > 1 and self._links_inside(st) < st.st_nlink:
                raise UnsafePathError(f"{shown}: not read: a hard link to a file outside the folder")
            if limit is not None and st.st_size > limit:
                raise UnsafePathError(f"{shown}: larger than {limit} bytes ({st.st_size}); not read")
            chunks: list[bytes] = []
            left = limit + 1 if limit is not None else -1
            while left != 0:
                chunk = os.read(fd, 1 << 20 if left < 0 else min(1 << 20, left))
                if not chunk:
                    break
                chunks.append(chunk)
                left = left - len(chunk) if left > 0 else left
            data = b"".join(chunks)
            if limit is not None and len(data) > limit:  # it grew while we read
                raise UnsafePathError(f"{shown}: larger than {limit} bytes; not read")
            return data
        finally:
            os.close(fd)

    def read_text(self, rel: str | os.PathLike[str], *, errors: str = "replace", limit: int | None = None) -> str:
        """:meth:`read_bytes` decoded as UTF-8 (``errors`` as for :meth:`bytes.decode`)."""
        return self.read_bytes(rel, limit=limit).decode("utf-8", errors=errors)

    def listdir(self, rel: str | os.PathLike[str] = "") -> list[Entry]:
        """The names directly in the folder ``rel`` (one level), as :meth:`walk` reports them."""
        depth = len(parts_of(rel))
        return [e for e in self.walk(under=rel, prune=lambda r: r.count("/") > depth) if e.rel.count("/") == depth]

    @contextmanager
    def private_copy(self, prune: Callable[[str], bool] | None = None, *,
                     max_file_bytes: int = 64 * 1024 * 1024) -> Iterator[Path]:
        """A private temporary copy (mode 0700, removed at exit) of the folder's regular files and
        folders, for code that can only read by path (a toolkit's ``describe``, openpyxl,
        ``mailbox``): links, FIFOs, foreign hard links and files over ``max_file_bytes`` are
        left out, so whatever reads the copy reads only what the folder holds."""
        dest = Path(tempfile.mkdtemp(prefix="agentlab-copy-"))
        try:
            for e in self.walk(prune):
                target = dest / e.rel
                if e.kind == "dir":
                    target.mkdir(parents=True, exist_ok=True)
                elif e.readable and e.size <= max_file_bytes:
                    try:
                        data = self.read_bytes(e.rel, limit=max_file_bytes)
                    except (UnsafePathError, OSError):
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
            yield dest
        finally:
            shutil.rmtree(dest, ignore_errors=True)

    # -- writing ----------------------------------------------------------------------
    def make_dirs(self, rel: str | os.PathLike[str]) -> None:
        """Make the folder ``rel`` and its parents; a link or file standing where one of them
        belongs is removed first (never followed)."""
        with self._folder(parts_of(rel), create=True, replace=True):
            pass

    def remove(self, rel: str | os.PathLike[str]) -> bool:
        """Remove whatever is at ``rel`` (a link itself, a file, a folder with what it holds,
        never following a link); False when nothing of the folder is there."""
        parts = parts_of(rel)
        if not parts:
            raise DataError("cannot remove the folder's root")
        try:
            with self._folder(parts[:-1]) as fd:
                return _remove_at(fd, parts[-1])
        except (FileNotFoundError, UnsafePathError):  # the path goes through a link: nothing of ours there
            return False

    def write_bytes(self, rel: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> None:
        """Write ``data`` as a new regular file at ``rel`` (parents made as :meth:`make_dirs`),
        renamed over whatever was there: a link or hard link is replaced, never written
        through; a folder is removed first."""
        parts = parts_of(rel)
        if not parts:
            raise DataError("cannot write the folder's root")
        name = parts[-1]
        with self._folder(parts[:-1], create=True, replace=True) as fd:
            try:
                if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    shutil.rmtree(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            tmp = f".agentlab-write-{secrets.token_hex(6)}.tmp"
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(out, view):]
                    os.fsync(out)
                    os.fchmod(out, mode)
                finally:
                    os.close(out)
                os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=fd)
                except OSError:
                    pass
                raise

    def chmod(self, rel: str | os.PathLike[str], mode: int) -> None:
        """Set the permission bits of the regular file at ``rel`` (opened without following a
        link; a hard link to a file outside is refused: its mode is not ours to change)."""
        parts = parts_of(rel)
        with self._folder(parts[:-1]) as dfd:
            try:
                fd = os.open(parts[-1], _READ_FLAGS, dir_fd=dfd)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                raise UnsafePathError(f"{'/'.join(parts)}: not a regular file but a symbolic link (not followed)") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                raise UnsafePathError(f"{'/'.join(parts)}: mode not changed: not a file of this folder alone")
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def symlink(self, rel: str | os.PathLike[str], target: str) -> None:
        """Make ``rel`` a symbolic link to ``target`` (whatever was there removed); a link is
        only ever made, never followed."""
        parts = parts_of(rel)
        with self._folder(parts[:-1], create=True, replace=True) as fd:
            _remove_at(fd, parts[-1])
            os.symlink(target, parts[-1], dir_fd=fd)

    def readlink(self, rel: str | os.PathLike[str]) -> str:
        parts = parts_of(rel)
        with self._folder(parts[:-1]) as fd:
            return os.readlink(parts[-1], dir_fd=fd)

    def chown_all(self, uid: int, gid: int) -> int:
        """Give the root and everything under it to ``uid:gid`` (links themselves, never their
        targets; a regular file with more than one hard link is left alone: its inode may be a
        file outside). How many names changed owner."""
        changed = 0
        root_st = os.stat(self.root)
        if (root_st.st_uid, root_st.st_gid) != (uid, gid):
            os.chown(self.root, uid, gid)
            changed += 1

        def visit(fd: int) -> None:
            nonlocal changed
            try:
                with os.scandir(fd) as it:
                    names = [e.name for e in it]
            except OSError:
                return
            for name in names:
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                        continue
                    if (st.st_uid, st.st_gid) != (uid, gid):
                        os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
                        changed += 1
                    if stat.S_ISDIR(st.st_mode):
                        sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                        try:
                            visit(sub)
                        finally:
                            os.close(sub)
                except OSError:
                    continue

        with self._root_fd() as fd:
            visit(fd)
        return changed


def _remove_at(fd: int, name: str) -> bool:
    """Remove ``name`` in the folder ``fd`` whatever it is (a folder with its contents, never
    following a link); False when nothing is there."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=fd)
    else:
        os.unlink(name, dir_fd=fd)
    return True
