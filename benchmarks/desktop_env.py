"""Benchmark: what the desktop env and the CLI workspace cost per step, measured side by side.

1. **DesktopEnv under Xvfb** (GTK demo app, and LibreOffice Calc when installed): time of
   ``observe()`` with the accessibility tree against the screenshot-only grid fallback, and of
   a full ``step(click)`` (action + settle + new observation), in one run.
2. **Workspace**: time of running a trivial Python program with bubblewrap against without,
   and of a realistic one (openpyxl writes a workbook).
3. **Execution tasks**: every task's start state scores 0 and its reference solution, run in
   the sandbox, scores 1 (a check of the tasks and evaluators, not of any agent).

    python benchmarks/desktop_env.py [--quick] [--out benchmarks/results/desktop_env.md]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentlab.envs.actions.desktop import Click
from agentlab.envs.desktop import DesktopEnv
from agentlab.envs.workspace import Workspace, WorkspaceConfig, bwrap_available
from agentlab.envs.xdisplay import virtual_display, xvfb_available
from agentlab.tasks.spec import load_tasks
from agentlab.fileio import atomic_write_text

REPO = Path(__file__).resolve().parent.parent


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def fmt(xs: list[float]) -> str:
    return f"{1000 * statistics.median(xs):.0f} ms (median of {len(xs)})"


def desktop_part(n: int, lines: list[str]) -> None:
    reason = xvfb_available()
    if reason:
        lines.append(f"DesktopEnv: skipped ({reason})")
        return
    with virtual_display(1280, 800) as disp, tempfile.TemporaryDirectory() as tmp:
        disp.launch_demo_app(Path(tmp) / "state.json")
        a11y = DesktopEnv(display=disp, app="demo_gtk", settle_s=0.2)
        grid = DesktopEnv(display=disp, a11y="off", settle_s=0.2)
        a11y.reset()
        grid.reset()
        t_a = timed(a11y.observe, n)
        t_g = timed(grid.observe, n)
        obs = a11y.observe()
        add = next(e for e in obs.elements if e.text == "Add one")
        t_s = timed(lambda: a11y.step(Click(element=add.id)), n)
        lines += [
            "| DesktopEnv, GTK demo (5 elements) | time |",
            "|---|---|",
            f"| observe(), accessibility tree | {fmt(t_a)} |",
            f"| observe(), grid only (screenshot) | {fmt(t_g)} |",
            f"| ratio tree / grid | {statistics.median(t_a) / statistics.median(t_g):.1f}x |",
            f"| step(click) incl. 0.2 s settle + observe | {fmt(t_s)} |",
            "",
        ]
        if not shutil.which("soffice"):
            lines.append("LibreOffice: not installed, skipped")
            return
        prof = Path(tmp) / "profile"
        doc = Path(tmp) / "t.xlsx"
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
        t_c = timed(calc.observe, max(2, n // 2))
        lines += [
            f"| DesktopEnv, LibreOffice Calc ({obs.info['a11y_nodes']} nodes walked, {len(obs.elements)} elements) | time |",
            "|---|---|",
            f"| window mapped after launch | {1000 * t_open:.0f} ms |",
            f"| observe(), accessibility tree | {fmt(t_c)} |",
            f"| ratio Calc tree / grid | {statistics.median(t_c) / statistics.median(t_g):.1f}x |",
            "",
        ]
        disp.stop_app(proc)


def workspace_part(n: int, lines: list[str]) -> None:
    modes = ["none"] + (["bwrap"] if bwrap_available() else [])
    res: dict[str, dict[str, list[float]]] = {}
    for mode in modes:
        with Workspace(config=WorkspaceConfig(sandbox=mode)) as ws:  # type: ignore[arg-type]
            res[mode] = {
                "print": timed(lambda: ws.run_python("print(1)"), n),
                "xlsx": timed(lambda: ws.run_python(
                    "import openpyxl\nwb = openpyxl.Workbook()\nwb.active['A1'] = 1\nwb.save('o.xlsx')"), n),
                "bash": timed(lambda: ws.run_bash("echo hi > x.txt"), n),
            }
    lines += ["| Workspace program | " + " | ".join(modes) + (" | bwrap / none |" if len(modes) == 2 else " |"),
              "|---|" + "---|" * (len(modes) + (len(modes) == 2))]
    for key, label in [("print", "python `print(1)`"), ("xlsx", "python openpyxl workbook"), ("bash", "bash `echo`")]:
        cells = [fmt(res[m][key]) for m in modes]
        if len(modes) == 2:
            cells.append(f"{statistics.median(res['bwrap'][key]) / statistics.median(res['none'][key]):.2f}x")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if len(modes) == 1:
        lines.append("(bubblewrap unavailable: sandboxed timing not measured)")
    lines.append("")


def tasks_part(lines: list[str]) -> None:
    ok = 0
    tasks = [t for t in load_tasks() if t.env != "phone"]  # phone tasks replay actions on a device: `agentlab tasks check`
    for t in tasks:
        with Workspace() as ws:
            t.prepare(ws.root)
            before = t.evaluate(ws.root).score
            sol = t.reference_solution
            assert sol is not None
            (ws.run_python if sol.language == "python" else ws.run_bash)(sol.code)
            after = t.evaluate(ws.root).score
            ok += before == 0.0 and after == 1.0
    lines.append(f"Execution tasks: {ok}/{len(tasks)} score 0 on their start state and 1 after their reference "
                 "solution ran in the sandbox (a check of tasks and evaluators, not an agent result).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "desktop_env.md")
    args = ap.parse_args()
    n = 3 if args.quick else 10
    cmd = "python benchmarks/desktop_env.py" + (" --quick" if args.quick else "")
    lines = ["## Desktop env and CLI workspace overhead", "",
             f"Command: `{cmd}` (Xvfb 1280x800, no window manager; bubblewrap {'on' if bwrap_available() else 'off'}).", ""]
    desktop_part(n, lines)
    workspace_part(n, lines)
    tasks_part(lines)
    text = "\n".join(lines) + "\n"
    print(text)
    atomic_write_text(args.out, text)


if __name__ == "__main__":
    main()
