"""``agentlab view`` and ``agentlab report``: look at a run folder, and compare runs, from the shell.

Both read run folders of any version of the project (``agentlab.viz.runs``); a folder that is not
a run is one ``error: ...`` line (the CLI turns :class:`~agentlab.errors.AgentlabError` into it).
Each prints the path(s) it wrote on stdout, so scripts can pick them up.
"""

from __future__ import annotations

from pathlib import Path

import typer


def view(
    run_dir: Path = typer.Argument(..., help="A run folder (agentlab exec --out DIR): results.jsonl and episodes/."),
    out: Path | None = typer.Option(None, "--out", help="Folder to write the site into (default: RUN_DIR/view)."),
) -> None:
    """Write a static site to look at a run: an index of every episode and one page per episode."""
    from agentlab.viz.site import write_site

    index = write_site(run_dir, out, progress=True)
    typer.echo(f"view: {index}")


def report(
    run_dirs: list[Path] = typer.Argument(..., help="Run folders; the first is the one the others are compared with."),
    out: Path | None = typer.Option(None, "--out", help="FILE: writes FILE.md and FILE.html (default with one run: RUN_DIR/report)."),
) -> None:
    """Write a results report (Markdown and HTML): ExecutionAcc with 95 % intervals, cost, harness errors, reproduction."""
    from agentlab.viz.report import write_report

    md, html = write_report(list(run_dirs), out)
    typer.echo(f"report: {md}")
    typer.echo(f"report: {html}")
