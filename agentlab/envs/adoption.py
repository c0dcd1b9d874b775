"""The runner's own hold on a workspace program's processes: it adopts their orphans and ends them all.

Why: without bubblewrap, the supervisor that ends a program's processes (:mod:`agentlab.envs.reaper`)
is a process the program can kill (``kill -9 $PPID``) or stop (``kill -STOP $PPID``). Its
children would then be re-parented to init and escape, above all the ones that left the session and
emptied their environment (``env -i setsid ...``), which carry no mark the runner could find. So
while a program runs, the runner itself is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``, a
process attribute a program cannot change from below): an orphan of the program's tree comes to
the runner, not to init. When the run ends (finished, timed out, or the runner stopping on SIGTERM
or Ctrl-C) :meth:`Adoption.end_all` kills every process of the tree: the supervisor and its
descendants, and every child of the runner started since the supervisor (the adopted orphans) with
theirs, generation by generation, reaping the adopted ones.

The attribute is held only while a program runs (several runs in threads share it), so orphans of
anything else this process started are not adopted at other times.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from types import TracebackType

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class _Proc:
    ppid: int
    state: str
    #: clock ticks after boot when it started (``/proc/<pid>/stat`` field 22)
    start: int


def _stat(pid: int | str) -> _Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()
    try:
        return _Proc(int(fields[1]), fields[0].decode(), int(fields[19]))
    except (IndexError, ValueError):
        return None


def process_state(pid: int) -> str | None:
    """A process's state letter (``R``, ``S``, ``T`` stopped, ``Z`` zombie ...); None when gone."""
    p = _stat(pid)
    return p.state if p is not None else None


def _table() -> dict[int, _Proc]:
    """Every process of ``/proc`` this process can see."""
    out: dict[int, _Proc] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (p := _stat(name)) is not None:
            out[int(name)] = p
    return out


def _set_subreaper(on: bool) -> bool:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Adoption:
    """``with Adoption() as a: proc = Popen(...); a.track(proc.pid); ...; a.end_all()``."""

    _lock = threading.Lock()
    _depth = 0
    #: the supervisors of the runs under way in this process (another run's is not ours to end)
    _live: set[int] = set()
    _warned = False

    def __init__(self) -> None:
        self.root: int | None = None
        self.since: int | None = None

    def __enter__(self) -> Adoption:
        with Adoption._lock:
            if Adoption._depth == 0 and not _set_subreaper(True) and not Adoption._warned:
                Adoption._warned = True
                log.warning("cannot make this process a child subreaper: a program that kills its supervisor "
                            "may leave processes behind")
            Adoption._depth += 1
        return self

    def track(self, pid: int) -> None:
        """The program's top process (its supervisor), just started."""
        p = _stat(pid)
        self.root, self.since = pid, p.start if p is not None else None
        with Adoption._lock:
            Adoption._live.add(pid)

    def end_all(self, *, rounds: int = 500) -> int:
        """SIGKILL every process of the run's tree (see the module's docstring) until none is left;
        reap the adopted ones (never the supervisor: its ``Popen`` reaps it). How many were killed."""
        if self.root is None or self.since is None:
            return 0
        me, killed = os.getpid(), set()
        for _ in range(rounds):
            table = _table()
            children: dict[int, list[int]] = {}
            for pid, p in table.items():
                children.setdefault(p.ppid, []).append(pid)
            with Adoption._lock:
                others = Adoption._live - {self.root}
            roots = [pid for pid in children.get(me, []) if table[pid].start >= self.since and pid not in others]
            tree, stack = [], list(roots)
            while stack:
                pid = stack.pop()
                tree.append(pid)
                stack.extend(children.get(pid, []))
            live = [pid for pid in tree if table[pid].state not in ("Z", "X")]
            for pid in live:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
                except (ProcessLookupError, PermissionError):
                    pass
            unreaped = 0
            for pid in roots:
                if pid == self.root:
                    continue
                try:
                    unreaped += os.waitpid(pid, os.WNOHANG)[0] == 0
                except ChildProcessError:
                    pass
            if not live and not unreaped:
                return len(killed)
            time.sleep(0.005)
        log.warning("workspace: processes of a program were still appearing after %d rounds of kills", rounds)
        return len(killed)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with Adoption._lock:
            if self.root is not None:
                Adoption._live.discard(self.root)
            Adoption._depth -= 1
            if Adoption._depth == 0:
                _set_subreaper(False)
