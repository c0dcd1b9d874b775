"""Benchmark: AndroidEnv overhead and the AppAgent agent on the fake clock app.

No phone can run here, so both parts use the protocol-level fake adb server from
``agentlab.envs.testing`` with the real adbutils client:

1. **Env overhead**: time of ``AndroidEnv.observe()`` (screencap + robust dump + parsing +
   element selection) against adbutils' own ``screenshot()`` + ``dump_hierarchy()``, side
   by side in one run, and of a full ``step(Tap)``.
2. **Agent**: deployment on a few fake-app tasks whose success is read from the app's
   state, under AppAgent's three documentation conditions — none, docs from the agent's
   own exploration, hand-written docs (the paper's "manually crafted" oracle) — with the
   configured LLM (default: embedded SmolLM2-135M). Also reported: the share of LLM
   replies that could not be used (parse failures or impossible actions).

    python benchmarks/android_agent.py [--quick] [--out benchmarks/results/android_agent.md]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent

from agentlab.agents import AppAgent, AppAgentConfig, DocStore  # noqa: E402
from agentlab.envs import AndroidEnv, Element  # noqa: E402
from agentlab.envs.actions.phone import Back, Tap  # noqa: E402
from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice  # noqa: E402
from agentlab.envs.testing.fake_app import ClockApp  # noqa: E402
from agentlab.fileio import atomic_write_text  # noqa: E402
from agentlab.trajectory import load_trajectory  # noqa: E402

TASKS: list[tuple[str, Callable[[ClockApp], bool]]] = [
    ("Turn off vibration.", lambda app: not app.vibrate),
    ("Open the list of alarms.", lambda app: app.screen == "alarms"),
    ("Turn on the dark theme.", lambda app: app.dark),
    ("Disable the 7:00 alarm.", lambda app: not app.alarms[0].enabled),
]

#: Hand-written documentation of the fake app's elements (uid -> tap doc).
MANUAL_DOCS = {
    "com.example.clock.id_alarms_tab": "Opens the list of alarms.",
    "com.example.clock.id_settings_btn": "Opens the settings page (vibration, dark theme).",
    "com.example.clock.id_about_btn": "Opens an about page; not useful for tasks.",
    "com.example.clock.id_vibrate_switch": "Turns vibration on or off.",
    "com.example.clock.id_dark_switch": "Turns the dark theme on or off.",
    "com.example.clock.id_alarm_switch": "Enables or disables the alarm in the same row.",
    "com.example.clock.id_add_alarm": "Opens the form to create a new alarm.",
}


def _median_ms(f: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def env_overhead(n: int) -> list[str]:
    import adbutils

    with FakeAdbServer(FakeDevice()) as server:
        dev = adbutils.AdbClient(host="127.0.0.1", port=server.port).device()
        env = AndroidEnv(adb_port=server.port, settle=0)
        env.reset()
        raw = _median_ms(lambda: (dev.screenshot(error_ok=False), dev.dump_hierarchy()), n)
        obs = _median_ms(env.observe, n)

        def tap_and_back() -> None:
            o = env.observe()
            env.step(Tap(next(e.id for e in o.elements if e.text == "Settings")))
            env.step(Back())

        step = _median_ms(tap_and_back, max(2, n // 2)) / 2
    return [
        "| measurement (fake adb server, loopback) | median ms |",
        "|---|---|",
        f"| adbutils `screenshot()` + `dump_hierarchy()` | {raw:.1f} |",
        f"| `AndroidEnv.observe()` (screencap, robust dump, parse, select elements) | {obs:.1f} |",
        f"| `AndroidEnv.step(Tap/Back)` incl. the new observation | {step:.1f} |",
        f"| observe / raw ratio | {obs / raw:.2f} |",
    ]


def _manual_docs(root: Path) -> None:
    store = DocStore("clock", root)
    for uid, text in MANUAL_DOCS.items():
        el = Element(0, (0, 0, 1, 1), "android.widget.Button", "", None, True, uid=uid)
        store.update(el, "tap", text, source="manual")


def agent_eval(llm, tasks, max_steps: int, max_rounds: int, work: Path) -> tuple[list[str], dict[str, float]]:  # type: ignore[no-untyped-def]
    base = dict(app="clock", max_retries=1, max_new_tokens=64)
    conditions: dict[str, Path | None] = {"none": None, "auto-exploration": work / "docs_auto", "manual": work / "docs_manual"}
    _manual_docs(work / "docs_manual")
    # Exploration with the same model writes the auto docs (one episode per task goal).
    explore_calls = 0
    for task, _ in tasks:
        with FakeAdbServer(FakeDevice()) as server:
            agent = AppAgent(llm, AppAgentConfig(docs_dir=work / "docs_auto", max_rounds=max_rounds, **base))
            agent.explore(AndroidEnv(adb_port=server.port, settle=0), task, work / "runs" / "explore" / f"t{len(task)}")
            explore_calls += agent.llm_calls
    auto_docs = len(DocStore("clock", work / "docs_auto").documented())
    rows = ["| docs | success | avg actions | unusable replies / LLM calls | statuses |", "|---|---|---|---|---|"]
    t0 = time.perf_counter()
    calls_total = 0
    for cond, docs_dir in conditions.items():
        ok, steps, bad, calls, statuses = 0, 0, 0, 0, {}
        for i, (task, check) in enumerate(tasks):
            with FakeAdbServer(FakeDevice()) as server:
                cfg = AppAgentConfig(docs_dir=docs_dir or work / "docs_none", use_docs=docs_dir is not None,
                                     max_steps=max_steps, **base)
                agent = AppAgent(llm, cfg)
                ep = work / "runs" / cond / f"task{i}"
                res = agent.deploy(AndroidEnv(adb_port=server.port, settle=0), task, ep)
                ok += check(server.device.app)
                steps += res.steps
                calls += agent.llm_calls
                bad += sum(1 for s in load_trajectory(ep).steps if s.error and not s.done)
                statuses[res.status] = statuses.get(res.status, 0) + 1
        calls_total += calls
        st = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        rows.append(f"| {cond} | {ok}/{len(tasks)} | {steps / len(tasks):.1f} | {bad}/{calls} ({bad / max(calls, 1):.0%}) | {st} |")
    per_call = (time.perf_counter() - t0) / max(calls_total, 1)
    return rows, {"explore_calls": explore_calls, "auto_docs": auto_docs, "s_per_call": per_call}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 tasks, 3 steps, 2 exploration rounds")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "android_agent.md")
    args = ap.parse_args()
    from agentlab.llm import LLMConfig, load_backend

    tasks = TASKS[:2] if args.quick else TASKS
    max_steps, max_rounds = (3, 2) if args.quick else (6, 4)
    cmd = "python benchmarks/android_agent.py" + (" --quick" if args.quick else "")
    overhead = env_overhead(6 if args.quick else 20)
    print("\n".join(overhead), flush=True)
    llm = load_backend(LLMConfig.from_env())
    with tempfile.TemporaryDirectory() as tmp:
        rows, extra = agent_eval(llm, tasks, max_steps, max_rounds, Path(tmp))
    print("\n".join(rows))
    text = "\n".join([
        "## AndroidEnv and the AppAgent agent (fake adb server)",
        "",
        f"Command: `{cmd}` (LLM: `{llm.model_id}`; {len(tasks)} task(s) on the fake clock app, "
        f"max {max_steps} actions, max_retries 1, exploration {max_rounds} round(s) per task).",
        "No phone or emulator runs here: both parts drive the real adbutils client against the "
        "protocol-level fake adb server in `agentlab.envs.testing`.",
        "",
        *overhead,
        "",
        f"Deployment success by documentation source (exploration wrote {extra['auto_docs']} element doc(s) "
        f"in {extra['explore_calls']} LLM call(s); {extra['s_per_call']:.1f} s per deployment LLM call on this machine):",
        "",
        *rows,
        "",
        "Success is read from the fake app's state after the episode. 'unusable replies' are "
        "replies recorded with an error (no parseable action, or an action the screen cannot take).",
    ])
    atomic_write_text(args.out, text + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
