"""One writer per run folder: a lock file that a second ``agentlab exec`` on the same ``--out`` meets.

Why: two processes appending to one ``results.jsonl`` run the same tasks twice, clean up each
other's episode folders and trip over each other's temporary files; the folder is then refused by
``report``. The lock is an OS lock (``flock``) on ``<run>/.lock``: the kernel drops it when its
owner dies, however it dies (SIGKILL included), so a lock can never be left held by nobody. The
file's text (pid, host, start time, command) only serves the messages: the refusal names the
owner, and a lock left by a run that died is taken over with a warning naming it.

The file is never deleted (deleting a lock file races with a process that has it open); a run
that ends empties it, so a file with text and no lock means the run that wrote it died.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from agentlab.errors import DataError

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"


@dataclass(frozen=True)
class LockOwner:
    """Who holds (or held) a run folder's lock, as its lock file says."""

    pid: int
    host: str
    since: str
    command: str = ""

    @classmethod
    def me(cls) -> LockOwner:
        return cls(os.getpid(), socket.gethostname(), time.strftime("%Y-%m-%d %H:%M:%S %z"), _command())

    @classmethod
    def parse(cls, text: str) -> LockOwner | None:
        try:
            raw = json.loads(text)
            return cls(int(raw["pid"]), str(raw["host"]), str(raw["since"]), str(raw.get("command", "")))
        except (ValueError, TypeError, KeyError):
            return None

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} since {self.since}" + (f" ({self.command})" if self.command else "")

    def alive_here(self) -> bool | None:
        """Whether the owner still runs (None: on another host, which cannot be asked from here)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class RunLock:
    """``with RunLock(out_dir): ...`` holds ``<out_dir>/.lock`` for this process, or raises
    :class:`DataError` naming the process that holds it. Re-entrant within one process (a suite
    run inside a caller that already holds the folder)."""

    _held: dict[Path, int] = {}  # folder -> depth, in this process

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).resolve()
        self.path = self.folder / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        if self.folder in RunLock._held:
            RunLock._held[self.folder] += 1
            return self
        self.folder.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a planted link must not make us lock (and truncate) some other file
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:  # a link (ELOOP), a folder, no permission
            raise DataError(f"cannot lock the run folder ({exc.strerror}); {LOCK_FILE} must be a plain file",
                            where=self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            text = _read(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DataError(f"cannot lock the run folder ({exc.strerror})", where=self.path) from None
            raise _in_use(self.folder, text) from None
        left = LockOwner.parse(_read(fd))
        if left is not None and left.pid != os.getpid():
            alive = left.alive_here()
            state = ("that process is gone" if alive is False else "on another host" if alive is None
                     else "that pid is now another process")
            log.warning("%s: taking over the lock left by %s (%s): that run ended without releasing it; its "
                        "finished rows are kept", self.folder, left.describe(), state)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(LockOwner.me().__dict__).encode(), 0)
        except OSError:  # a full disk: the flock holds all the same; the text only names the owner
            pass
        self._fd = fd
        RunLock._held[self.folder] = 1
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        depth = RunLock._held.get(self.folder, 0) - 1
        if depth > 0:
            RunLock._held[self.folder] = depth
            return
        RunLock._held.pop(self.folder, None)
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)  # emptied, not deleted: see the module's docstring
            except OSError:
                pass
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def check_unlocked(folder: Path) -> None:
    """Raise what :class:`RunLock` would if another process holds ``folder`` (nothing is written):
    for the checks a command makes before anything slow."""
    folder = Path(folder).resolve()
    if folder in RunLock._held or not (folder / LOCK_FILE).is_file():
        return
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # RunLock itself will say what is wrong
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise _in_use(folder, _read(fd)) from None
    finally:
        os.close(fd)


def _in_use(folder: Path, text: str) -> DataError:
    """The refusal naming the lock's owner (as its file says)."""
    owner = LockOwner.parse(text)
    who = owner.describe() if owner else "another process"
    return DataError(f"this run folder is in use by {who}; wait for that run to end, or choose another --out",
                     where=folder)


def _command() -> str:
    """What this process is, in a word or two: ``agentlab exec``, or the script's name."""
    argv = sys.argv or [""]
    name = Path(argv[0]).name
    if name in ("agentlab", "__main__.py"):  # the console script, or python -m agentlab.cli
        return " ".join(["agentlab", *argv[1:2]])
    return name


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
    except OSError:
        return ""
