"""Build the env a runner acts in from an execution task file, and bring its end state home.

Which env a task gets follows from the agent routed to it (:attr:`Agent.env_kind`): a CLI
agent works in a sandboxed workspace over the task's files, a desktop GUI agent on an X
display with the task's application opened on those files, a phone agent on a device. Each
kind has an *opener* (:data:`~agentlab.tasks.env_kinds.ENV_KINDS`, ``"module:function"`` so the heavy desktop and phone
imports load only when needed) returning a :class:`TaskEnv`: the env itself, the folder the
evaluator reads (:attr:`TaskEnv.root`), and :meth:`TaskEnv.collect`, which brings the end
state into that folder (closes the application so its files are flushed, pulls the
device's files) before the task is judged.

An opener that cannot run here (no Xvfb, the application is not installed, no device)
raises :class:`~agentlab.errors.EnvironmentUnavailableError`; the episode runner records
that as a harness error, not as the agent's failure.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.envs.base import Env
from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.envs.workspace_env import WorkspaceEnv
from agentlab.errors import ConfigError
from agentlab.tasks.env_kinds import ENV_KINDS
from agentlab.tasks.spec import ExecTask


@dataclass
class TaskEnvOptions:
    """Where the envs of a suite run (one object, filled from ``agentlab exec`` flags)."""

    workspace: WorkspaceConfig = field(default_factory=WorkspaceConfig)
    #: X display for desktop tasks: None starts a private Xvfb per task; ":0" uses that screen
    display: str | None = None
    #: phone tasks: "fake" runs the protocol-level fake device in-process; else an adb serial
    device: str = "fake"
    #: seconds to wait for a task's application window (LibreOffice's first start is slow)
    app_start_timeout_s: float = 120.0

    @property
    def sandbox(self) -> str:
        """How the programs agents run are isolated (``auto`` | ``bwrap`` | ``none``; recorded in the manifest)."""
        return self.workspace.sandbox


class TaskEnv:
    """An env opened for one task. Subclasses override :meth:`collect` and :meth:`close`."""

    def __init__(self, env: Env, root: Path, isolation: str | None = None) -> None:
        self.env = env
        self.root = root  #: the folder whose files the task's evaluator reads
        #: how the agent's programs are isolated ("bwrap" | "none"); None where it runs no programs
        self.isolation = isolation

    #: passed to the evaluator's getters that read live state (a device, a screen)
    @property
    def eval_env(self) -> Any:
        return None

    def collect(self) -> None:
        """Bring the end state into :attr:`root` (called once, after the agent stopped; also
        before :attr:`root`'s files are rolled back, so nothing is writing them)."""

    def reopen(self) -> None:
        """Show :attr:`root`'s files again after they were restored from a snapshot (a team's
        backtrack): nothing to do for a workspace; a desktop relaunches its applications."""

    def close(self) -> None:
        self.env.close()


Opener = Callable[[ExecTask, Path, TaskEnvOptions], TaskEnv]

def open_task_env(kind: str, task: ExecTask, folder: Path, options: TaskEnvOptions) -> TaskEnv:
    """Open the ``kind`` env for ``task`` inside the episode ``folder``."""
    if kind not in ENV_KINDS:
        raise ConfigError(f"no env of kind {kind!r}; known: {', '.join(ENV_KINDS)}", where=task.source or task.id)
    module, _, attr = ENV_KINDS[kind].opener.partition(":")
    opener: Opener = getattr(importlib.import_module(module), attr)
    return opener(task, folder, options)


def open_workspace(task: ExecTask, folder: Path, options: TaskEnvOptions) -> TaskEnv:
    """A fresh sandboxed workspace (``folder/workspace``) holding the task's start files."""
    ws = Workspace(folder / "workspace", options.workspace)
    task.prepare(ws.folder)
    return TaskEnv(WorkspaceEnv(ws), ws.folder, isolation="bwrap" if ws.sandboxed else "none")
