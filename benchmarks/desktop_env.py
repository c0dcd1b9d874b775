"""Benchmark: what the desktop env and the CLI workspace cost per step, measured side by side.

The study is :mod:`agentlab.experiments.env_overhead`:

1. **DesktopEnv under Xvfb** (GTK demo app, and LibreOffice Calc when installed): ``observe()``
   with the accessibility tree against the screenshot-only grid fallback, and a full ``step(click)``.
2. **Workspace**: running a trivial and a realistic Python program, and a bash command, with
   bubblewrap against without.
3. **Execution tasks**: every task's start state scores 0 and its reference solution, run in
   the sandbox, scores 1 (a check of the tasks and evaluators, not of any agent).
4. **Desktop applications**: per application (LibreOffice Calc/Writer/Impress, Chromium,
   Thunderbird, VLC, GIMP, terminal, file manager), launch time, accessibility-tree size and walk
   time, GUI replay time per task, and the replay pass rate over ``--app-repeats`` repetitions of
   each task's ``gui_solution`` (``--tasks-per-app`` caps the tasks; ``--no-apps`` skips it).

    python benchmarks/desktop_env.py [--quick] [--tasks-per-app N] [--app-repeats 3] [--no-apps]
                                     [--out benchmarks/results/desktop_env.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import RESULTS, command_line, summary_line, usage_error, write_result

TITLE = "Desktop env and CLI workspace overhead"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--tasks-per-app", type=int, default=None, metavar="N",
                    help="replay at most N tasks per application (default: all with a gui_solution)")
    ap.add_argument("--app-repeats", type=int, default=3, metavar="N", help="replays of each task (default 3)")
    ap.add_argument("--no-apps", action="store_true", help="skip the per-application GUI replays")
    ap.add_argument("--out", type=Path, default=RESULTS / "desktop_env.md", help="the results file")
    args = ap.parse_args(argv)
    if args.app_repeats < 1 or (args.tasks_per_app is not None and args.tasks_per_app < 1):
        return usage_error("--app-repeats and --tasks-per-app must be at least 1")

    from agentlab.experiments.desktop_apps import DesktopAppsConfig
    from agentlab.experiments.env_overhead import EnvOverheadConfig, run

    apps = None if args.no_apps else DesktopAppsConfig(
        repeats=1 if args.quick else args.app_repeats, tasks_per_app=1 if args.quick else args.tasks_per_app)
    res = run(EnvOverheadConfig(repeats=3 if args.quick else 10, apps=apps))
    body = res.markdown()
    write_result(args.out, TITLE, body, command=command_line(__file__, argv), note=res.note())
    print("\n".join(body))
    print(summary_line(res.summary()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
