"""Benchmark: what the desktop env and the CLI workspace cost per step, measured side by side.

The study is :mod:`agentlab.experiments.env_overhead`:

1. **DesktopEnv under Xvfb** (GTK demo app, and LibreOffice Calc when installed): ``observe()``
   with the accessibility tree against the screenshot-only grid fallback, and a full ``step(click)``.
2. **Workspace**: running a trivial and a realistic Python program, and a bash command, with
   bubblewrap against without.
3. **Execution tasks**: every task's start state scores 0 and its reference solution, run in
   the sandbox, scores 1 (a check of the tasks and evaluators, not of any agent).

    python benchmarks/desktop_env.py [--quick] [--out benchmarks/results/desktop_env.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import RESULTS, command_line, summary_line, write_result

TITLE = "Desktop env and CLI workspace overhead"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--out", type=Path, default=RESULTS / "desktop_env.md", help="the results file")
    args = ap.parse_args(argv)

    from agentlab.experiments.env_overhead import EnvOverheadConfig, run

    res = run(EnvOverheadConfig(repeats=3 if args.quick else 10))
    body = res.markdown()
    write_result(args.out, TITLE, body, command=command_line(__file__, argv), note=res.note())
    print("\n".join(body))
    print(summary_line(res.summary()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
