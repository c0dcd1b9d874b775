"""Open a phone env for an execution task (not built yet: a harness error, not a task failure)."""

from __future__ import annotations

from pathlib import Path

from agentlab.envs.task_env import TaskEnv, TaskEnvOptions
from agentlab.errors import EnvironmentUnavailableError
from agentlab.eval.exec_tasks import ExecTask


def open_phone_task(task: ExecTask, folder: Path, options: TaskEnvOptions) -> TaskEnv:
    raise EnvironmentUnavailableError(f"a phone env cannot be built from a task file yet (task {task.id})")
