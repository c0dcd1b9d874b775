"""``agentlab tasks``: list, check and score the project's execution tasks (data/tasks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from agentlab.tasks.spec import ExecTask

app = typer.Typer(help="Execution tasks: list, check (setup + reference solution), score a final state.",
                  no_args_is_help=True)


@app.command("list")
def list_(folder: Path | None = typer.Option(None, "--dir", help="Task folder (default data/tasks)."),
          as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """One line per task: id, env, domain, instruction."""
    from agentlab.tasks.spec import load_tasks

    tasks = load_tasks(folder)
    if as_json:
        typer.echo(json.dumps([t.model_dump(exclude={"reference_solution", "gui_solution"}) for t in tasks], indent=2))
        return
    for t in tasks:
        typer.echo(f"{t.id:24s} {t.env:9s} {t.domain:8s} {t.instruction[:80]}")


@app.command()
def check(folder: Path | None = typer.Option(None, "--dir", help="Task folder (default data/tasks)."),
          sandbox: str = typer.Option("auto", help="auto | bwrap | none"),
          device: str = typer.Option("fake", "--device", help="Phone tasks: 'fake' or an adb serial (see agentlab exec)."),
          gui: bool = typer.Option(False, "--gui", help="Replay each task's gui_solution instead: a desktop task's "
                                   "through the desktop env under a private Xvfb, a phone task's on the device."),
          out: Path | None = typer.Option(None, "--out", help="With --gui: the folder for the episode files "
                                          "(default: a temporary one, kept only when a task fails)."),
          only: list[str] = typer.Option([], "--task", help="Check only these task ids (repeatable).")) -> None:
    """For every task: the start state must score 0, and its reference solution, run in a
    sandboxed workspace (phone tasks: its actions replayed on the device), must score 1.
    With --gui, every desktop task's GUI solution is replayed on its application instead, and every
    phone task's that has one on the device (``--device``).
    Exit 1 if any task fails."""
    from agentlab.envs.workspace import Workspace, WorkspaceConfig
    from agentlab.errors import AgentlabError, DataError
    from agentlab.tasks.env_kinds import ENV_KINDS
    from agentlab.tasks.spec import load_task, task_files

    paths = [p for p in task_files(folder) if not only or p.stem in only]
    if gui:
        raise SystemExit(_check_gui(paths, out, device))
    failed = 0
    for path in paths:
        try:  # a bad task file is reported and the check goes on with the others
            t = load_task(path)
        except DataError as exc:
            failed += 1
            typer.echo(f"FAIL {exc}")
            continue
        if ENV_KINDS[t.env].device_paths:  # replayed on a device, not run in a workspace
            failed += not _check_phone(t, device)
            continue
        with Workspace(config=WorkspaceConfig(sandbox=sandbox)) as ws:
            root = ws.folder
            try:
                t.prepare(root)
            except AgentlabError as exc:  # named by its task file, and the check goes on
                failed += 1
                typer.echo(f"FAIL {exc}")
                continue
            before = t.evaluate(root).score
            if t.reference_solution is None:
                typer.echo(f"{t.id}: start {before:.2f}, no reference solution")
                continue
            sol = t.reference_solution
            run = ws.run_python(sol.code) if sol.language == "python" else ws.run_bash(sol.code)
            after = t.evaluate(root)
            ok = before == 0.0 and after.success and run.ok
            failed += not ok
            typer.echo(f"{'ok  ' if ok else 'FAIL'} {t.id}: start {before:.2f}, solved {after.score:.2f}"
                       + ("" if run.ok else f" ({run.summary(300)})"))
    if failed:
        raise SystemExit(1)  # typer.Exit is swallowed by the root CLI (standalone_mode=False)


def _check_gui(paths: list[Path], out: Path | None, device: str = "fake") -> int:
    """``tasks check --gui``: each desktop task opened under its own private Xvfb (each phone task
    with a GUI solution on ``device``), its start state scored, its GUI solution replayed, its
    applications closed, its end state scored.
    A failing task names its step and keeps its episode folder (screen included); the check
    goes on with the next task. The exit status (1 if any failed)."""
    import shutil
    import tempfile

    from agentlab.agents.gui_skills import check_phone_gui
    from agentlab.envs.gui_replay import check_task_gui, replays
    from agentlab.tasks.env_kinds import ENV_KINDS
    from agentlab.errors import DataError
    from agentlab.tasks.spec import load_task

    root = out or Path(tempfile.mkdtemp(prefix="agentlab-gui-check-"))
    failed = ok = 0
    for path in paths:
        try:
            task = load_task(path)
        except DataError as exc:
            failed += 1
            typer.echo(f"FAIL {exc}")
            continue
        phone = ENV_KINDS[task.env].device_paths and bool(task.gui_solution)  # replayed on a device
        if not (phone or replays(task)):
            continue
        folder = root / task.id
        if folder.exists():
            shutil.rmtree(folder)
        if phone:
            passed, line = check_phone_gui(task, folder, device=device)
        else:
            result = check_task_gui(task, folder)
            passed, line = result.ok, result.line()
        typer.echo(line)
        if passed:
            ok += 1
            if out is None:
                shutil.rmtree(folder, ignore_errors=True)
        else:
            failed += 1
    typer.echo(f"gui check: {ok} ok, {failed} failed" + (f" (episode files in {root})" if failed else ""))
    if out is None and not failed:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


def _check_phone(task: ExecTask, device: str) -> bool:
    """A phone task on a fresh device: the start state pulled back scores 0, and after its
    reference actions were replayed through the UI the end state scores 1."""
    import tempfile

    from agentlab.envs.phone_task import open_phone_task, replay_actions
    from agentlab.envs.task_env import TaskEnvOptions
    from agentlab.errors import AgentlabError

    with tempfile.TemporaryDirectory(prefix="agentlab-phone-check-") as tmp:
        try:
            opened = open_phone_task(task, Path(tmp), TaskEnvOptions(device=device))
        except AgentlabError as exc:
            typer.echo(f"FAIL {task.id}: {exc}")
            return False
        try:
            opened.collect()
            before = task.evaluate(opened.root, env=opened.eval_env).score
            sol = task.reference_solution
            if sol is None:
                typer.echo(f"{task.id}: start {before:.2f}, no reference solution")
                return True
            replay_actions(opened.android, sol.code)
            opened.collect()
            after = task.evaluate(opened.root, env=opened.eval_env)
        except AgentlabError as exc:
            typer.echo(f"FAIL {task.id}: {exc}")
            return False
        finally:
            opened.close()
    ok = before == 0.0 and after.success
    typer.echo(f"{'ok  ' if ok else 'FAIL'} {task.id}: start {before:.2f}, solved {after.score:.2f} (actions replayed on the device)")
    return ok


@app.command()
def setup(task_id: str = typer.Argument(..., help="Task id (file name without .json)."),
          target: Path = typer.Argument(..., help="Folder to write the start state into."),
          folder: Path | None = typer.Option(None, "--dir", help="Task folder (default data/tasks).")) -> None:
    """Write a task's start files into TARGET (for a person or an agent to work on)."""
    from agentlab.tasks.spec import load_task, tasks_dir

    task = load_task((folder or tasks_dir()) / f"{task_id}.json")
    task.prepare(target)
    typer.echo(f"{task.id}: start state written to {target}\n{task.instruction}")


