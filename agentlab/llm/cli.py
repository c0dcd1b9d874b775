"""``agentlab models``: prepare and check the embedded models (offline)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

app = typer.Typer(help="Embedded models: prepare the cache, check they load.", no_args_is_help=True)


@app.command()
def prepare() -> None:
    """Convert the embedded SmolLM2 GGUF once (cached) and check MiniLM is installed."""
    from agentlab.llm.embedded import converted_smollm2_dir, minilm_path

    t0 = time.perf_counter()
    folder = converted_smollm2_dir()
    typer.echo(f"backbone  SmolLM2-135M-Instruct -> {folder} ({time.perf_counter() - t0:.1f} s)")
    typer.echo(f"similarity all-MiniLM-L6-v2 -> {minilm_path()}")


@app.command()
def check(
    prompt: str = typer.Option("Say hello in five words.", help="A prompt to generate from."),
    llm_config: Path | None = typer.Option(None, "--llm-config", help="YAML LLM config (default: AGENTLAB_LLM_CONFIG / AGENTLAB_LLM_* or embedded SmolLM2)."),
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
