"""Replay a desktop task's GUI solution through the desktop env: the scripted GUI agent of tests.

:func:`replay` carries out each :class:`~agentlab.tasks.gui_solution.GuiStep` as a desktop action
(``click(7)``, ``type("...")``, ``hotkey("ctrl", "s")``) on a :class:`~agentlab.envs.desktop.DesktopEnv`,
finding the element a step aims at in the current observation by its accessible role and name
(waiting for it to appear, as a person waits for a dialog). A step that cannot be carried out
raises :class:`GuiReplayError` naming the step, with the screen saved next to the episode's
files; ``on_step`` sees every observation and action (a trajectory recorder, a timer).
"""

from __future__ import annotations

import logging
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Click, DoubleClick, Drag, Hotkey, Scroll, Type
from agentlab.envs.base import Element, Observation
from agentlab.envs.desktop import DesktopEnv
from agentlab.errors import AgentlabError, EnvironmentUnavailableError, InvalidActionError
from agentlab.tasks.gui_solution import PHONE_ONLY, GuiStep, Target

if TYPE_CHECKING:
    from agentlab.envs.task_env import TaskEnvOptions
    from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)

#: ``on_step(index, step, observation before, action or None)``
StepHook = Callable[[int, GuiStep, Observation, Action | None], None]


class GuiReplayError(AgentlabError):
    """A GUI solution's step could not be carried out (its element never showed, an action failed)."""

    def __init__(self, message: str, *, step: int, screenshot: Path | None = None) -> None:
        super().__init__(message)
        self.step = step
        self.screenshot = screenshot


@dataclass
class ReplayResult:
    """How a replay went: the steps carried out, the time, and the actions sent to the env."""

    steps: int = 0
    seconds: float = 0.0
    actions: list[str] = field(default_factory=list)


def find(obs: Observation, target: Target) -> Element | None:
    """The element ``target`` names on this screen (its ``nth`` match, top-to-bottom), or None."""
    hits = [e for e in obs.elements if target.matches(e.role, e.text)]
    if not hits or not -len(hits) <= target.nth < len(hits):
        return None
    return hits[target.nth]


def _wait_for(env: DesktopEnv, target: Target, timeout_s: float, present: bool = True) -> Observation:
    return env.observe_until(lambda o: (find(o, target) is not None) == present, timeout_s=timeout_s, interval_s=0.3)


#: seconds a replay that may scroll waits for an element before it scrolls to look for it: an
#: element that has not come in that time is more often below the fold than still loading
SCROLL_AFTER_S = 5.0
#: wheel clicks per look, and at most how many looks down before scrolling back
SCROLL_CLICKS = 5
MAX_SCROLLS = 6


