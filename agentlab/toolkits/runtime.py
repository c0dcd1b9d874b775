"""Run a reply's calls inside the sandboxed workspace and report each result as one JSON line.

The agent's runner writes the calls into a small program (:func:`program`) that the workspace
runs like any other (its own folder, time limit, sandbox): the toolkit's functions touch only
the workspace, and what they return or raise is what the agent sees next.
"""

from __future__ import annotations

import json
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

    kit = load_toolkit(toolkit)
    for call in json.loads(calls_json):
        name, args = call["name"], call["args"]
        try:
            result = kit.tools[name].fn(**args)
            print(RESULT + json.dumps({"call": name, "ok": True, "result": str(result)}), flush=True)
        except (ToolError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            print(RESULT + json.dumps({"call": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
            sys.exit(1)


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
