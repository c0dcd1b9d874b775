"""What the desktop env and the CLI workspace cost per step, measured side by side, and a check of the execution tasks.

1. **DesktopEnv under Xvfb** (GTK demo app, and LibreOffice Calc when installed): time of
   ``observe()`` with the accessibility tree against the screenshot-only grid fallback, and of a
   full ``step(click)`` (action + settle + new observation), in one run. Skipped, with the
   reason, where Xvfb cannot run.
2. **Workspace**: time of running a trivial Python program with bubblewrap against without, of a
   realistic one (openpyxl writes a workbook), and of a bash command.
3. **Execution tasks**: every non-phone task's start state scores 0 and its reference solution,
   run in the sandbox, scores 1 (a check of the tasks and evaluators, not of any agent).
4. **Desktop applications** (opt-in, minutes): per application, launch time, accessibility-tree
   size and walk time, GUI replay time per task and the replay pass rate over repetitions
   (:mod:`agentlab.experiments.desktop_apps`).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentlab.experiments.desktop_apps import DesktopApps, DesktopAppsConfig
from agentlab.experiments.markdown import table


class EnvOverheadConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: repetitions of each timing (the median is reported)
    repeats: int = Field(10, ge=1)
    desktop: bool = True
    workspace: bool = True
    tasks: bool = True
    #: the per-application GUI replays (None: not run; they take minutes)
    apps: DesktopAppsConfig | None = None


def timed(fn: Callable[[], object], n: int) -> list[float]:
    """Wall seconds of ``n`` calls of ``fn``."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def fmt(xs: list[float]) -> str:
    return f"{1000 * statistics.median(xs):.0f} ms (median of {len(xs)})"


def ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(a) / statistics.median(b)


@dataclass
class CalcTimes:
    nodes: int
    elements: int
    open_s: float
    observe: list[float]


@dataclass
class DesktopTimes:
    """DesktopEnv on the GTK demo app (and Calc), or why it was skipped."""

    skipped: str | None = None
    a11y: list[float] = field(default_factory=list)
    grid: list[float] = field(default_factory=list)
    step: list[float] = field(default_factory=list)
    calc: CalcTimes | None = None
    calc_skipped: str | None = None

    def markdown(self) -> list[str]:
        if self.skipped:
            return [f"DesktopEnv: skipped ({self.skipped})"]
        lines = [*table(["DesktopEnv, GTK demo (5 elements)", "time"], [
            ["observe(), accessibility tree", fmt(self.a11y)],
            ["observe(), grid only (screenshot)", fmt(self.grid)],
            ["ratio tree / grid", f"{ratio(self.a11y, self.grid):.1f}x"],
            ["step(click) incl. 0.2 s settle + observe", fmt(self.step)],
        ]), ""]
        if self.calc is None:
            return [*lines, f"LibreOffice: {self.calc_skipped}"]
        c = self.calc
        return [*lines, *table([f"DesktopEnv, LibreOffice Calc ({c.nodes} nodes walked, {c.elements} elements)", "time"], [
            ["window mapped after launch", f"{1000 * c.open_s:.0f} ms"],
            ["observe(), accessibility tree", fmt(c.observe)],
            ["ratio Calc tree / grid", f"{ratio(c.observe, self.grid):.1f}x"],
        ]), ""]


#: the workspace programs timed, by key: their label and how to run them
PROGRAMS = {
    "print": "python `print(1)`",
    "xlsx": "python openpyxl workbook",
    "bash": "bash `echo`",
}


@dataclass
class WorkspaceTimes:
    #: sandbox mode -> program key -> seconds
    times: dict[str, dict[str, list[float]]]

    def markdown(self) -> list[str]:
        modes = list(self.times)
        both = len(modes) == 2
        rows = []
        for key, label in PROGRAMS.items():
            cells = [fmt(self.times[m][key]) for m in modes]
            if both:
                cells.append(f"{ratio(self.times['bwrap'][key], self.times['none'][key]):.2f}x")
            rows.append([label, *cells])
        lines = table(["Workspace program", *modes, *(["bwrap / none"] if both else [])], rows)
        if not both:
            lines.append("(bubblewrap unavailable: sandboxed timing not measured)")
        return [*lines, ""]


