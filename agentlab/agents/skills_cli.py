"""``agentlab skills``: learn the desktop specialists' app skills from demonstrations, check them, list them.

    agentlab skills check [--demos data/skills/demos] [--out runs/skills-check]   # replay every demonstration on its app
    agentlab skills learn [--demos data/skills/demos] [--out data/skills]         # write data/skills/<app>.json
    agentlab skills list [APP]
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import typer


log = logging.getLogger(__name__)

app = typer.Typer(help="App skills of the desktop specialists: learned from demonstrations (agentlab.agents.gui_skills).",
                  no_args_is_help=True)


@app.command("learn")
def learn(demos: Path = typer.Option(None, "--demos", help="demonstrations folder (default data/skills/demos)"),
          out: Path = typer.Option(None, "--out", help="where the libraries go (default data/skills)"),
          documents: bool = typer.Option(True, "--documents/--no-documents",
                                         help="also list each app's skills in its GUI specialists' documents (# Skills)")) -> None:
    """Turn every demonstration into a parametrised skill and write one library per application."""
    from agentlab.agents.gui_skills import learn_library, list_in_documents, load_demos, write_library

    t0 = time.perf_counter()
    library = learn_library(load_demos(demos))  # a bad demonstration: one line naming it (agentlab.cli.main)
    for name, skills in sorted(library.items()):
        path = write_library(name, skills, out)
        typer.echo(f"{name}: {len(skills)} skill(s) -> {path}")
        for s in skills:
            typer.echo(f"  {s.signature()}: {s.doc}")
    if documents:
        for path in list_in_documents(library):
            typer.echo(f"# Skills listed in {path}")
    typer.echo(f"learned in {time.perf_counter() - t0:.2f}s")


@app.command("check")
def check(demos: Path = typer.Option(None, "--demos", help="demonstrations folder (default data/skills/demos)"),
          out: Path = typer.Option(Path("runs/skills-check"), "--out", help="a folder per demonstration (screens of failures)"),
          only: str = typer.Option("", "--only", help="comma-separated skill names")) -> None:
    """Replay every demonstration on its real application (a private Xvfb, as `agentlab tasks check --gui`;
    the fake device for a phone app):
    the start state must fail the demonstration's checker and the end state pass it."""
    from agentlab.agents.gui_skills import check_demo, load_demos
    from agentlab.errors import ConfigError

    every = load_demos(demos)
    wanted = [n for n in only.split(",") if n]
    unknown = sorted(set(wanted) - {d.skill for d in every})
    if unknown:
        raise ConfigError(f"--only: no demonstration teaches {', '.join(unknown)}; known: "
                          f"{', '.join(sorted({d.skill for d in every}))}")
    chosen = [d for d in every if not wanted or d.skill in wanted]
    failed = 0
    for demo in chosen:
        ok, line = check_demo(demo, out / f"{demo.app}-{demo.skill}")
        failed += not ok
        typer.echo(f"{demo.app}.{demo.skill}: {line}")
    typer.echo(f"{len(chosen) - failed}/{len(chosen)} demonstrations replay")
    if failed:
        raise typer.Exit(1)


@app.command("list")
def list_skills(name: str = typer.Argument("", help="an application (pool domain), e.g. chrome; default every one")) -> None:
    """The learned skills, as the agent documents show them."""
    from agentlab.agents.gui_skills import load_skills, skills_dir, skills_listing

    apps = [name] if name else sorted(p.stem for p in skills_dir().glob("*.json"))
    for a in apps:
        skills = load_skills(a)
        typer.echo(f"{a}:\n{skills_listing(skills) or '  (no skills)'}")
