"""Typed errors a user can act on.

Every error raised for bad input derives from :class:`AgentlabError`; the CLI turns them
into one line (``where: what is wrong; what to do``) and a non-zero exit, never a traceback.
"""

from __future__ import annotations

from pathlib import Path


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


class Terminated(AgentlabError):
    """The process was asked to stop (SIGTERM): raised where it was, so every ``finally`` runs
    (programs, displays and Ray workers are stopped) and the CLI exits 143 with one line."""

    exit_code = 143


def raise_on_sigterm() -> None:
    """Turn SIGTERM into :class:`Terminated` in this (main) thread; a no-op elsewhere. Called by
    the CLI at start and again after libraries that install their own handler (Ray's prints a
    native stack dump and exits 134)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, _frame: object) -> None:
        raise Terminated("terminated (SIGTERM); finished results were kept and the run can be resumed")

    signal.signal(signal.SIGTERM, handler)


class ApplicationExitedError(HarnessError):
    """A task's desktop application exited in the middle of an episode: the screen no longer shows
    what the agent acts on (a black screen, and an accessibility tree that may still list the dead
    application's elements for a while), so the episode ends as a harness-error row naming it."""


class DiskFullError(AgentlabError):
    """A result file could not be written because the disk (or the user's quota) is full: one line
    naming the file and what was kept (earlier rows and the previous version of the file)."""