@dataclass
class EnvOverhead:
    bwrap: bool
    desktop: DesktopTimes | None = None
    workspace: WorkspaceTimes | None = None
    #: (tasks scoring 0 before and 1 after their reference solution, tasks checked)
    tasks_ok: tuple[int, int] | None = None
    apps: DesktopApps | None = None

    def note(self) -> str:
        return f" (Xvfb 1280x800, no window manager; bubblewrap {'on' if self.bwrap else 'off'})."

    def markdown(self) -> list[str]:
        lines = [*(self.desktop.markdown() if self.desktop else []), *(self.workspace.markdown() if self.workspace else [])]
        if self.tasks_ok is not None:
            ok, n = self.tasks_ok
            lines.append(f"Execution tasks: {ok}/{n} score 0 on their start state and 1 after their reference "
                         "solution ran in the sandbox (a check of tasks and evaluators, not an agent result).")
        if self.apps is not None:
            lines += ["", *self.apps.markdown()]
        return lines

    def summary(self) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {}
        if self.desktop is not None and not self.desktop.skipped:
            out["tree_over_grid"] = ratio(self.desktop.a11y, self.desktop.grid)
        if self.workspace is not None:
            for mode, times in self.workspace.times.items():
                out[f"python_ms_{mode}"] = 1000 * statistics.median(times["print"])
        if self.tasks_ok is not None:
            out["tasks_ok"], out["tasks"] = self.tasks_ok
        if self.apps is not None:
            out.update(self.apps.summary())
        return out


def desktop_times(n: int) -> DesktopTimes:
    from agentlab.envs.actions.desktop import Click
    from agentlab.envs.desktop import DesktopEnv
    from agentlab.envs.xdisplay import virtual_display, xvfb_available

    reason = xvfb_available()
    if reason:
        return DesktopTimes(skipped=reason)
    out = DesktopTimes()
    with virtual_display(1280, 800) as disp, tempfile.TemporaryDirectory() as tmp:
        disp.launch_demo_app(Path(tmp) / "state.json")
        a11y = DesktopEnv(display=disp, app="demo_gtk", settle_s=0.2)
        grid = DesktopEnv(display=disp, a11y="off", settle_s=0.2)
        a11y.reset()
        grid.reset()
        out.a11y, out.grid = timed(a11y.observe, n), timed(grid.observe, n)
        add = next(e for e in a11y.observe().elements if e.text == "Add one")
        out.step = timed(lambda: a11y.step(Click(element=add.id)), n)
        if not shutil.which("soffice"):
            out.calc_skipped = "not installed, skipped"
            return out
        prof, doc = Path(tmp) / "profile", Path(tmp) / "t.xlsx"
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active.append(["a", 1])
        wb.save(doc)
        proc = disp.launch(["soffice", "--calc", "--norestore", "--nologo", "--nodefault", "--nolockcheck",
                            f"-env:UserInstallation={prof.as_uri()}", str(doc)], env={"SAL_USE_VCLPLUGIN": "gtk3"})
        t0 = time.perf_counter()
        disp.wait_for_window("t.xlsx", timeout_s=90)
        t_open = time.perf_counter() - t0
        calc = DesktopEnv(display=disp, app="soffice")
        calc.reset()
        obs = calc.observe_stable()
        out.calc = CalcTimes(obs.info["a11y_nodes"], len(obs.elements), t_open, timed(calc.observe, max(2, n // 2)))
        disp.stop_app(proc)
    return out


def workspace_times(n: int) -> WorkspaceTimes:
    from agentlab.envs.workspace import Workspace, WorkspaceConfig, bwrap_available

    modes = ["none"] + (["bwrap"] if bwrap_available() else [])
    res: dict[str, dict[str, list[float]]] = {}
    for mode in modes:
        with Workspace(config=WorkspaceConfig.model_validate({"sandbox": mode})) as ws:
            res[mode] = {
                "print": timed(lambda: ws.run_python("print(1)"), n),
                "xlsx": timed(lambda: ws.run_python(
                    "import openpyxl\nwb = openpyxl.Workbook()\nwb.active['A1'] = 1\nwb.save('o.xlsx')"), n),
                "bash": timed(lambda: ws.run_bash("echo hi > x.txt"), n),
            }
    return WorkspaceTimes(res)


def check_tasks() -> tuple[int, int]:
    """How many non-phone tasks score 0 on their start state and 1 after their reference solution, of how many."""
    from agentlab.envs.workspace import Workspace
    from agentlab.tasks.spec import load_tasks

    ok = 0
    tasks = [t for t in load_tasks() if t.env != "phone"]  # phone tasks replay actions on a device: `agentlab tasks check`
    for t in tasks:
        with Workspace() as ws:
            t.prepare(ws.folder)
            before = t.evaluate(ws.folder).score
            sol = t.reference_solution
            assert sol is not None
            (ws.run_python if sol.language == "python" else ws.run_bash)(sol.code)
            ok += before == 0.0 and t.evaluate(ws.folder).score == 1.0
    return ok, len(tasks)


def run(config: EnvOverheadConfig) -> EnvOverhead:
    from agentlab.envs.workspace import bwrap_available
    from agentlab.experiments import desktop_apps

    return EnvOverhead(
        bwrap=bwrap_available(),
        desktop=desktop_times(config.repeats) if config.desktop else None,
        workspace=workspace_times(config.repeats) if config.workspace else None,
        tasks_ok=check_tasks() if config.tasks else None,
        apps=desktop_apps.run(config.apps) if config.apps is not None else None,
    )