def scroll_to(env: DesktopEnv, target: Target, timeout_s: float, i: int, step: GuiStep,
               on_step: StepHook | None, sent: list[str]) -> Observation:
    """Wait for ``target``; when it has not shown after :data:`SCROLL_AFTER_S`, scroll down over
    the middle of the screen, looking after each turn, until it shows or the screen stops moving
    (the end of the page); not found: scroll back up as far and wait out the rest of ``timeout_s``.

    Why: a demonstration records where its element was for *its* value, and an element the
    accessibility tree leaves out because it is off screen (Chromium's settings search for "show"
    puts the "Show home button" switch below the fold) is found as a person finds it. Each scroll
    is an action of step ``i`` (``on_step`` sees it, ``sent`` lists it)."""
    t0 = time.monotonic()
    obs = _wait_for(env, target, min(timeout_s, SCROLL_AFTER_S))
    if find(obs, target) is not None or timeout_s <= SCROLL_AFTER_S or obs.screenshot is None:
        return obs
    w, h = obs.screenshot.size

    def turn(direction: str, clicks: int) -> Observation:
        action = Scroll(direction, clicks, x=w // 2, y=h // 2)
        if on_step is not None:
            on_step(i, step, obs, action)
        sent.append(action.to_call())
        return env.step(action).observation

    turns = 0
    for _ in range(MAX_SCROLLS):
        before = [(e.role, e.text, e.bbox) for e in obs.elements]
        turn("down", SCROLL_CLICKS)
        turns += 1
        obs = _wait_for(env, target, 1.0)
        if find(obs, target) is not None:
            log.info("step %d: found %s after scrolling down %d time(s)", i, target.describe(), turns)
            return obs
        if [(e.role, e.text, e.bbox) for e in obs.elements] == before:
            break  # the end of what scrolls here
    turn("up", SCROLL_CLICKS * turns)
    return _wait_for(env, target, max(0.5, timeout_s - (time.monotonic() - t0)))


def action_for(step: GuiStep, obs: Observation) -> Action | None:
    """The desktop action that carries out ``step`` on ``obs`` (None: a wait or a sleep)."""
    act = step.action
    target = step.target
    element = find(obs, target) if target is not None else None
    if act == "drag":
        assert step.to is not None
        drop = find(obs, step.to)
        return Drag(source=element.id, target=drop.id) if element is not None and drop is not None else None
    if act in ("click", "double_click") or (act == "type" and step.into is not None):
        if element is None:
            return None
        if act == "click":
            return Click(element=element.id)
        if act == "double_click":
            return DoubleClick(element=element.id)
        return Type(str(step.type), element=element.id)
    if act == "type":
        return Type(str(step.type))
    if act == "key":
        return Hotkey(str(step.key))
    return None


def _listing(obs: Observation, limit: int = 60) -> str:
    lines = [f"[{e.id}] {e.role} {e.text!r}" for e in obs.elements[:limit]]
    more = f" ... and {len(obs.elements) - limit} more" if len(obs.elements) > limit else ""
    return "; ".join(lines) + more


def replay(env: DesktopEnv, steps: list[GuiStep], *, shots: Path | None = None,
           on_step: StepHook | None = None, scroll: bool = False) -> ReplayResult:
    """Carry out ``steps`` on ``env``; :class:`GuiReplayError` names the first one that fails
    (its screen saved as ``shots/gui_failure.png`` when ``shots`` is given). ``scroll``: an
    element a step waits for or acts on that does not come is looked for by scrolling
    (:func:`scroll_to`; a skill replayed with another value than its demonstration's). A task's
    own GUI solution is replayed as written (off)."""
    result = ReplayResult()
    t0 = time.monotonic()
    obs = env.observe()
    for i, step in enumerate(steps, start=1):
        action: Action | None = None
        try:
            if step.sleep is not None:
                time.sleep(step.sleep)
                obs = env.observe()
            elif step.action in PHONE_ONLY:
                raise _fail(env, obs, i, step, shots, f"a desktop cannot {step.action.replace('_', '-')}: it is a phone's step")
            elif step.action in ("wait", "gone"):
                assert step.target is not None
                if scroll and step.action == "wait":
                    obs = scroll_to(env, step.target, step.timeout_s, i, step, on_step, result.actions)
                else:
                    obs = _wait_for(env, step.target, step.timeout_s, present=step.action == "wait")
                if (find(obs, step.target) is not None) != (step.action == "wait"):
                    raise _fail(env, obs, i, step, shots, "still on screen" if step.action == "gone" else "never showed")
            else:
                for target in (step.target, step.to):
                    if target is not None and find(obs, target) is None:
                        obs = (scroll_to(env, target, step.timeout_s, i, step, on_step, result.actions) if scroll
                               else _wait_for(env, target, step.timeout_s))
                action = action_for(step, obs)
                if action is None:
                    raise _fail(env, obs, i, step, shots, "its element never showed")
            if on_step is not None:
                on_step(i, step, obs, action)
            if action is not None:
                obs = env.step(action).observation
                result.actions.append(action.to_call())
        except (InvalidActionError, EnvironmentUnavailableError) as exc:
            raise _fail(env, obs, i, step, shots, exc.message) from None
        result.steps = i
    result.seconds = time.monotonic() - t0
    return result


def _fail(env: DesktopEnv, obs: Observation, index: int, step: GuiStep, shots: Path | None, why: str) -> GuiReplayError:
    shot: Path | None = None
    if shots is not None:
        shot = shots / "gui_failure.png"
        try:
            shots.mkdir(parents=True, exist_ok=True)
            env.screenshot().save(shot)
        except Exception:  # a diagnostic must not hide the failure itself
            shot = None
    where = f"; screen saved to {shot}" if shot else ""
    return GuiReplayError(f"step {index} ({step.describe()}): {why}{where}; on screen: {_listing(obs)}",
                          step=index, screenshot=shot)


@dataclass
class GuiCheck:
    """One desktop task proven (or not) through the GUI: start score, solved score, and timings."""

    task_id: str
    start: float = 0.0
    solved: float = 0.0
    error: str | None = None
    launch_s: float = 0.0  #: opening the task: files, display, applications, first stable screen
    replay_s: float = 0.0  #: carrying out the GUI solution
    collect_s: float = 0.0  #: closing the applications so their state is on disk
    steps: int = 0
    a11y_nodes: int = 0  #: accessibility nodes on the first screen
    a11y_s: float = 0.0  #: how long walking that tree took
    screenshot: Path | None = None
    #: application crashes (killed by a fault signal) that made the check start again from scratch
    crashes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.start == 0.0 and self.solved >= 1.0 - 1e-9

    def line(self) -> str:
        """``ok ID: start 0.00, solved 1.00`` as ``agentlab tasks check`` prints it."""
        head = f"{'ok  ' if self.ok else 'FAIL'} {self.task_id}: start {self.start:.2f}, solved {self.solved:.2f}"
        tail = f" ({self.error})" if self.error else f" (GUI: {self.steps} steps in {self.replay_s:.1f}s)"
        if self.crashes:
            tail += f" [started again after {len(self.crashes)} application crash(es): {'; '.join(self.crashes)}]"
        return head + tail


def replays(task: ExecTask) -> bool:
    """Whether :func:`check_task_gui` checks ``task``: the GUI solutions it replays are a desktop's."""
    return task.env == "desktop"


#: signals that mean an application faulted (a crash of its own), not that it was stopped
CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})


