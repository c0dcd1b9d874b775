"""A tiny supervisor that runs one workspace program and leaves none of its processes behind.

Why a separate process: without bubblewrap there is no PID namespace to tear down, and a
program can shed every mark the runner could put on it (a new session with ``setsid``, an
emptied environment with ``env -i``). Two kernel features cannot be shed:

- ``PR_SET_CHILD_SUBREAPER``: every orphaned descendant of this supervisor is re-parented to
  it instead of to init, so "all my descendants" stays a list the supervisor can walk;
- ``PR_SET_PDEATHSIG``: when the runner dies (``kill -9``, Ctrl-C, SIGTERM), the kernel sends
  this supervisor SIGTERM, and it ends the whole tree before it exits; the program itself gets
  SIGKILL when this supervisor dies.

The program can still kill or stop this supervisor (same user): the runner then ends what is left
itself (:mod:`agentlab.envs.adoption`).

Run as ``python -I -S reaper.py -- PROGRAM ARGS...``. It forks the program, waits for it, then
kills whatever the program left running (background children included) and exits with the
program's status (dying of the same signal when the program died of one). On SIGTERM, SIGINT or
SIGHUP it kills the tree and exits 128+signal. Standard library only, no agentlab imports:
it starts in milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _children(me: int) -> tuple[list[int], list[int]]:
    """(live children, zombie children) of ``me``, read from ``/proc``."""
    live: list[int] = []
    dead: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            (dead if fields[0] == b"Z" else live).append(int(name))
    return live, dead


def kill_descendants() -> None:
    """SIGKILL every descendant, generation by generation (the orphans of a killed child come to
    this subreaper), reaping as it goes, until none is left."""
    me = os.getpid()
    for _ in range(1000):
        live, dead = _children(me)
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in dead + live:
            try:
                os.waitpid(pid, 0 if pid in live else os.WNOHANG)
            except ChildProcessError:
                pass
        if not live and not dead:
            return


def _on_signal(sig: int, _frame: object) -> None:
    kill_descendants()
    os._exit(128 + sig)


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        sys.stderr.write("usage: reaper.py -- PROGRAM [ARGS...]\n")
        return 2
    program = argv[argv.index("--") + 1:]
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    if os.getppid() != parent:  # the runner died before the death signal was armed
        return 128 + signal.SIGTERM
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        # the program dies with its supervisor, should it kill it (what it started is the runner's
        # to end then: the runner is a subreaper too, see agentlab/envs/adoption.py)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != me:
            os._exit(128 + signal.SIGKILL)
        try:
            os.execvp(program[0], program)
        except OSError as exc:
            sys.stderr.write(f"cannot run {program[0]}: {exc.strerror}\n")
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    kill_descendants()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # died of a signal: die of it too, so the runner sees what the program saw
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
