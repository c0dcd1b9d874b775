"""``agentlab skill-prior``: synthesize, replay and fit an app's skill prior (issue #40)."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def skill_prior(app: str = typer.Option("clock", "--app", help="the application: clock (pairs replayed on the fake device) or a desktop app with request templates (data/gui_priors/templates)"),
                n: int = typer.Option(240, "--n", min=4, help="synthesized requests (replayed; the failing and near-evaluation ones are dropped)"),
                seed: int = typer.Option(0, "--seed"),
                out: Path | None = typer.Option(None, "--out", help="the prior's folder (default data/gui_priors/<app>)"),
                pairs: Path | None = typer.Option(None, "--pairs", help="the kept pairs (default data/gui_priors/<app>.pairs.jsonl)")) -> None:
    """Synthesize (request -> skill call) pairs for an app's GUI specialist, replay each call on its
    own synthesized start state on the fake device, keep the pairs whose end state is the asked one
    and whose request is not near an evaluation instruction, and fit the app's skill prior on them
    (the typed deployment multiplies it into its choice of skill). Prints the prior's card."""
    from agentlab.selfinstruct.calls.gui import build_skill_prior

    card = build_skill_prior(app, n, seed=seed, out=out, pairs_out=pairs)
    typer.echo(json.dumps(card, indent=2))
