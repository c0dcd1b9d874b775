"""The workspace as an :class:`~agentlab.envs.base.Env`: a code agent's programs are its actions.

:class:`WorkspaceEnv` wraps a :class:`~agentlab.envs.workspace.Workspace` that already holds
the task's files. Its observation is text only: the file listing (names and sizes, trimmed)
and what the last program did (language, exit code, stdout and stderr, each trimmed to its start
and its end -- where a traceback is -- with a note giving the true number of bytes cut), so a
multi-turn code agent sees the effect of every program.
``step(RunProgram)`` runs the program in the sandbox; ``Done``/``Fail`` end the episode.
"""

from __future__ import annotations

import logging

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.actions.workspace import WORKSPACE, RunProgram
from agentlab.envs.base import Env, Observation, StepResult
from agentlab.envs.workspace import RunResult, Workspace, clip_middle
from agentlab.errors import InvalidActionError

log = logging.getLogger(__name__)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MB"


def trim(text: str, limit: int, total_bytes: int | None = None) -> str:
    """At most ``limit`` characters of a program's output: its start and its end (a traceback ends
    it), with the true number of bytes cut between them. ``total_bytes``: what the program wrote
    in all, when ``text`` holds only part of it (:attr:`RunResult.stdout_bytes`)."""
    total = total_bytes if total_bytes is not None else len(text.encode("utf-8", "replace"))
    return clip_middle(text, "", limit, total)


class WorkspaceEnv(Env):
    """A text-only env over one workspace; close() closes the workspace."""

    def __init__(self, workspace: Workspace, *, max_files: int = 50, max_output_chars: int = 2000) -> None:
        self.workspace = workspace
        self.max_files = max_files
        self.max_output_chars = max_output_chars
        self.last: RunResult | None = None

    @property
    def actions(self) -> ActionSpace:
        return WORKSPACE

    def listing(self) -> str:
        """The workspace's files with their sizes, as ``lstat`` sees them: a symbolic link a program
        left is listed as a link, never followed (its target's size or existence is not shown)."""
        entries = [e for e in self.workspace.entries() if e.kind != "dir"]
        files = [e for e in entries if e.kind == "file"]
        lines = [f"Files in the workspace ({len(files)}):"]
        for e in entries[: self.max_files]:
            what = _size(e.size) if e.kind == "file" else "(symbolic link, not followed)" if e.kind == "link" else "(not a regular file)"
            lines.append(f"  {e.rel}  {what}")
        if len(entries) > self.max_files:
            lines.append(f"  ... and {len(entries) - self.max_files} more")
        if not entries:
            lines.append("  (empty)")
        return "\n".join(lines)

    def program_report(self, res: RunResult) -> str:
        status = "timed out (killed)" if res.timed_out else f"exit code {res.returncode}"
        parts = [f"Last program ({res.language}): {status} after {res.duration_s:.2f}s"]
        parts.append("stdout:\n" + (trim(res.stdout, self.max_output_chars, res.stdout_bytes) if res.stdout else "(empty)"))
        parts.append("stderr:\n" + (trim(res.stderr, self.max_output_chars, res.stderr_bytes) if res.stderr else "(empty)"))
        return "\n".join(parts)

    def observe(self) -> Observation:
        text = self.listing()
        info: dict[str, object] = {"files": self.workspace.files(), "sandboxed": self.workspace.sandboxed}
        if self.last is not None:
            text += "\n" + self.program_report(self.last)
            info.update(returncode=self.last.returncode, timed_out=self.last.timed_out)
        return Observation(screenshot=None, elements=[], text=text, info=info)

    def reset(self, task: str | None = None) -> Observation:
        self.last = None
        return self.observe()

    def run(self, program: RunProgram) -> RunResult:
        """Run one program in the sandbox and remember its result for the next observation."""
        if program.language == "python":
            self.last = self.workspace.run_python(program.code)
        else:
            self.last = self.workspace.run_bash(program.code)
        return self.last

    def step(self, action: Action) -> StepResult:
        if action not in WORKSPACE:
            raise InvalidActionError(f"{action.call_name}() is not a workspace action; use {WORKSPACE.call_names()}")
        if isinstance(action, RunProgram):
            res = self.run(action)
            return StepResult(self.observe(), done=False,
                              info={"returncode": res.returncode, "ok": res.ok, "duration_s": res.duration_s,
                                    "timed_out": res.timed_out,
                                    "stdout": trim(res.stdout, self.max_output_chars, res.stdout_bytes),
                                    "stderr": trim(res.stderr, self.max_output_chars, res.stderr_bytes)})
        return StepResult(self.observe(), done=True)

    def close(self) -> None:
        self.workspace.close()
