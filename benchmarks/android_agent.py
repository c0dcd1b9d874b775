"""Benchmark: AndroidEnv overhead and the AppAgent agent on the fake clock app.

No phone can run here, so both parts use the protocol-level fake adb server from
``agentlab.envs.testing`` with the real adbutils client (the study:
:mod:`agentlab.experiments.android_agent`):

1. **Env overhead**: ``AndroidEnv.observe()`` against adbutils' own ``screenshot()`` +
   ``dump_hierarchy()``, side by side in one run, and a full ``step(Tap)``.
2. **Agent**: deployment on a few fake-app tasks under AppAgent's three documentation
   conditions -- none, docs from the agent's own exploration, hand-written docs -- with the
   configured LLM (default: embedded SmolLM2-135M), and the share of unusable replies.

    python benchmarks/android_agent.py [--quick] [--out benchmarks/results/android_agent.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _common import RESULTS, command_line, summary_line, write_result

os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")
TITLE = "AndroidEnv and the AppAgent agent (fake adb server)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 tasks, 3 steps, 2 exploration rounds")
    ap.add_argument("--out", type=Path, default=RESULTS / "android_agent.md", help="the results file")
    args = ap.parse_args(argv)

    from agentlab.experiments.android_agent import AndroidAgentConfig, run
    from agentlab.llm import LLMConfig, load_backend

    q = args.quick
    config = AndroidAgentConfig(tasks=2 if q else 4, max_steps=3 if q else 6, max_rounds=2 if q else 4, repeats=6 if q else 20)
    llm = load_backend(LLMConfig.from_env())
    with tempfile.TemporaryDirectory() as tmp:
        res = run(llm, config, Path(tmp))
    body = res.markdown()
    write_result(args.out, TITLE, body, command=command_line(__file__, argv), note=res.note())
    print("\n".join(body))
    print(f"wrote {args.out}")
    print(summary_line(res.summary()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
