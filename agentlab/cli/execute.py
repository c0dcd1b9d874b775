"""``agentlab exec``: carry task files out with the pool's agents and write results.jsonl.

Mounted as a single top-level command by :mod:`agentlab.cli`. The last line printed is
``execution_acc=<x> n=<n> harness_errors=<k>``; the exit status is 0 whenever the run
completed, whatever the success rate, and when ``--budget`` stopped it (a ``budget: stopped by ...``
line says so; see ``docs/execution.md``). With ``--seeds K`` (K > 1) the
lines before it give each domain's mean with its 95 % interval, pass@K and pass^K
(:mod:`agentlab.eval.variance`). The run folder's ``manifest.json`` is checked on ``--resume``
(``docs/reproducibility.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentlab.metaagent.router import CHECKPOINT_ROUTERS, DEFAULT_ROUTER, ROUTERS
from agentlab.teams.base import MODES, TEAMS

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.dialogue.person import Ask
    from agentlab.llm.config import LLMConfig
    from agentlab.llm.roles import ModelsFile
    from agentlab.teams.base import TeamSettings

_TEAMS_HELP = "; ".join(f"{name} ({entry.about})" for name, entry in TEAMS.items())


def _load_tasks(path: Path):
    from agentlab.tasks.spec import load_task, load_tasks

    return load_tasks(path) if path.is_dir() else [load_task(path)]


def parse_runner_options(items: list[str], flag: str = "--runner-option") -> dict[str, object]:
    """``["replan=false", "experts=[visual]"]`` -> ``{"replan": False, "experts": ["visual"]}`` (values
    read as YAML); a malformed item is one :class:`ConfigError` line naming it."""
    import yaml

    from agentlab.config import safe_load
    from agentlab.errors import ConfigError

    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} must be KEY=VALUE, not {item!r}")
        try:
            out[key.strip()] = safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"{flag} {item!r}: the value is not valid YAML ({' '.join(str(exc).split())[:120]})") from None
    return out


def exec_models(llm_config: Path | None, router_llm_config: Path | None) -> tuple[ModelsFile, LLMConfig]:
    """The agents' models (``--llm-config``: ``llm:`` and its ``roles:``; default ``AGENTLAB_LLM_*``) and
    the router's: ``--router-llm-config``, else the file's ``router`` role, else ``AGENTLAB_LLM_*``."""
    from agentlab.agents.roles import known_roles
    from agentlab.llm import LLMConfig
    from agentlab.llm.roles import ROUTER_ROLE, ModelsFile, load_models_file

    models = load_models_file(llm_config, known_roles()) if llm_config else ModelsFile(LLMConfig.from_env())
    if router_llm_config is not None:
        return models, LLMConfig.from_yaml(router_llm_config)
    return models, models.roles.get(ROUTER_ROLE) or LLMConfig.from_env()


def _sandbox_mode(requested: str | None, *, endpoint: bool) -> str:
    """The workspace isolation of a run: the one asked for, else ``bwrap`` (required) when a model
    endpoint is configured -- a remote model's programs never run unsandboxed unless told -- else
    ``auto``. A required sandbox that cannot run here is one line, before anything starts."""
    from agentlab.envs.workspace import bwrap_available
    from agentlab.errors import ConfigError

    mode = requested or ("bwrap" if endpoint else "auto")
    if mode not in ("auto", "bwrap", "none"):
        raise ConfigError(f"--sandbox must be auto, bwrap or none, not '{mode}'")
    if mode == "bwrap" and not bwrap_available():
        why = "a model endpoint is configured" if requested is None else "--sandbox bwrap"
        raise ConfigError(f"the sandbox is required ({why}) but bubblewrap is missing or cannot create namespaces "
                          "here; install it (apt-get install bubblewrap), or pass --sandbox none to run the agents' "
                          "programs without it (docs/failures.md says what then still holds)")
    return mode


def _team_setup(team: str | None, interaction: str | None, answers: Path | None,
                items: list[str]) -> tuple[TeamSettings | None, Ask | None]:
    """The ``--team``'s settings, checked by its own model (named by its :data:`~agentlab.teams.base.TEAMS`
    entry), and the person's callback when those settings ask one: scripted answers from ``--answers``,
    else the terminal."""
    from agentlab.dialogue.person import ScriptedAnswers, terminal_ask
    from agentlab.errors import ConfigError
    from agentlab.teams.base import team_settings

    given = {**parse_runner_options(items, "--team-option"), **({} if interaction is None else {"interaction": interaction})}
    if team is None:
        if given or answers is not None:
            raise ConfigError("--interaction, --answers and --team-option set a team's settings; they need --team")
        return None, None
    settings = team_settings(team, given, where="--team-option")
    if settings is None or not settings.asks_person:
        if answers is not None:
            raise ConfigError(f"--answers: --team {team} asks nobody with these settings (see its --interaction)")
        return settings, None
    return settings, (ScriptedAnswers.from_file(answers) if answers is not None else terminal_ask)


def exec_tasks(
    tasks: Path = typer.Option(..., "--tasks", help="A task file or a folder of them (data/tasks format)."),
    out: Path = typer.Option(..., "--out", help="Run folder: results.jsonl and one episode folder per task."),
    router: str = typer.Option(DEFAULT_ROUTER, "--router", help=f"{' | '.join(ROUTERS)} (default {DEFAULT_ROUTER}: the answer key, each task's gold agent or its gold plan; a trained router routes through the store)."),
    agent: str | None = typer.Option(None, "--agent", help="Force this pool agent for every task."),
    llm_config: Path | None = typer.Option(None, "--llm-config", help="YAML LLM config, optionally with a roles: map (a model per role, docs/roles.md) (default: AGENTLAB_LLM_* or embedded SmolLM2)."),
    max_steps: int = typer.Option(10, "--max-steps", min=1, help="Replies/actions per task."),
    time_limit: float = typer.Option(600.0, "--time-limit", min=1.0, help="Wall-clock seconds per task (checked before each action; a model call is cut there too)."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed recorded in each row (the first one with --seeds)."),
    seeds: int = typer.Option(1, "--seeds", min=1, help="Run each task K times, with seeds seed..seed+K-1; print means with 95% intervals, pass@k and pass^k."),
    max_new_tokens: int | None = typer.Option(None, "--max-new-tokens", min=16, help="Cap every model reply at N new tokens (default: each runner's own)."),
    resume: bool = typer.Option(False, "--resume", help="Skip (task, seed) pairs already in results.jsonl; refused when manifest.json differs."),
    force_resume: bool = typer.Option(False, "--force-resume", help="Resume even when the manifest differs (the difference is recorded in it)."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="With --resume: run the harness-error rows again (the same as --rerun errors)."),
    rerun: str | None = typer.Option(None, "--rerun", help="With --resume: run again the episodes whose rows failed (failed), ended in a harness error (errors), or both (failed,errors); the replaced rows move to history.jsonl."),
    budget: str | None = typer.Option(None, "--budget", help="Stop starting episodes once one would pass a limit: tokens=N,usd=X,seconds=S (any subset); with --resume, a new budget for the rest (docs/execution.md)."),
    prices: Path | None = typer.Option(None, "--prices", help="YAML price table (USD per million tokens per model id) over data/prices.yaml and AGENTLAB_PRICES; rows get usd."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Run at most this many new tasks."),
    tokens: Path | None = typer.Option(None, "--tokens", help=f"Router checkpoint (default: the shipped one for {' | '.join(sorted(CHECKPOINT_ROUTERS))})."),
    agents_dir: Path | None = typer.Option(None, "--agents", help="Agent documents folder (default data/agents)."),
    display: str | None = typer.Option(None, "--display", help="X display for desktop tasks (default: a private Xvfb per task); with --workers N, one per worker: :1,:2."),
    device: str = typer.Option("fake", "--device", help="Phone tasks: 'fake' (the built-in protocol-level fake device) or an adb serial; with --workers N, one per worker: a,b."),
    runner_option: list[str] = typer.Option([], "--runner-option", "-O", help="KEY=VALUE laid over every document's runner_options (repeat; VALUE is YAML), e.g. -O replan=false -O 'experts=[visual, textual]'."),
    mode: str = typer.Option(MODES[0], "--mode", help=f"{' | '.join(MODES)}: one agent per task (a gold plan still runs under --router {DEFAULT_ROUTER}), or the router ranks, a manager writes the plan, its steps run."),
    manager: str = typer.Option("llm", "--manager", help="Manager mode: llm (hash-manager prompt over the top-K documents) | clauses (split the instruction, route each part)."),
    k: int = typer.Option(5, "--k", min=1, help="Manager mode: the top-K agents the manager may use."),
    unconstrained: bool = typer.Option(False, "--unconstrained", help="Manager mode: prompt only, no plan-grammar decoding (the ablation)."),
    max_plan_steps: int = typer.Option(3, "--max-plan-steps", min=1, help="Manager mode: at most this many plan steps."),
    min_plan_steps: int = typer.Option(1, "--min-plan-steps", min=1, help="Constrained manager: at least this many plan steps."),
    copy_task_words: bool = typer.Option(False, "--copy-task-words", help="Constrained manager: subtasks only use the task's own words."),
    clauses: bool = typer.Option(False, "--clauses", help="llm manager: route each part of the instruction on its own; when the parts land in different applications, their agents are the plan's candidates instead of the top-K."),
    team: str | None = typer.Option(None, "--team", help=f"A team carries every task out: {_TEAMS_HELP}."),
    interaction: str | None = typer.Option(None, "--interaction", help="--team: when a team that asks a person asks (the same as --team-option interaction=MODE; e.g. automatic | passive | active)."),
    answers: Path | None = typer.Option(None, "--answers", help="--team: the person's answers in advance, one per line (yes | no | stop | retry[: text] | reassign AGENT | backtrack K[: text]); without it the terminal asks."),
    team_option: list[str] = typer.Option([], "--team-option", "--cola-option", help="--team: KEY=VALUE of the team's settings, checked by its own settings model (repeat; VALUE is YAML), e.g. --team-option max_retries=2 (--cola-option: its earlier name)."),
    router_llm_config: Path | None = typer.Option(None, "--router-llm-config", help="YAML LLM config of the router/manager, apart from the agents' --llm-config (default: AGENTLAB_LLM_*)."),
    workers: int = typer.Option(1, "--workers", min=1, help="Run tasks on N Ray workers (default 1: serial, in-process, Ray not started)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Run on this existing Ray cluster (e.g. ray://head:10001 or auto) with --workers workers."),
    cpus_per_worker: float = typer.Option(1.0, "--cpus-per-worker", min=0.01, help="CPUs each Ray worker reserves (less for episodes waiting on a remote model)."),
    sandbox: str | None = typer.Option(None, "--sandbox", help="How workspace programs are isolated: bwrap (required: refuse to run without bubblewrap) | auto (bubblewrap when it works here) | none. Default: bwrap when a model endpoint is configured, else auto."),
) -> None:
    """Run tasks end to end: route, act in a sandboxed workspace, evaluate; print ExecutionAcc."""
    from agentlab.envs.phone_task import parse_device
    from agentlab.envs.task_env import TaskEnvOptions
    from agentlab.envs.workspace import WorkspaceConfig
    from agentlab.run.episode import ExecOptions
    from agentlab.run.worker import EpisodeRecipe, RunSpec, execute, per_worker
    from agentlab.errors import ConfigError
    from agentlab.metaagent.router import check_router
    from agentlab.parallel import Scale
    from agentlab.pool import AgentPool
    from agentlab.teams.planning import MANAGERS, ManagerOptions

    check_router(router)
    from agentlab.record.budget import Budget
    from agentlab.llm.prices import PriceTable
    from agentlab.record.rerun import parse_rerun

    run_budget = Budget.parse(budget) if budget is not None else None
    price_table = PriceTable.load(prices)  # every price file checked now, before anything slow
    rerun_kinds = parse_rerun(rerun, retry_errors=retry_errors)
    if rerun_kinds and not (resume or force_resume):
        raise ConfigError(f"--{'rerun' if rerun is not None else 'retry-errors'} runs rows of an earlier run again; "
                          "it needs --resume")
    if mode not in MODES:
        raise ConfigError(f"--mode must be {' or '.join(MODES)}, not '{mode}'")
    if manager not in MANAGERS:
        raise ConfigError(f"--manager must be one of {', '.join(MANAGERS)}, not '{manager}'")
    if tasks.is_dir() and out.resolve() == tasks.resolve():
        raise ConfigError("--out is the task folder: its results.jsonl and manifest.json would be read as task "
                          "files; choose another --out", where=out)
    scale = Scale(workers=workers, address=ray_address, cpus_per_worker=cpus_per_worker)
    displays = per_worker(display, workers, "--display")  # a named screen or phone is not shared by workers
    devices = per_worker(device, workers, "--device", shareable=frozenset({"fake"}))
    for serial in devices:  # a malformed --device is one line now, not a harness error per phone task
        parse_device(serial)
    settings, ask = _team_setup(team, interaction, answers, team_option)
    if team is not None and mode != MODES[0]:
        raise ConfigError(f"--team {team} writes its own plan; drop --mode {mode}")
    items = _load_tasks(tasks)
    if agent is not None:
        AgentPool.from_dir(agents_dir).get(agent)
    # resolved here, not in each worker: every worker (every node of a cluster) uses this process's choice
    models, router_cfg = exec_models(llm_config, router_llm_config)
    isolation = _sandbox_mode(sandbox, endpoint="openai" in (models.llm.kind, router_cfg.kind,
                                                             *(c.kind for c in models.agent_roles().values())))
    options = ExecOptions(router=router, max_steps=max_steps, time_limit_s=time_limit, seed=seed, seeds=seeds,
                          max_new_tokens=max_new_tokens, runner_options=parse_runner_options(runner_option),
                          envs=TaskEnvOptions(display=displays[0] if displays else None,
                                              device=devices[0] if devices else device,
                                              workspace=WorkspaceConfig(sandbox=isolation)),
                          mode=mode, team=team, team_settings=settings)  # type: ignore[arg-type]
    manager_options = ManagerOptions(kind=manager, k=k, constrained=not unconstrained,  # type: ignore[arg-type]
                                     max_steps=max_plan_steps, min_steps=min_plan_steps, copy_task_words=copy_task_words,
                                     clauses=clauses)
    recipe = EpisodeRecipe(out_dir=out, options=options, models=models, router_llm=router_cfg, router=router, tokens=tokens,
                           agent=agent, agents_dir=agents_dir, displays=displays, devices=devices, manager=manager_options)
    spec = RunSpec(recipe, scale=scale, resume=resume, force_resume=force_resume, limit=limit, budget=run_budget,
                   prices=price_table, rerun=rerun_kinds)
    summary = execute(spec, items, ask=ask)
    for domain, (acc, n) in summary.by_domain().items():
        typer.echo(f"{domain}: ExecutionAcc={acc:.3f} (n={n})")
    if seeds > 1 and summary.rows:
        from agentlab.eval.variance import seed_stats

        for stats in seed_stats(summary.rows):
            typer.echo(stats.line())
    typer.echo(f"results: {out / 'results.jsonl'} ({summary.ran} run, {summary.skipped} kept from before)")
    if summary.reruns or summary.rerun_pending:
        from agentlab.record.rerun import summary as rerun_summary

        typer.echo(rerun_summary(summary.reruns, pending=summary.rerun_pending))
    if summary.budget is not None:
        typer.echo(summary.budget.line())
    done, annotated = summary.subtask_counts
    if annotated:  # judged on the end state by each annotated subtask's own checks (docs/multi_agent.md)
        typer.echo(f"subtask_acc={done / annotated:.4f} subtasks={annotated}")
    typer.echo(f"execution_acc={summary.execution_acc:.4f} n={len(summary.rows)} harness_errors={summary.harness_errors}")
