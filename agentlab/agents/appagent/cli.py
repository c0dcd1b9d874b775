"""``agentlab agent``: explore or survey an app, record/learn a demonstration, deploy, replay, inspect.

Every run writes a trajectory under ``runs/<run>/<episode>/`` and prints where. The model
comes from ``--llm-config`` (YAML) or ``AGENTLAB_LLM_*`` (default: embedded SmolLM2);
the agent's settings from ``--config`` (YAML with :class:`AppAgentConfig` fields), which
command-line options override.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentlab.agents.appagent.core import AppAgentConfig, EpisodeResult
    from agentlab.envs.base import Env, Observation
    from agentlab.tasks.spec import ExecTask
    from agentlab.llm.base import LLMBackend

app = typer.Typer(help="The AppAgent agent: explore, survey, demo, learn, deploy, replay, episodes, docs.", no_args_is_help=True)

_APP = typer.Option(..., "--app", help="App name: the documentation folder data/docs/<app>/.")
_ENV = typer.Option("android", "--env", help="android or desktop.")
_SERIAL = typer.Option(None, "--serial", help="Device serial (`adb devices`); default: the only device.")
_HOST = typer.Option("127.0.0.1", "--adb-host")
_PORT = typer.Option(5037, "--adb-port")
_IME = typer.Option("input", "--ime", help="input (ASCII only) or adbkeyboard (ADBKeyboard IME installed).")
_RUN = typer.Option(None, "--run", help="Run folder name under runs/ (default: <phase>-<date>).")
_EPISODE = typer.Option(None, "--episode", help="Episode folder name (default: a timestamp).")
_CONFIG = typer.Option(None, "--config", help="YAML with AppAgentConfig fields.")
_LLM = typer.Option(None, "--llm-config", help="YAML LLM config (default: AGENTLAB_LLM_* or embedded SmolLM2).")
_DOCS = typer.Option(None, "--docs-dir", help="Documentation root (default data/docs).")


def _config(path: Path | None, **overrides: Any) -> AppAgentConfig:
    from agentlab.agents.appagent.core import AppAgentConfig
    from agentlab.config import load_config, with_overrides

    if path is not None:
        return load_config(AppAgentConfig, path, wrapper="agent", what="agent config file", overrides=overrides)
    return with_overrides(AppAgentConfig, {}, overrides)


def _llm(path: Path | None) -> LLMBackend:
    from agentlab.llm import LLMConfig, load_backend

    return load_backend(LLMConfig.from_yaml(path) if path else LLMConfig.from_env())


def _env(kind: str, serial: str | None, host: str, port: int, ime: str) -> Env:
    from agentlab.errors import ConfigError

    if kind == "android":
        from agentlab.envs import AndroidEnv

        return AndroidEnv(serial=serial, adb_host=host, adb_port=port, ime=ime)  # type: ignore[arg-type]  # ime: validated by AndroidEnv
    if kind == "desktop":
        from agentlab.envs import DesktopEnv

        return DesktopEnv()
    raise ConfigError(f"--env must be android or desktop, got {kind!r}")


def _episode_dir(run: str | None, episode: str | None, phase: str) -> Path:
    from agentlab.paths import runs_dir

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return runs_dir() / (run or f"{phase}-{time.strftime('%Y%m%d')}") / (episode or stamp)


def _report(res: EpisodeResult) -> None:
    typer.echo(f"{res.status}: {res.steps} action(s), {res.llm_calls} LLM call(s); trajectory: {res.path}")
    if res.error:
        typer.echo(f"last error: {res.error}")
    if res.status == "failed":
        raise typer.Exit(1)


@app.command()
def explore(
    task: str = typer.Option(..., "--task", help="Goal that guides exploration."),
    app_name: str = _APP, env: str = _ENV, serial: str | None = _SERIAL, adb_host: str = _HOST, adb_port: int = _PORT,
    ime: str = _IME, run: str | None = _RUN, episode: str | None = _EPISODE, config: Path | None = _CONFIG,
    llm_config: Path | None = _LLM, docs_dir: Path | None = _DOCS,
    max_rounds: int | None = typer.Option(None, "--max-rounds"),
) -> None:
    """Explore the app on a device, writing per-element documentation."""
    from agentlab.agents.appagent.agent import AppAgent

    cfg = _config(config, app=app_name, docs_dir=docs_dir, max_rounds=max_rounds)
    agent = AppAgent(_llm(llm_config), cfg)
    with _env(env, serial, adb_host, adb_port, ime) as e:
        res = agent.explore(e, task, _episode_dir(run, episode, "explore"))
    typer.echo(f"documented: {', '.join(res.extra.get('documented', [])) or 'nothing'}")
    _report(res)


@app.command()
def survey(
    app_name: str | None = typer.Option(None, "--app", help="Documentation folder data/docs/<app>/ (default: the package)."),
    package: str | None = typer.Option(None, "--package", help="Android package launched before and relaunched during "
                                       "the survey (default: the app on the screen when it starts)."),
    env: str = _ENV, serial: str | None = _SERIAL, adb_host: str = _HOST, adb_port: int = _PORT, ime: str = _IME,
    docs_dir: Path | None = _DOCS,
    depth: int = typer.Option(2, "--depth", min=1, help="Screens down from the launch screen whose elements are acted on."),
    max_actions: int = typer.Option(300, "--max-actions", min=1, help="Stop after this many actions."),
    fake: bool = typer.Option(False, "--fake", help="Survey the built-in fake phone (the scripted clock app of "
                              "agentlab.envs.testing) on an in-process fake adb server."),
    start: Path | None = typer.Option(None, "--start", help="Desktop: a synthesized task (a task file, or a skill "
                                      "demonstration of data/skills/demos) whose applications open on its files under "
                                      "a private Xvfb; the survey starts there and relaunches there. Never an "
                                      "evaluation task."),
) -> None:
    """Document every element of an app from the screens before and after acting on it (no LLM)."""
    import tempfile

    from agentlab.agents.appagent.docs_store import DocStore
    from agentlab.agents.appagent.survey import desktop_survey_env, fake_phone, relauncher, survey_app
    from agentlab.errors import ConfigError

    if fake and start is not None:
        raise ConfigError("--fake surveys the fake phone and --start opens a desktop task: give one of them")
    with contextlib.ExitStack() as stack:
        relaunch: Callable[[], Observation] | None
        if fake:
            if env != "android":
                raise ConfigError("--fake is a phone: use it with --env android")
            e: Env = stack.enter_context(fake_phone())
            relaunch, pkg = relauncher(e, package)
        elif start is not None:
            if env != "desktop":
                raise ConfigError("--start opens a desktop task: use it with --env desktop")
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentlab-survey-")))
            e, relaunch = stack.enter_context(desktop_survey_env(_start_task(start), folder))
            pkg = None
        else:
            e = stack.enter_context(_env(env, serial, adb_host, adb_port, ime))
            relaunch, pkg = relauncher(e, package)
        name = app_name or pkg
        if not name:
            raise ConfigError("give --app: the documentation folder's name (no Android package to name it after)")
        store = DocStore(name, docs_dir)
        report = survey_app(e, store, depth=depth, relaunch=relaunch, max_actions=max_actions)
    for f in report.findings:
        typer.echo(f"L{f.level} {f.key:<10} {f.label}: {f.doc or 'nothing changed'}")
    typer.echo(f"surveyed {report.screens} screen(s) in {report.actions} action(s), {report.relaunches} relaunch(es), "
               f"{report.seconds:.1f} s; documented {len(report.documented)} element(s) in {store.dir}; "
               + (f"useless: {', '.join(report.useless) or 'none'}" if start is None
                  else f"changed nothing on screen: {len(report.useless)}"))


def _start_task(path: Path) -> ExecTask:
    """The task a desktop survey starts from: a task file, or a skill demonstration's task."""
    import json

    from pydantic import ValidationError

    from agentlab.agents.gui_skills import SkillDemo
    from agentlab.errors import ConfigError
    from agentlab.tasks.spec import load_task

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the start task: {exc}", where=str(path)) from None
    if isinstance(raw, dict) and "skill" in raw and "task" in raw:
        try:
            task = SkillDemo.model_validate(raw).task
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(f"not a skill demonstration: {'.'.join(map(str, first['loc']))}: {first['msg']}",
                              where=str(path)) from None
    else:
        task = load_task(path)
    if task.env != "desktop":
        raise ConfigError(f"the start task is a {task.env} task, not a desktop one", where=str(path))
    return task


