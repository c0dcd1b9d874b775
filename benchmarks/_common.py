"""Helpers shared by the benchmark scripts: the command line, the results file, the summary line.

Each script is ``main(argv) -> int``: it parses its options (always ``--quick`` and a results
path), makes one study call (``agentlab.experiments``: the measuring lives there), writes the
study's Markdown with the exact command to ``benchmarks/results/<name>.md`` (atomically) and
ends with ONE ``key=value`` line. Tests call ``main`` in-process.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def command_line(script: str, argv: Sequence[str] | None = None) -> str:
    """The command that is running, as a user would type it from the repository root: ``script``
    (a benchmark's ``__file__``) with ``argv`` (None: this process's own arguments)."""
    path = Path(script).resolve()
    try:
        script_s = str(path.relative_to(ROOT))
    except ValueError:
        script_s = str(path)
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["python", script_s, *(shlex.quote(a) for a in args)])


def write_result(path: Path, title: str, body: list[str], summary: str | None = None, *, command: str,
                 note: str = "") -> None:
    """Write a results file (atomically): the title, ``Command: `command```note``, the body and,
    when given, the summary line."""
    from agentlab.fileio import atomic_write_text

    tail = ["", "Summary line:", "", "```", summary, "```"] if summary is not None else []
    atomic_write_text(path, "\n".join([f"## {title}", "", f"Command: `{command}`{note}", "", *body, *tail, ""]))


def summary_line(values: Mapping[str, float | int | str | None], floats: str = ".4f") -> str:
    """The ``key=value`` line a benchmark ends with (``na`` for a missing value)."""
    def fmt(v: float | int | str | None) -> str:
        if v is None:
            return "na"
        if isinstance(v, float):
            return format(v, floats)
        return str(v)

    return " ".join(f"{k}={fmt(v)}" for k, v in values.items())


def usage_error(message: str) -> int:
    """A user's mistake: one line on stderr, exit status 1 (what ``main`` returns)."""
    print(message, file=sys.stderr)
    return 1


def log(msg: str) -> None:
    print(msg, flush=True)



def publish(path: Path, title: str, body: list[str], summary: str, script: str, argv: Sequence[str] | None) -> int:
    """The shared tail of a benchmark's ``main``: write its results file, print the body and the
    summary line (what ``make bench`` and the smoke tests read), exit 0."""
    write_result(path, title, body, summary, command=command_line(script, argv))
    print("\n".join(body))
    print(summary, flush=True)
    return 0


def run_main(main: Callable[[], int]) -> None:
    """Run a benchmark's ``main`` as a script: warnings only, except the experiments' own progress."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("agentlab.experiments").setLevel(logging.INFO)
    sys.exit(main())
