"""Typed errors a user can act on.

Every error raised for bad input derives from :class:`AgentlabError`; the CLI turns them
into one line (``where: what is wrong; what to do``) and a non-zero exit, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class AgentlabError(Exception):
    """Base class for errors caused by input, configuration or the environment."""

    exit_code: int = 1

    def __init__(self, message: str, *, where: str | Path | None = None) -> None:
        self.where = str(where) if where is not None else None
        self.message = message
        super().__init__(f"{self.where}: {message}" if self.where else message)


class ConfigError(AgentlabError):
    """A configuration value or file is invalid."""


class ModelNotFoundError(AgentlabError):
    """A model (backbone or scorer) is missing or unreadable."""


class BackendError(AgentlabError):
    """A model backend failed at run time (server down, bad response)."""


class HarnessError(AgentlabError):
    """The harness could not carry a task out (not the agent's failure): a harness-error row."""


class TimeLimitExceeded(AgentlabError):
    """The task's wall-time limit ran out: before an action, or during a model call that would have
    outlived it (a task failure, recorded as status ``time_limit``, not a harness error)."""


class ContextOverflowError(AgentlabError):
    """A prompt does not fit the model's context: the episode cannot go on (the task's failure,
    recorded as status ``context_overflow``, not a harness error)."""


class ActionRejected(AgentlabError):
    """A reviewer watching each action judged the last one wrong (COLA's per-action review): the
    acting agent's step ends there as ``failed`` with the reviewer's reason, and the team decides
    what comes next (retry with that reason, another agent). Not a harness error."""


class AgentDocumentError(AgentlabError):
    """One or more agent documents are malformed; ``problems`` holds one line each."""

    exit_code = 2

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        first = self.problems[0] if self.problems else "invalid agent document"
        more = f" (and {len(self.problems) - 1} more problem(s))" if len(self.problems) > 1 else ""
        super().__init__(first + more)


class UnknownAgentError(AgentlabError):
    """An agent name is not in the pool."""


class CheckpointError(AgentlabError):
    """A checkpoint is corrupt or does not match the backbone/pool/template."""


class DataError(AgentlabError):
    """A data file (demonstrations, tasks, trajectories) is missing or malformed."""


class EnvironmentUnavailableError(AgentlabError):
    """A device or display cannot be reached (no DISPLAY, no adb device, ...)."""


class DeviceDisconnectedError(AgentlabError):
    """A device went away in the middle of an episode."""


class ActionParseError(AgentlabError):
    """Model output could not be parsed into an action."""


class InvalidActionError(AgentlabError):
    """A well-formed action this screen cannot take (unknown element number, untypeable text);
    nothing was sent to the device."""


class Stopped(BaseException):
    """The process was asked to stop (SIGTERM or Ctrl-C): raised where it was, so every ``finally``
    runs (programs, displays and Ray workers are stopped), and the CLI exits with one line.

    Not an :class:`AgentlabError`, not even an :class:`Exception`, for the reason
    ``KeyboardInterrupt`` is not one: a stop is no task's failure, so nothing that turns errors into
    rows (the episode kernel) or retries them may catch it; it goes up to the command, and a resumed run
    carries out the work it cut off."""

    exit_code: int = 1
    #: what the user did, the start of the line the CLI prints
    what: str = "stopped"

    def __init__(self, message: str | None = None) -> None:
        self.message = message or f"{self.what}; finished results were kept and the run can be resumed"
        super().__init__(self.message)


class Terminated(Stopped):
    """SIGTERM: the CLI exits 143 (128 + 15)."""

    exit_code = 143
    what = "terminated (SIGTERM)"


class Interrupted(Stopped):
    """Ctrl-C (SIGINT): the CLI exits 130 (128 + 2)."""

    exit_code = 130
    what = "interrupted (Ctrl-C)"


class OutOfBudget(Stopped):
    """The run's wall-clock budget (``agentlab exec --budget seconds=S``) ran out while episodes were
    in flight: raised where they run (a SIGALRM in a serial run, the driver's loop on Ray) so they
    are cut as a stop signal cuts them -- every ``finally`` runs, they leave no row -- and the run
    ends as a budget stop (:mod:`agentlab.record.budget`), not as an error."""

    exit_code = 0
    what = "budget reached"


_stopping: list[int] = []


def stop_for(signum: int) -> Stopped:
    """The exception a stop signal raises (SIGINT: :class:`Interrupted`, else :class:`Terminated`),
    noting that the process is stopping: :func:`stop_on_signals` then ignores a repeated signal.
    For code that takes signals itself (the Ray driver loop) and raises the stop later."""
    import signal

    _stopping.append(signum)
    return Interrupted() if signum == signal.SIGINT else Terminated()


def install_stop_handlers() -> dict[int, Any]:
    """Make SIGTERM raise :class:`Terminated` and SIGINT :class:`Interrupted` in this (main) thread;
    the handlers that were there before (nothing off the main thread, where Python takes no signal).
    SIGINT stays ignored when the shell started this process with it ignored (``cmd &``).

    Only the first signal raises: one that comes while the stop unwinds is logged and ignored,
    so it cannot cut short a ``finally`` that is ending programs (SIGKILL still stops at once;
    workspace programs then die with their supervisor)."""
    import logging
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    _stopping.clear()

    def handler(signum: int, _frame: object) -> None:
        if _stopping:
            logging.getLogger(__name__).warning("%s again: already stopping, cleaning up first",
                                                signal.Signals(signum).name)
            return
        raise stop_for(signum)

    before: dict[int, Any] = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig, old in before.items():
        if not (sig == signal.SIGINT and old == signal.SIG_IGN):
            signal.signal(sig, handler)
    return before


def restore_handlers(before: dict[int, Any]) -> None:
    """Put back signal handlers saved by :func:`install_stop_handlers` (or ``signal.getsignal``)."""
    import signal

    for sig, old in before.items():
        signal.signal(sig, old if old is not None else signal.SIG_DFL)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """:func:`install_stop_handlers` while inside; the handlers there before come back at exit."""
    before = install_stop_handlers()
    try:
        yield
    finally:
        restore_handlers(before)


class ApplicationExitedError(HarnessError):
    """A task's desktop application exited in the middle of an episode: the screen no longer shows
    what the agent acts on (a black screen, and an accessibility tree that may still list the dead
    application's elements for a while), so the episode ends as a harness-error row naming it."""


class DiskFullError(AgentlabError):
    """A result file could not be written because the disk (or the user's quota) is full: one line
    naming the file and what was kept (earlier rows and the previous version of the file)."""
