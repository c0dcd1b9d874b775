"""``agentlab models``: prepare and check the embedded models (offline)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

app = typer.Typer(help="Embedded models: prepare the cache, check they load.", no_args_is_help=True)


@app.command()
def prepare(
    backbone: list[str] = typer.Option(
        [], "--backbone", help="Embedded backbone(s) to convert (repeatable): smollm2-135m-instruct, gemma3-270m, or all. "
        "Default: the default backbone only; the others are converted on first use."),
) -> None:
    """Convert embedded backbones once into the cache (default: SmolLM2) and check MiniLM is installed.

    Gemma 3 270M is not converted by default (assembling and converting it takes ~1 min and ~1.3 GB
    of cache, which `make install` need not pay); its packages are checked and it is converted on
    first use, or here with ``--backbone gemma3-270m``."""
    from agentlab.errors import AgentlabError, ConfigError
    from agentlab.llm.config import EMBEDDED_BACKBONE, EMBEDDED_MODELS
    from agentlab.llm.embedded import converted_dir, converted_path, embedded_model, is_converted, minilm_path

    names = [f"embedded:{b.removeprefix('embedded:')}" for b in backbone]
    chosen = list(EMBEDDED_MODELS) if "embedded:all" in names else (names or [EMBEDDED_BACKBONE])
    for name in chosen:
        if name not in EMBEDDED_MODELS:
            raise ConfigError(f"--backbone must be one of {', '.join(m.removeprefix('embedded:') for m in EMBEDDED_MODELS)} or all, "
                              f"not '{name.removeprefix('embedded:')}'")
    for name in EMBEDDED_MODELS:
        spec = embedded_model(name)
        if name in chosen:
            t0 = time.perf_counter()
            folder = converted_dir(name)
            typer.echo(f"backbone  {spec.model_id} -> {folder} ({time.perf_counter() - t0:.1f} s)")
            continue
        try:
            if is_converted(name):  # asking assembles nothing
                typer.echo(f"backbone  {spec.model_id} -> {converted_path(name)} (converted earlier)")
            else:
                typer.echo(f"backbone  {spec.model_id}: installed; converted on first use "
                           f"(or now: agentlab models prepare --backbone {spec.slug})")
        except AgentlabError as exc:
            typer.echo(f"backbone  {spec.model_id}: {exc.message}")
    typer.echo(f"similarity all-MiniLM-L6-v2 -> {minilm_path()}")


@app.command()
def check(
    prompt: str = typer.Option("Say hello in five words.", help="A prompt to generate from."),
    llm_config: Path | None = typer.Option(None, "--llm-config", help="YAML LLM config (default: AGENTLAB_LLM_CONFIG / AGENTLAB_LLM_* or embedded SmolLM2; embedded:gemma3-270m for Gemma 3 270M)."),
) -> None:
    """Load the configured backend (--llm-config, AGENTLAB_LLM_CONFIG or AGENTLAB_LLM_*) and generate."""
    from agentlab.llm import ChatMessage, LLMConfig, SamplingParams, load_backend

    config = LLMConfig.from_yaml(llm_config) if llm_config else LLMConfig.from_env()
    t0 = time.perf_counter()
    backend = load_backend(config)
    t1 = time.perf_counter()
    reply = backend.chat([ChatMessage("user", prompt)], SamplingParams(max_new_tokens=32))[0]
    typer.echo(f"{backend.model_id}: loaded in {t1 - t0:.1f} s, generated in {time.perf_counter() - t1:.1f} s")
    typer.echo(reply.strip())
