"""``agentlab pool``: validate, list and enrol agent documents."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from agentlab.errors import AgentDocumentError

app = typer.Typer(help="Agent documents: validate, list, enrol.", no_args_is_help=True)


@app.command()
def validate(folder: Path | None = typer.Argument(None, help="Folder of agent documents (default data/agents).")) -> None:
    """Check every document; print 'path:line: what is wrong' for each problem."""
    from agentlab.paths import agents_dir
    from agentlab.pool import validate_dir

    folder = folder or agents_dir()
    from agentlab.agents.base import runner_problems

    docs, problems = validate_dir(folder)
    problems = problems + runner_problems(docs)
    for p in problems:
        typer.echo(p, err=True)
    if problems:
        typer.echo(f"{len(problems)} problem(s) in {folder}", err=True)
        raise typer.Exit(2)
    by_platform: dict[str, int] = {}
    for d in docs:
        by_platform[d.platform] = by_platform.get(d.platform, 0) + 1
    parts = ", ".join(f"{n} {p}" for p, n in sorted(by_platform.items()))
    typer.echo(f"ok: {len(docs)} agents ({parts}) in {folder}")


@app.command("list")
def list_(
    folder: Path | None = typer.Option(None, "--dir", help="Folder of agent documents."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Print name, platform, interface and domain of every enrolled agent."""
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir(folder)
    rows = [
        {
            "name": a.name,
            "platform": a.platform,
            "interface": a.interface,
            "domain": a.domain,
            "modality": a.modality,
            "base_model": a.base_model,
            "demonstrations": len(a.demonstrations),
        }
        for a in pool
    ]
    if as_json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    typer.echo(f"{'name':<14} {'platform':<8} {'iface':<5} {'domain':<12} demos")
    for r in rows:
        typer.echo(f"{r['name']:<14} {r['platform']:<8} {r['interface']:<5} {r['domain']:<12} {r['demonstrations']}")


@app.command()
def enroll(
    file: Path = typer.Argument(..., help="The new agent document (Markdown)."),
    folder: Path | None = typer.Option(None, "--dir", help="Pool folder (default data/agents)."),
) -> None:
    """Validate a new agent document and add it to the pool (refuses a duplicate name)."""
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir(folder)
    try:
        doc = pool.enroll(file)
    except AgentDocumentError as exc:
        for p in exc.problems:
            typer.echo(p, err=True)
        raise typer.Exit(2) from None
    typer.echo(f"enrolled {doc.name} ({doc.platform}, {doc.interface}, {doc.domain}) -> {doc.path}")
    typer.echo("next: generate its demonstrations (agentlab selfinstruct --agents "
               f"{doc.name}) and train its token (agentlab train --add {doc.name})")
