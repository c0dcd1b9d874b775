"""``agentlab view``, ``agentlab report`` and ``agentlab compare``: look at a run folder, and compare runs, from the shell.

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


def compare(
    run_dirs: list[Path] = typer.Argument(..., help="Two or more run folders; the first is the baseline the others are compared with."),
    out: Path | None = typer.Option(None, "--out", help="Folder for compare.md, compare.html and compare.json "
                                    "(default: beside the first run, compare-<A>-vs-<B>)."),
    bootstrap: int = typer.Option(2000, "--bootstrap", help="Paired-bootstrap resamples for the 95 % interval of B − A."),
    bootstrap_seed: int = typer.Option(0, "--bootstrap-seed", help="Seed of the resampling (same seed, same interval)."),
) -> None:
    """Compare runs task by task: ExecutionAcc per domain, McNemar's exact test / a paired bootstrap, one verdict per pair."""
    from agentlab.viz.compare import HTML_FILE, JSON_FILE, MD_FILE, write_compare

    cmp, folder = write_compare(list(run_dirs), out, resamples=bootstrap, seed=bootstrap_seed)
    for pair in cmp.pairs:
        typer.echo(pair.verdict)
    for name in (MD_FILE, HTML_FILE, JSON_FILE):
        typer.echo(f"compare: {folder / name}")