def check_task_gui(task: ExecTask, folder: Path, options: TaskEnvOptions | None = None,
                   on_step: StepHook | None = None, crash_retries: int = 1) -> GuiCheck:
    """Open ``task`` in ``folder`` (its episode folder), score the start state, replay its GUI
    solution, close the applications, and score the end state. Never raises for what the
    desktop does: a failure is recorded in :attr:`GuiCheck.error`.

    An application that crashes on its own (killed by SIGSEGV, SIGBUS, ...) says nothing about
    the task or its solution, so the check starts again from scratch in a fresh folder beside
    ``folder``, up to ``crash_retries`` times; every crash is kept in :attr:`GuiCheck.crashes` and
    printed in its line. Any other failure (a step that cannot be carried out, a wrong end state,
    an application that exits normally) is not retried. A ``folder`` an earlier check left files
    in is not reused (its files would be this check's start state, and an application's recovery
    dialog its first screen): the check runs in the first fresh sibling (``<folder>-2``, ...)."""
    crashes: list[str] = []
    attempt = fresh_folder(folder)
    for n in range(crash_retries + 1):
        check, crash = _check_once(task, attempt, options, on_step)
        if crash is None or n == crash_retries:
            check.crashes = crashes + ([crash] if crash else [])
            return check
        log.warning("%s: %s; starting the check again in a fresh folder", task.id, crash)
        crashes.append(crash)
        attempt = fresh_folder(folder.with_name(f"{folder.name}-after-crash-{n + 1}"))
    raise AssertionError("unreachable")  # pragma: no cover


def fresh_folder(folder: Path) -> Path:
    """``folder`` when it does not exist or is empty, else the first ``<folder>-N`` (N = 2, 3, ...)
    that does not exist: a check never starts on what an earlier one left."""
    if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
        return folder
    n = 2
    while folder.with_name(f"{folder.name}-{n}").exists():
        n += 1
    return folder.with_name(f"{folder.name}-{n}")


def _crashed(apps: list[subprocess.Popen[bytes]], names: list[str]) -> str | None:
    """The first application that died of a fault signal, as ``chromium: SIGSEGV``."""
    for i, proc in enumerate(apps):
        code = proc.poll()
        if code is not None and code < 0 and -code in CRASH_SIGNALS:
            name = names[i] if i < len(names) else str(proc.args)
            return f"{name}: {signal.Signals(-code).name}"
    return None


def _check_once(task: ExecTask, folder: Path, options: TaskEnvOptions | None,
                on_step: StepHook | None) -> tuple[GuiCheck, str | None]:
    """One attempt of :func:`check_task_gui`, and which application crashed during it (if any)."""
    from agentlab.envs.desktop_task import DesktopTaskEnv, open_desktop_task
    from agentlab.envs.task_env import TaskEnvOptions

    check = GuiCheck(task.id)
    if not task.gui_solution:
        check.error = "no gui_solution"
        return check, None
    t0 = time.monotonic()
    try:
        opened = open_desktop_task(task, folder, options or TaskEnvOptions())
    except AgentlabError as exc:
        check.error = f"cannot open: {exc.message}"
        return check, None
    crash: str | None = None
    check.launch_s = time.monotonic() - t0
    try:
        assert isinstance(opened, DesktopTaskEnv) and isinstance(opened.env, DesktopEnv)
        first = opened.env.observe()
        check.a11y_nodes = int(first.info.get("a11y_nodes", 0))
        check.a11y_s = float(first.info.get("a11y_s", 0.0))
        check.start = task.evaluate(opened.root).score
        try:
            res = replay(opened.env, task.gui_solution, shots=folder, on_step=on_step)
            check.steps, check.replay_s = res.steps, res.seconds
        except GuiReplayError as exc:
            check.error, check.steps, check.screenshot = exc.message, exc.step - 1, exc.screenshot
        t1 = time.monotonic()
        opened.collect()
        check.collect_s = time.monotonic() - t1
        check.solved = task.evaluate(opened.root).score
    except AgentlabError as exc:
        check.error = check.error or exc.message
    finally:
        if check.error and isinstance(opened, DesktopTaskEnv):
            crash = _crashed(opened.apps, opened.names)
        opened.close()
    return check, crash

