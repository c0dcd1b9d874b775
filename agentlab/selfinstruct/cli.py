"""``agentlab selfinstruct``: grow the agents' demonstrations (resumable), or only calibrate.

Mounted as one top-level command (``agentlab.selfinstruct.cli:selfinstruct`` in
``agentlab/cli.py``). Heavy libraries load inside the command.
"""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Self-instruct demonstrations with BERTScore filtering.", add_completion=False)


@app.command("selfinstruct")
def selfinstruct(
    agents: list[str] | None = typer.Option(None, "--agents", "-a", help="Agent name(s); repeat the option. Default: all."),
    per_agent: int | None = typer.Option(None, "--per-agent", "-n", help="Target demonstrations per agent, seeds included (default 100)."),
    generator: str | None = typer.Option(
        None, "--generator", "-g",
        help="Generator LM: 'embedded' (default SmolLM2-135M), an LLM config YAML, "
        "'openai:<base_url>:<model>', or a local model folder / .gguf file.",
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output folder (default data/demos)."),
    config: Path | None = typer.Option(None, "--config", "-c", help="SelfInstructConfig YAML; options given here override it."),
    max_rounds: int | None = typer.Option(None, "--max-rounds", help="Round budget per agent."),
    thresholds: Path | None = typer.Option(None, "--thresholds", help="Use this thresholds.json instead of calibrating."),
    coverage: float | None = typer.Option(None, "--coverage", help="Calibration: central band of same-domain pair scores."),
    chat: bool = typer.Option(False, "--chat", help="Chat-style prompt (for capable chat models) instead of completion-style."),
    fresh: bool = typer.Option(False, "--fresh", help="Discard the journal in --out and start over."),
    revise: bool = typer.Option(
        False, "--revise", help="Continue the journal under changed settings (prompt, generator, quality check, widened bands)."
    ),
    fit_bands: bool = typer.Option(
        False, "--fit-bands", help="Widen the bands of domains short of --per-agent, chosen by replaying their candidates."
    ),
    prompt_template: str | None = typer.Option(
        None, "--prompt-template", help="Template under data/prompts/, e.g. selfinstruct/requests."
    ),
    quality: bool | None = typer.Option(
        None, "--quality/--no-quality", help="Drop lines that are not concrete requests before Algorithm 1 (default on)."
    ),
    purge_quality: bool = typer.Option(
        False, "--purge-quality", help="Also withdraw already accepted rows that fail the quality check."
    ),
    time_budget: float | None = typer.Option(None, "--time-budget", help="Minutes after which no new round starts (resumable)."),
    calibrate_only: bool = typer.Option(False, "--calibrate-only", help="Only compute and print thresholds (Figure-7 analog)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide progress bars."),
    workers: int = typer.Option(1, "--workers", min=1, help="One shard per agent on N Ray workers (default 1: serial, in-process)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Run the shards on this existing Ray cluster."),
) -> None:
    """Generate demonstrations per agent with a generator LM, filtered by Algorithm 1 (BERTScore band)."""
    from agentlab.config import with_overrides
    from agentlab.parallel import Scale
    from agentlab.selfinstruct.config import SelfInstructConfig, parse_generator

    scale = Scale(workers=workers, address=ray_address)

    cfg = SelfInstructConfig.from_yaml(config) if config else SelfInstructConfig()
    cfg = with_overrides(SelfInstructConfig, cfg, {  # a flag not given (None, False) leaves the file's value
        "agents": list(agents) if agents else None, "per_agent": per_agent, "out_dir": out, "max_rounds": max_rounds,
        "generator": parse_generator(generator) if generator is not None else None, "thresholds": thresholds,
        "coverage": coverage, "prompt_style": "chat" if chat else None, "fresh": fresh or None, "revise": revise or None,
        "fit_bands": fit_bands or None, "prompt_template": prompt_template, "quality": quality,
        "purge_quality": purge_quality or None, "time_budget_min": time_budget})

    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    for name in cfg.agents or []:
        pool.get(name)  # unknown agent: one line, before any model loads
    if cfg.thresholds is not None:
        from agentlab.selfinstruct.config import Thresholds

        Thresholds.load(cfg.thresholds)  # tau1 > tau2 or a broken file: one line, before models load
    if calibrate_only:
        from agentlab.selfinstruct.pipeline import resolve_thresholds
        from agentlab.selfinstruct.scorer import load_scorer

        th = resolve_thresholds(cfg, pool, load_scorer(cfg))
        typer.echo(th.model_dump_json(indent=2, exclude_none=True))
        return
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    report = run_selfinstruct(cfg, pool=pool, progress=not no_progress, scale=scale)
    t = report.totals()
    for a in report.agents:
        typer.echo(
            f"{a.agent:14s} {a.total:4d} demos ({a.generated} generated in {a.rounds} rounds, "
            f"accept {a.acceptance_rate:.0%}, leaked {a.leaked}) {a.stopped or 'not finished'}"
        )
    typer.echo(
        f"wrote {report.out_dir}: {t['demonstrations']} demonstrations, {report.run_candidates} candidates this run "
        f"({report.candidates_per_min:.1f}/min), report.md beside it"
    )
    from agentlab.selfinstruct.report import leakage_sentence

    typer.echo(leakage_sentence(report.leakage))
