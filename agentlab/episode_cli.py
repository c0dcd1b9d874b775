"""``agentlab exec``: carry task files out with the pool's agents and write results.jsonl.

Mounted as a single top-level command by :mod:`agentlab.cli`. The last line printed is
``execution_acc=<x> n=<n> harness_errors=<k>``; the exit status is 0 whenever the run
completed, whatever the success rate (see ``docs/execution.md``).
"""

from __future__ import annotations

from pathlib import Path

import typer

_ROUTERS = ("gt", "agenttoken", "embedding", "icl", "lora", "prompt")


def _load_tasks(path: Path):
    from agentlab.eval.exec_tasks import load_task, load_tasks

    return load_tasks(path) if path.is_dir() else [load_task(path)]


def parse_runner_options(items: list[str]) -> dict[str, object]:
    """``["replan=false", "experts=[visual]"]`` -> ``{"replan": False, "experts": ["visual"]}`` (values
    read as YAML); a malformed item is one :class:`ConfigError` line naming it."""
    import yaml

    from agentlab.errors import ConfigError

    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--runner-option must be KEY=VALUE, not {item!r}")
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"--runner-option {item!r}: the value is not valid YAML ({' '.join(str(exc).split())[:120]})") from None
    return out


def exec_tasks(
    tasks: Path = typer.Option(..., "--tasks", help="A task file or a folder of them (data/tasks format)."),
    out: Path = typer.Option(..., "--out", help="Run folder: results.jsonl and one episode folder per task."),
    router: str = typer.Option("gt", "--router", help="gt | agenttoken | embedding | icl | lora | prompt"),
    agent: str | None = typer.Option(None, "--agent", help="Force this pool agent for every task."),
    llm_config: Path | None = typer.Option(None, "--llm-config", help="YAML LLM config (default: AGENTLAB_LLM_* or embedded SmolLM2)."),
    max_steps: int = typer.Option(10, "--max-steps", min=1, help="Replies/actions per task."),
    time_limit: float = typer.Option(600.0, "--time-limit", min=1.0, help="Wall-clock seconds per task (checked before each action)."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed recorded in each row."),
    max_new_tokens: int | None = typer.Option(None, "--max-new-tokens", min=16, help="Cap every model reply at N new tokens (default: each runner's own)."),
    resume: bool = typer.Option(False, "--resume", help="Skip tasks already in results.jsonl."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="With --resume: run the harness-error rows again."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Run at most this many new tasks."),
    tokens: Path | None = typer.Option(None, "--tokens", help="Router checkpoint (default: data/tokens for agenttoken)."),
    agents_dir: Path | None = typer.Option(None, "--agents", help="Agent documents folder (default data/agents)."),
    display: str | None = typer.Option(None, "--display", help="X display for desktop tasks (default: a private Xvfb per task)."),
    device: str = typer.Option("fake", "--device", help="Phone tasks: 'fake' (the built-in protocol-level fake device) or an adb serial."),
    runner_option: list[str] = typer.Option([], "--runner-option", "-O", help="KEY=VALUE laid over every document's runner_options (repeat; VALUE is YAML), e.g. -O replan=false -O 'experts=[visual, textual]'."),
) -> None:
    """Run tasks end to end: route, act in a sandboxed workspace, evaluate; print ExecutionAcc."""
    from agentlab.envs.task_env import TaskEnvOptions
    from agentlab.episode import ExecOptions, check_out_dir, router_route, run_suite
    from agentlab.errors import ConfigError
    from agentlab.llm import LLMConfig, load_backend
    from agentlab.pool import AgentPool

    if router not in _ROUTERS:
        raise ConfigError(f"--router must be one of {', '.join(_ROUTERS)}, not '{router}'")
    check_out_dir(out, resume)  # before anything slow: nothing is touched on this error
    if device != "fake":  # a malformed --device is one line now, not a harness error per phone task
        from agentlab.envs.phone_task import parse_device

        parse_device(device)
    overrides = parse_runner_options(runner_option)
    items = _load_tasks(tasks)
    pool = AgentPool.from_dir(agents_dir)
    if agent is not None:
        pool.get(agent)
    route = None if agent is not None or router == "gt" else router_route(router, pool, tokens)
    llm = load_backend(LLMConfig.from_yaml(llm_config) if llm_config else LLMConfig.from_env())
    options = ExecOptions(router=router, max_steps=max_steps, time_limit_s=time_limit, seed=seed, max_new_tokens=max_new_tokens,
                          runner_options=overrides, envs=TaskEnvOptions(display=display, device=device))
    summary = run_suite(items, pool=pool, llm=llm, out_dir=out, options=options, route=route, agent=agent,
                        resume=resume, limit=limit, retry_errors=retry_errors)
    for domain, (acc, n) in summary.by_domain().items():
        typer.echo(f"{domain}: ExecutionAcc={acc:.3f} (n={n})")
    typer.echo(f"results: {out / 'results.jsonl'} ({summary.ran} run, {summary.skipped} kept from before)")
    typer.echo(f"execution_acc={summary.execution_acc:.4f} n={len(summary.rows)} harness_errors={summary.harness_errors}")
