"""AndroidEnv's overhead and AppAgent's deployment under three documentation conditions, on the fake clock app.

No phone can run here, so both parts use the protocol-level fake adb server of
:mod:`agentlab.envs.testing` with the real adbutils client:

1. **Env overhead**: median time of ``AndroidEnv.observe()`` (screencap + robust dump + parsing
   + element selection) against adbutils' own ``screenshot()`` + ``dump_hierarchy()``, side by
   side in one run, and of a full ``step(Tap)``.
2. **Agent**: deployment on fake-app tasks whose success is read from the app's state, under
   AppAgent's three documentation conditions -- none, docs from the agent's own exploration
   (one exploration episode per task, same model), hand-written docs (the paper's "manually
   crafted" oracle) -- plus the share of model replies that could not be used (parse failures
   or impossible actions).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agentlab.experiments.markdown import table

if TYPE_CHECKING:
    from agentlab.envs.testing.fake_app import ClockApp
    from agentlab.llm.base import LLMBackend

#: Fake clock app tasks and how their success is read from the app's state.
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


class AndroidAgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: the first N fake-app tasks
    tasks: int = Field(len(TASKS), ge=0, le=len(TASKS))
    #: deployment: actions per episode; exploration: actions per task
    max_steps: int = Field(6, ge=1)
    max_rounds: int = Field(4, ge=1)
    #: repetitions of each overhead measurement (the median is reported)
    repeats: int = Field(20, ge=2)
    max_retries: int = Field(1, ge=0)
    max_new_tokens: int = Field(64, ge=8)


@dataclass
class EnvOverhead:
    """Median milliseconds on the fake device, over loopback."""

    raw_ms: float
    observe_ms: float
    step_ms: float

    def markdown(self) -> list[str]:
        return table(["measurement (fake adb server, loopback)", "median ms"], [
            ["adbutils `screenshot()` + `dump_hierarchy()`", f"{self.raw_ms:.1f}"],
            ["`AndroidEnv.observe()` (screencap, robust dump, parse, select elements)", f"{self.observe_ms:.1f}"],
            ["`AndroidEnv.step(Tap/Back)` incl. the new observation", f"{self.step_ms:.1f}"],
            ["observe / raw ratio", f"{self.observe_ms / self.raw_ms:.2f}"],
        ])


@dataclass
class Condition:
    """Deployment on every task under one documentation condition."""

    docs: str
    tasks: int
    solved: int = 0
    actions: int = 0
    llm_calls: int = 0
    #: replies recorded with an error (no parseable action, or one the screen cannot take)
    unusable: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    def cells(self) -> list[str]:
        st = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))
        return [self.docs, f"{self.solved}/{self.tasks}", f"{self.actions / self.tasks:.1f}",
                f"{self.unusable}/{self.llm_calls} ({self.unusable / max(self.llm_calls, 1):.0%})", st]


@dataclass
class AndroidAgent:
    config: AndroidAgentConfig
    model: str
    overhead: EnvOverhead
    conditions: list[Condition]
    explore_calls: int
    auto_docs: int
    seconds_per_call: float

    def note(self) -> str:
        """What ran, for the line after the command."""
        c = self.config
        return (f" (LLM: `{self.model}`; {c.tasks} task(s) on the fake clock app, max {c.max_steps} actions, "
                f"max_retries {c.max_retries}, exploration {c.max_rounds} round(s) per task).\n"
                "No phone or emulator runs here: both parts drive the real adbutils client against the "
                "protocol-level fake adb server in `agentlab.envs.testing`.")

    def markdown(self) -> list[str]:
        return [
            *self.overhead.markdown(),
            "",
            f"Deployment success by documentation source (exploration wrote {self.auto_docs} element doc(s) "
            f"in {self.explore_calls} LLM call(s); {self.seconds_per_call:.1f} s per deployment LLM call on this machine):",
            "",
            *table(["docs", "success", "avg actions", "unusable replies / LLM calls", "statuses"],
                   [c.cells() for c in self.conditions]),
            "",
            "Success is read from the fake app's state after the episode. 'unusable replies' are "
            "replies recorded with an error (no parseable action, or an action the screen cannot take).",
        ]

    def summary(self) -> dict[str, float | int | str | None]:
        return {"observe_over_raw": self.overhead.observe_ms / self.overhead.raw_ms,
                **{f"solved_{c.docs.replace('-', '_')}": c.solved for c in self.conditions}}


def _median_ms(f: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def env_overhead(repeats: int) -> EnvOverhead:
    """``AndroidEnv.observe()`` and ``step()`` against adbutils' raw calls on the fake device."""
    import adbutils

    from agentlab.envs import AndroidEnv
    from agentlab.envs.actions.phone import Back, Tap
    from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice

    with FakeAdbServer(FakeDevice()) as server:
        dev = adbutils.AdbClient(host="127.0.0.1", port=server.port).device()
        env = AndroidEnv(adb_port=server.port, settle=0)
        env.reset()
        raw = _median_ms(lambda: (dev.screenshot(error_ok=False), dev.dump_hierarchy()), repeats)
        obs = _median_ms(env.observe, repeats)

        def tap_and_back() -> None:
            o = env.observe()
            env.step(Tap(next(e.id for e in o.elements if e.text == "Settings")))
            env.step(Back())

        step = _median_ms(tap_and_back, max(2, repeats // 2)) / 2
    return EnvOverhead(raw, obs, step)


def write_manual_docs(root: Path) -> None:
    """The hand-written documentation (:data:`MANUAL_DOCS`) as a doc store under ``root``."""
    from agentlab.agents import DocStore
    from agentlab.envs import Element

    store = DocStore("clock", root)
    for uid, text in MANUAL_DOCS.items():
        store.update(Element(0, (0, 0, 1, 1), "android.widget.Button", "", None, True, uid=uid), "tap", text, source="manual")


def run(llm: LLMBackend, config: AndroidAgentConfig, work: Path) -> AndroidAgent:
    """The env overhead, then exploration and deployment with ``llm``; episodes and docs go under ``work``."""
    from agentlab.agents import AppAgent, AppAgentConfig, DocStore
    from agentlab.envs import AndroidEnv
    from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice
    from agentlab.envs.trajectory import load_trajectory

    overhead = env_overhead(config.repeats)
    tasks = TASKS[: config.tasks]
    base = AppAgentConfig(app="clock", max_retries=config.max_retries, max_new_tokens=config.max_new_tokens)
    docs_dirs: dict[str, Path | None] = {"none": None, "auto-exploration": work / "docs_auto", "manual": work / "docs_manual"}
    write_manual_docs(work / "docs_manual")
    explore_calls = 0  # exploration with the same model writes the auto docs (one episode per task goal)
    for task, _ in tasks:
        with FakeAdbServer(FakeDevice()) as server:
            agent = AppAgent(llm, base.model_copy(update={"docs_dir": work / "docs_auto", "max_rounds": config.max_rounds}))
            agent.explore(AndroidEnv(adb_port=server.port, settle=0), task, work / "runs" / "explore" / f"t{len(task)}")
            explore_calls += agent.llm_calls
    auto_docs = len(DocStore("clock", work / "docs_auto").documented())
    conditions = []
    t0 = time.perf_counter()
    for cond, docs_dir in docs_dirs.items():
        c = Condition(cond, len(tasks))
        for i, (task, check) in enumerate(tasks):
            with FakeAdbServer(FakeDevice()) as server:
                agent = AppAgent(llm, base.model_copy(update={"docs_dir": docs_dir or work / "docs_none",
                                                              "use_docs": docs_dir is not None, "max_steps": config.max_steps}))
                ep = work / "runs" / cond / f"task{i}"
                res = agent.deploy(AndroidEnv(adb_port=server.port, settle=0), task, ep)
                c.solved += check(server.device.app)
                c.actions += res.steps
                c.llm_calls += agent.llm_calls
                c.unusable += sum(1 for s in load_trajectory(ep).steps if s.error and not s.done)
                c.statuses[res.status] = c.statuses.get(res.status, 0) + 1
        conditions.append(c)
    per_call = (time.perf_counter() - t0) / max(sum(c.llm_calls for c in conditions), 1)
    return AndroidAgent(config, llm.model_id, overhead, conditions, explore_calls, auto_docs, per_call)