@app.command()
def deploy(
    task: str = typer.Option(..., "--task"),
    app_name: str = _APP, env: str = _ENV, serial: str | None = _SERIAL, adb_host: str = _HOST, adb_port: int = _PORT,
    ime: str = _IME, run: str | None = _RUN, episode: str | None = _EPISODE, config: Path | None = _CONFIG,
    llm_config: Path | None = _LLM, docs_dir: Path | None = _DOCS,
    max_steps: int | None = typer.Option(None, "--max-steps"),
    no_docs: bool = typer.Option(False, "--no-docs", help="Do not show element documentation (baseline)."),
) -> None:
    """Carry out a task on the device, step by step."""
    from agentlab.agents.appagent.agent import AppAgent

    cfg = _config(config, app=app_name, docs_dir=docs_dir, max_steps=max_steps, use_docs=False if no_docs else None)
    agent = AppAgent(_llm(llm_config), cfg)
    with _env(env, serial, adb_host, adb_port, ime) as e:
        res = agent.deploy(e, task, _episode_dir(run, episode, "deploy"))
    typer.echo(f"summary: {res.summary}")
    _report(res)


@app.command()
def demo(
    task: str = typer.Option(..., "--task", help="What the demonstration shows."),
    env: str = _ENV, serial: str | None = _SERIAL, adb_host: str = _HOST, adb_port: int = _PORT, ime: str = _IME,
    run: str | None = _RUN, episode: str | None = _EPISODE,
) -> None:
    """Record a human demonstration: type one action per line (tap(3), text("hi"), back(), exit())."""
    from agentlab.agents.appagent.explore import record_demo
    from agentlab.envs.trajectory import TrajectoryRecorder

    with _env(env, serial, adb_host, adb_port, ime) as e:
        rec = TrajectoryRecorder(_episode_dir(run, episode, "demo"), task=task, env=type(e).__name__, agent="human")
        typer.echo("Actions:\n" + e.actions.doc() + "\nEnd with exit() / stop() or end of input.")

        def show(obs: Observation) -> None:
            typer.echo("\n" + obs.summary() + "\n> ", nl=False)

        n = record_demo(e, rec, sys.stdin, on_screen=show, on_error=lambda m: typer.echo(f"not done: {m}\n> ", err=True, nl=False))
    typer.echo(f"\nrecorded {n} action(s): {rec.path}")


