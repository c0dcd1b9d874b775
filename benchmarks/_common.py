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


# -- arms that are `agentlab exec` run folders (phone_docs.py, gui_route.py) ---------------------------
def exec_rows(folder: Path) -> list[dict]:
    """The rows of an ``agentlab exec`` folder, the latest per task id (a resumed run appends)."""
    import json

    path = folder / "results.jsonl"
    if not path.exists():
        return []
    latest: dict[str, dict] = {}
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            latest[str(r["id"])] = r
    return list(latest.values())


def run_exec_arm(name: str, tasks: Path, ids: set[str], folder: Path, options: Sequence[str], *, max_steps: int,
                 max_new_tokens: int, llm_config: Path | None) -> list[dict]:
    """Run (or reuse, or resume) one arm's ``agentlab exec --router gt`` folder with runner
    options ``options`` (``-O`` each); its rows for ``ids``, sorted by id. A folder already
    holding every task is reused; one holding some is resumed."""
    import subprocess

    have = {str(r["id"]) for r in exec_rows(folder)}
    if not ids <= have:
        cmd = [sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(tasks), "--router", "gt",
               "--max-steps", str(max_steps), "--max-new-tokens", str(max_new_tokens), "--out", str(folder)]
        for opt in options:
            cmd += ["-O", opt]
        if llm_config:
            cmd += ["--llm-config", str(llm_config)]
        if have:
            cmd.append("--resume")
        log(f"[{name}] {' '.join(cmd[1:])}")
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "exec.log", "a", encoding="utf-8") as fh:
            rc = subprocess.run(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT,
                                env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}).returncode
        if rc not in (0, 1):  # exec exits 1 when tasks fail; anything else is the harness's own error
            raise RuntimeError(f"agentlab exec for arm {name} exited {rc}; see {folder / 'exec.log'}")
    else:
        log(f"[{name}] reusing {folder} ({len(have)} rows)")
    return sorted((r for r in exec_rows(folder) if str(r["id"]) in ids), key=lambda r: str(r["id"]))


def typed_calls(folder: Path, rows: Sequence[dict]) -> list[dict]:
    """The ``info`` of every step with a typed GUI call in the trajectories of ``rows`` (under ``folder``)."""
    from agentlab.envs.trajectory import load_trajectory

    out = []
    for r in rows:
        episode = folder / str(r.get("trajectory") or "")
        if r.get("trajectory") and episode.is_dir():
            out += [st.info for st in load_trajectory(episode).steps if st.info.get("gui_call")]
    return out


def per_task_table(ids: set[str], arms: Sequence[tuple[str, Sequence[dict]]]) -> list[str]:
    """``Per task (1 = solved)``: one row per task id, one column per arm (``-``: no row)."""
    out = ["Per task (1 = solved):", "", "| task | " + " | ".join(name for name, _ in arms) + " |",
           "|---|" + "---|" * len(arms)]
    for tid in sorted(ids):
        cells = []
        for _, rows in arms:
            row = next((r for r in rows if r["id"] == tid), None)
            cells.append("-" if row is None else str(int(bool(row.get("success")))))
        out.append(f"| {tid} | " + " | ".join(cells) + " |")
    return out
