"""Per desktop application: what opening it costs, what its accessibility tree weighs, and how
reliably its tasks' GUI solutions replay.

Why: a desktop task is only a fair test of an agent when the application opens in reasonable
time, exposes a tree an agent can read, and the task can be solved through the GUI at all, every
time. Each desktop task with a ``gui_solution`` is checked like ``agentlab tasks check --gui``
(:func:`~agentlab.envs.gui_replay.check_task_gui`: open under a private Xvfb, score the start,
replay, close the application, score the end) ``repeats`` times; the records are grouped by
the task's application (tasks that open two side by side form a group of their own). Replays
that fail are counted, never retried: the pass rate is the flakiness measure.
"""

from __future__ import annotations

import logging
import statistics
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agentlab.experiments.markdown import table

if TYPE_CHECKING:
    from agentlab.envs.actions.base import Action
    from agentlab.envs.base import Observation
    from agentlab.envs.gui_replay import GuiCheck
    from agentlab.tasks.gui_solution import GuiStep
    from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)


class DesktopAppsConfig(BaseModel):
    """Which tasks to replay and how often."""

    model_config = ConfigDict(extra="forbid")

    repeats: int = Field(3, ge=1)  #: replays of each task
    #: at most this many tasks per application (the first ones by id; None: all)
    tasks_per_app: int | None = Field(None, ge=1)
    task_dir: Path | None = None  #: default: data/tasks


@dataclass
class Replay:
    """One replay of one task (what :class:`~agentlab.envs.gui_replay.GuiCheck` measured)."""

    task_id: str
    ok: bool
    launch_s: float
    a11y_nodes: int
    a11y_s: float
    replay_s: float
    collect_s: float
    steps: int
    error: str | None = None


@dataclass
class AppReplays:
    """Every replay of one application's tasks."""

    app: str
    tasks: list[str]
    replays: list[Replay] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.ok for r in self.replays)

    def median(self, attr: str) -> float:
        return statistics.median(float(getattr(r, attr)) for r in self.replays)

    def failures(self) -> list[str]:
        return [f"{r.task_id}: {(r.error or 'not solved')[:120]}" for r in self.replays if not r.ok]


@dataclass
class DesktopApps:
    """The per-application table, or why nothing was replayed."""

    config: DesktopAppsConfig
    apps: list[AppReplays] = field(default_factory=list)
    skipped: str | None = None

    def markdown(self) -> list[str]:
        if self.skipped:
            return [f"Desktop applications: skipped ({self.skipped})", ""]
        rows = [[a.app, str(len(a.tasks)), f"{a.median('launch_s'):.1f} s", f"{a.median('a11y_nodes'):.0f}",
                 f"{1000 * a.median('a11y_s'):.0f} ms", f"{a.median('replay_s'):.1f} s ({a.median('steps'):.0f} steps)",
                 f"{a.median('collect_s'):.1f} s", f"{a.passed}/{len(a.replays)}"] for a in self.apps]
        lines = table(["application", "tasks", "launch (to a stable first screen)", "a11y nodes (first screen)",
                       "tree walk", "GUI replay per task", "close + state on disk",
                       f"replays passed (x{self.config.repeats})"], rows)
        lines.append("")
        lines.append("Medians over every replay of the application's tasks. Tasks: "
                     + "; ".join(f"{a.app}: {', '.join(a.tasks)}" for a in self.apps) + ".")
        fails = [f for a in self.apps for f in a.failures()]
        if fails:
            lines += ["", "Failed replays:", *(f"- {f}" for f in fails)]
        return [*lines, ""]

    def summary(self) -> dict[str, float | int | str | None]:
        return {f"pass_{a.app}": a.passed / len(a.replays) for a in self.apps if a.replays}


#: the group of the tasks that open two applications side by side (``multi_apps``)
SEVERAL = "two applications"


def gui_tasks(config: DesktopAppsConfig) -> dict[str, list[ExecTask]]:
    """The desktop tasks with a GUI solution, by their application (:data:`SEVERAL` for those
    that open two; sorted by id, capped)."""
    from agentlab.tasks.spec import load_tasks

    by_app: dict[str, list[ExecTask]] = defaultdict(list)
    for task in sorted(load_tasks(config.task_dir), key=lambda t: t.id):
        if task.env == "desktop" and task.gui_solution and task.apps:
            app = task.apps[0] if len(task.apps) == 1 else SEVERAL
            if config.tasks_per_app is None or len(by_app[app]) < config.tasks_per_app:
                by_app[app].append(task)
    return dict(sorted(by_app.items()))


def run(config: DesktopAppsConfig) -> DesktopApps:
    """Replay every chosen task ``repeats`` times, in rounds (every task once, then again), each
    in a fresh episode folder and display."""
    from agentlab.envs.gui_replay import check_task_gui
    from agentlab.envs.xdisplay import xvfb_available

    reason = xvfb_available()
    if reason:
        return DesktopApps(config, skipped=reason)
    by_app = gui_tasks(config)
    out = {app: AppReplays(app, [t.id for t in tasks]) for app, tasks in by_app.items()}
    with tempfile.TemporaryDirectory(prefix="agentlab-desktop-apps-") as tmp:
        for rnd in range(config.repeats):
            for app, tasks in by_app.items():
                for task in tasks:
                    check = check_task_gui(task, Path(tmp) / f"{task.id}-{rnd}")
                    log.info("%s (round %d): %s", app, rnd + 1, check.line())
                    out[app].replays.append(Replay(task.id, check.ok, check.launch_s, check.a11y_nodes, check.a11y_s,
                                                   check.replay_s, check.collect_s, check.steps, check.error))
    return DesktopApps(config, list(out.values()))


def record_gui_check(task: ExecTask, folder: Path) -> GuiCheck:
    """:func:`~agentlab.envs.gui_replay.check_task_gui` with every replayed action recorded as an
    episode in ``folder/replay`` (screen, accessibility elements, the action), so a GUI solution
    can be watched step by step in the trajectory inspector and viewer (notebook 05)."""
    from agentlab.envs.gui_replay import check_task_gui
    from agentlab.envs.trajectory import TrajectoryRecorder

    rec = TrajectoryRecorder(folder / "replay", task=task.instruction, env="desktop", agent="gui_solution",
                             model_id="none", extra={"task_id": task.id})

    def hook(index: int, step: GuiStep, obs: Observation, action: Action | None) -> None:
        if action is not None:
            rec.record(obs, action, action_text=action.to_call(), info={"gui_step": index})

    check = check_task_gui(task, folder, on_step=hook)
    rec.finish("done" if check.ok else "failed", error=check.error, start=check.start, solved=check.solved)
    return check
