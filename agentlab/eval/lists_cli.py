"""``agentlab benchmarks``: fetch the public task lists, and say what is there.

``fetch`` downloads OSWorld's and AppAgent's instructions from their public repositories at
pinned commits (or copies them from a folder with ``--from``), checks every file's sha256 and
writes the lists to ``external/benchmarks`` (or ``AGENTLAB_BENCHMARKS``). ``status`` lists each
file: present or not, pinned hash or not, where it came from, and what reads it.
"""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="The public benchmark task lists (OSWorld, AppAgent): fetch them, see what is there.",
                  no_args_is_help=True)


@app.command()
def fetch(
    dest: Path | None = typer.Option(None, "--dest", help="Folder to write (default AGENTLAB_BENCHMARKS or external/benchmarks)."),
    copy_from: Path | None = typer.Option(None, "--from", help="Copy the lists from this folder instead of downloading (hashes checked)."),
    mirror: str | None = typer.Option(None, "--mirror", help="Base URL serving <owner>/<repo>/<commit>/<path> "
                                      "(default AGENTLAB_BENCHMARKS_MIRROR or https://raw.githubusercontent.com)."),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds to wait for each download."),
) -> None:
    """Download (or copy) the lists at their pinned commits and check every file's sha256."""
    from agentlab.eval import public_lists

    if copy_from is not None and not copy_from.is_dir():
        from agentlab.errors import DataError

        raise DataError("--from must be a folder holding osworld/ and appagent/", where=copy_from)
    report = public_lists.fetch(dest, mirror=mirror, copy_from=copy_from, timeout=timeout)
    for name in report.written:
        typer.echo(f"wrote {report.dest / name} (sha256 ok)")
    for name in report.kept:
        typer.echo(f"kept  {report.dest / name} (already there, sha256 ok)")
    if report.downloaded or report.reused:
        typer.echo(f"{report.downloaded} file(s) downloaded, {report.reused} reused from an interrupted fetch")


@app.command()
def status(where: Path | None = typer.Option(None, "--dir", help="Lists folder (default AGENTLAB_BENCHMARKS or external/benchmarks).")) -> None:
    """What is in the lists folder, where each list came from, and what uses it."""
    from agentlab.eval import public_lists

    base = where or public_lists.root()
    typer.echo(f"lists folder: {base}" + ("  (AGENTLAB_BENCHMARKS)" if where is None and _env_set() else ""))
    rows = public_lists.status(base)
    for st in rows:
        size = f", {st.lines} tasks" if st.lines else ""
        typer.echo(f"- {st.path}: {st.state}{size}; {st.origin}")
        for use in st.used_by:
            typer.echo(f"    used by: {use}")
    gone = [st.path for st in rows if not st.present]
    if gone:
        typer.echo(f"missing: {', '.join(gone)}; sections that need them are skipped with one line each. "
                   f"Fill the folder with `{public_lists.FETCH}`.")


def _env_set() -> bool:
    import os

    return bool(os.environ.get("AGENTLAB_BENCHMARKS"))