@app.command("eval")
def eval_(task_id: str = typer.Argument(..., help="Task id (file name without .json)."),
          state: Path = typer.Argument(..., help="Folder holding the final state."),
          folder: Path | None = typer.Option(None, "--dir", help="Task folder (default data/tasks).")) -> None:
    """Score the final state in STATE against a task's evaluator (exit 1 unless it succeeds)."""
    from agentlab.errors import DataError
    from agentlab.tasks.spec import load_task, tasks_dir

    if not state.is_dir():
        raise DataError("state folder not found", where=state)
    result = load_task((folder or tasks_dir()) / f"{task_id}.json").evaluate(state)
    typer.echo(result.explain())
    if not result.success:
        raise SystemExit(1)  # typer.Exit is swallowed by the root CLI (standalone_mode=False)


@app.command()
def synthesize(
    out: Path | None = typer.Option(None, "--out", help="Folder for the task files (default data/tasks)."),
    report_dir: Path | None = typer.Option(None, "--report-dir", help="REPORT.md + manifest.json (default <out>/multi)."),
    pairs: int = typer.Option(30, help="Two-agent tasks wanted."),
    triples: int = typer.Option(10, help="Three-agent tasks wanted."),
    seed: int = typer.Option(0, help="Order of the candidate combinations."),
    max_uses: int = typer.Option(3, help="Accepted tasks one single-agent task may be part of."),
    threshold: float | None = typer.Option(None, help="BERTScore threshold per part (default: calibrated in this run)."),
    style: str = typer.Option("completion", help="Generator prompt style: completion | chat."),
    llm_config: Path | None = typer.Option(None, "--llm-config", help="YAML LLM config (default: AGENTLAB_LLM_* or embedded SmolLM2)."),
    no_generator: bool = typer.Option(False, "--no-generator", help="Word every task with the template only."),
) -> None:
    """Combine single-agent workspace tasks of different agents into multi-agent tasks with a
    gold plan (reverse synthesis, as OSWorld-Multi was built); print and write the report."""
    import shlex
    import sys

    from agentlab.run.episode import gt_agent
    from agentlab.tasks.spec import load_tasks, tasks_dir
    from agentlab.synthesis.run import Synthesizer, SynthesisConfig, Wording, eligible_parts, write
    from agentlab.llm import LLMConfig, load_backend
    from agentlab.paths import data_dir
    from agentlab.pool import AgentPool
    from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds
    from agentlab.selfinstruct.leakage import LeakageFilter
    from agentlab.selfinstruct.scorer import load_scorer

    config = SynthesisConfig(pairs=pairs, triples=triples, seed=seed, max_uses=max_uses, threshold=threshold,
                             style=style)
    folder = out or tasks_dir()
    pool = AgentPool.from_dir(None)
    parts = eligible_parts(load_tasks(folder), lambda t: gt_agent(t, pool))
    backend = None if no_generator else load_backend(LLMConfig.from_yaml(llm_config) if llm_config else LLMConfig.from_env())
    scorer = load_scorer(SelfInstructConfig())
    tau = Thresholds.load(data_dir() / "demos" / "thresholds.json").leakage_tau
    report = Synthesizer(parts, scorer, Wording(backend, config), config, LeakageFilter.from_benchmarks(scorer, tau)).run()
    given = sys.argv[sys.argv.index("synthesize") + 1:] if "synthesize" in sys.argv else []
    command = " ".join(["agentlab tasks synthesize", shlex.join(given)]).strip()
    written = write(report, folder, report_dir or folder / "multi", command)
    typer.echo(report.markdown(command))
    typer.echo(f"{len(written)} task file(s) written to {folder}")
