"""Run a reply's calls inside the sandboxed workspace and report each result as one JSON line.

The agent's runner writes the calls into a small program (:func:`program`) that the workspace
runs like any other (its own folder, time limit, sandbox): the toolkit's functions touch only
the workspace, and what they return or raise is what the agent sees next. No call writes a
file larger than :data:`~agentlab.toolkits.base.MAX_OUTPUT_BYTES` (the program's file-size limit
is lowered to it; Python ignores SIGXFSZ, so such a write fails with EFBIG and is reported).
"""

from __future__ import annotations

import errno
import json
import resource
import sys
from typing import Any

#: the marker in front of each result line (program output may hold other prints)
RESULT = "@@result "


def program(toolkit: str, calls: list[dict[str, Any]]) -> str:
    """Python source that runs ``calls`` (``{"name", "args"}``) with toolkit ``toolkit``."""
    return ("from agentlab.toolkits.runtime import run_calls\n"
            f"run_calls({toolkit!r}, {json.dumps(calls)!r})\n")


def run_calls(toolkit: str, calls_json: str) -> None:
    """Run each call in order, printing one ``@@result {...}`` line per call; stop at the first error."""
    from agentlab.toolkits import load_toolkit
    from agentlab.toolkits.base import ToolError

    bound_file_size()
    kit = load_toolkit(toolkit)
    for call in json.loads(calls_json):
        name, args = call["name"], call["args"]
        try:
            result = kit.tools[name].fn(**args)
            print(RESULT + json.dumps({"call": name, "ok": True, "result": str(result)}), flush=True)
        except (ToolError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            print(RESULT + json.dumps({"call": name, "ok": False, "error": _problem(exc)}), flush=True)
            sys.exit(1)


def bound_file_size() -> None:
    """Lower this process's file-size limit to ``MAX_OUTPUT_BYTES`` (never raise it). Called only
    in the one-shot tool program: the limit stays with the process."""
    from agentlab.toolkits.base import MAX_OUTPUT_BYTES

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY or soft > MAX_OUTPUT_BYTES:
        limit = MAX_OUTPUT_BYTES if hard == resource.RLIM_INFINITY else min(MAX_OUTPUT_BYTES, hard)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))


def _problem(exc: Exception) -> str:
    """What the agent is told about a failed call (a file grown past the limit said plainly)."""
    from agentlab.toolkits.base import MAX_OUTPUT_BYTES

    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return (f"OSError: a file would grow past the toolkit's limit of {MAX_OUTPUT_BYTES // 2**20} MB "
                f"({exc.filename or 'a file'}); nothing larger is written")
    return f"{type(exc).__name__}: {exc}"


def results(stdout: str) -> list[dict[str, Any]]:
    """The result records a program printed."""
    out = []
    for line in stdout.splitlines():
        if line.startswith(RESULT):
            try:
                out.append(json.loads(line[len(RESULT):]))
            except ValueError:
                continue
    return out