@app.command()
def learn(
    demo_dir: Path = typer.Argument(..., help="Episode folder of a recorded demonstration."),
    app_name: str = _APP, config: Path | None = _CONFIG, llm_config: Path | None = _LLM, docs_dir: Path | None = _DOCS,
) -> None:
    """Write element documentation from a recorded demonstration (no device needed)."""
    from agentlab.agents.appagent.agent import AppAgent

    cfg = _config(config, app=app_name, docs_dir=docs_dir)  # a bad config is reported before the model loads
    agent = AppAgent(_llm(llm_config), cfg)
    out = agent.learn_from_demo(demo_dir)
    typer.echo(f"documented {len(out['documented'])} element(s) from {out['steps']} step(s); skipped {out['skipped']}")
    for err in out["errors"]:
        typer.echo(f"  {err}", err=True)


@app.command()
def replay(
    episode_dir: Path = typer.Argument(..., help="runs/<run>/<episode> to replay."),
    env: str = _ENV, serial: str | None = _SERIAL, adb_host: str = _HOST, adb_port: int = _PORT, ime: str = _IME,
    record_to: Path | None = typer.Option(None, "--record-to", help="Record the replay as a new episode here."),
) -> None:
    """Re-apply an episode's actions on a device (elements found again by uid)."""
    from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory, replay as do_replay

    traj = load_trajectory(episode_dir)
    with _env(env, serial, adb_host, adb_port, ime) as e:
        rec = TrajectoryRecorder(record_to, task=traj.meta.task, env=type(e).__name__, agent="replay") if record_to else None
        results = do_replay(traj, e, recorder=rec)
    typer.echo(f"replayed {len(results)} action(s) from {episode_dir}")


@app.command()
def episodes(run_dir: Path = typer.Argument(..., help="runs/<run>")) -> None:
    """List a run's episodes: name, status, steps, task."""
    from agentlab.envs.trajectory import list_episodes

    from agentlab.errors import DataError

    found = list_episodes(run_dir)
    if not found:
        raise DataError("no episodes here (folders holding traj.jsonl or meta.json); is this runs/<run>?", where=run_dir)
    for e in found:
        typer.echo(f"{e.episode}\t{e.status}\t{e.steps} steps\t{e.task or ''}")


@app.command()
def docs(app_name: str = _APP, docs_dir: Path | None = _DOCS) -> None:
    """Show the documentation learned for an app."""
    from agentlab.agents.appagent.docs_store import DocStore

    store = DocStore(app_name, docs_dir)
    for uid in store.documented():
        d = store.get(uid)
        if d:
            typer.echo(f"{uid} ({d.label}): " + "; ".join(f"{k}: {v}" for k, v in d.docs.items()))
    useless = sorted(store.useless())
    typer.echo(f"useless: {', '.join(useless) or 'none'}")
