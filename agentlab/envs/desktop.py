"""A desktop an agent acts on through the mouse and keyboard (pyautogui on X11).

``DesktopEnv(display=None)`` observes the screen (Pillow's X11 grab), lists numbered UI
elements from the accessibility tree (AT-SPI, :mod:`agentlab.envs.a11y`) or, when no tree
is available, a numbered grid over the screenshot, and carries out PC-Agent's action space
(click, double click, type, select text, drag, scroll, hotkey, stop). Element numbers refer
to the last observation.

For a person's own desktop: ``confirm=True`` asks before every real action (a callback; the
default asks on the terminal) and a declined action is recorded as skipped; pyautogui's
fail-safe stays on (throw the mouse into a screen corner to stop the episode).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from agentlab.envs.a11y import A11yNode, A11yTree, nodes_to_elements, run_walker, tree_text, walk_tree
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import DESKTOP, Click, DoubleClick, Drag, Hotkey, Scroll, SelectText, Type
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.base import Element, Env, Observation, StepResult
from agentlab.envs.x11 import Driver, PyAutoGuiDriver, x_error
from agentlab.errors import ApplicationExitedError, EnvironmentUnavailableError, InvalidActionError

log = logging.getLogger(__name__)

ConfirmFn = Callable[[str, Action], bool]
#: what a desktop shows is still alive: None, else what died ("the application X (pid N) exited ...")
LivenessFn = Callable[[], "str | None"]

#: Key names agents commonly write that pyautogui spells differently.
KEY_ALIASES = {"control": "ctrl", "return": "enter", "escape": "esc", "cmd": "win", "super": "win",
               "meta": "win", "windows": "win", "del": "delete", "pgup": "pageup", "pgdn": "pagedown",
               "ins": "insert", "spacebar": "space", "option": "alt", "arrowup": "up", "arrowdown": "down",
               "arrowleft": "left", "arrowright": "right"}


def terminal_confirm(description: str, action: Action) -> bool:
    """Default confirm callback: ask on the terminal; anything but y/yes declines."""
    try:
        answer = input(f"agentlab desktop: about to {description}. Do it? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def grid_elements(size: tuple[int, int], rows: int, cols: int) -> list[Element]:
    """A numbered grid over the screen (row by row), for screens with no accessibility tree:
    the agent can still say ``click(17)`` for "the cell around that spot"."""
    w, h = size
    out = []
    for r in range(rows):
        for c in range(cols):
            x1, x2 = c * w // cols, (c + 1) * w // cols
            y1, y2 = r * h // rows, (r + 1) * h // rows
            out.append(Element(id=r * cols + c + 1, bbox=(x1, y1, x2, y2), role="grid cell",
                               text=f"row {r + 1}, column {c + 1}", resource_id=None, clickable=True,
                               focusable=False, uid=f"grid:{r},{c}"))
    return out


# -- the environment ------------------------------------------------------------------------
class DesktopEnv(Env):
    """An X11 desktop (a person's own, or a :class:`~agentlab.envs.xdisplay.VirtualDisplay`).

    ``display``: ``":0"``-style name, a ``VirtualDisplay`` (its DISPLAY, XAUTHORITY and session
    bus are used), or None for ``$DISPLAY``. ``a11y``: "auto" uses the accessibility tree when it
    is available and lists something, else the grid; "off" always uses the grid; "on" raises if
    the tree cannot be read. ``app`` limits the tree to applications whose name contains it
    (or one of its ``|``-separated parts: GIMP's plug-ins are applications of their own).
    ``liveness`` (set by the desktop task opener) says whether the task's applications still run;
    it is asked before every action and every observation, since a dead application leaves a
    black screen while the accessibility tree may still list its elements.
    """

    @property
    def actions(self) -> ActionSpace:
        return DESKTOP

    def __init__(
        self,
        display: Any = None,
        *,
        confirm: bool = False,
        confirm_fn: ConfirmFn | None = None,
        a11y: Literal["auto", "on", "off"] = "auto",
        app: str = "",
        grid: tuple[int, int] = (8, 12),
        pause_s: float = 0.02,
        settle_s: float = 0.4,
        a11y_timeout_s: float = 20.0,
        max_nodes: int = 3000,
        driver: Driver | None = None,
        uno_url: str | None = None,
        liveness: LivenessFn | None = None,
    ) -> None:
        self.env_vars = self._display_env(display)
        self.display = self.env_vars.get("DISPLAY", "")
        self.confirm = confirm or confirm_fn is not None
        self.confirm_fn: ConfirmFn = confirm_fn or terminal_confirm
        self.a11y = a11y
        self.app = app
        self.grid = grid
        self.settle_s = settle_s
        self.a11y_timeout_s = a11y_timeout_s
        self.max_nodes = max_nodes
        self._pause = pause_s
        self._driver = driver
        self._last: Observation | None = None
        self._nodes: list[A11yNode] = []
        self.task: str | None = None
        #: a UNO connection string to the LibreOffice showing the task's document (set by the
        #: desktop task opener); structured tools (Agent S2's spreadsheet expert) write through it
        self.uno_url = uno_url
        self.liveness = liveness
        #: the folder of the task's files the evaluator reads, and a call that stops the task's
        #: applications so their state is on disk and nothing writes those files any more (both set
        #: by the desktop task opener): a GUI specialist may then change the files directly
        self.task_files: Path | None = None
        self.release_files: Callable[[], None] | None = None
        #: actions asked for since the last reset (the step a dead application is reported in)
        self.steps_taken = 0

    @staticmethod
    def _display_env(display: Any) -> dict[str, str]:
        env = dict(os.environ)
        if display is not None and hasattr(display, "env"):  # a VirtualDisplay
            env.update(display.env)
            return env
        if display is not None:
            env["DISPLAY"] = str(display)
        return env

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            if not self.display:
                raise x_error("", KeyError("DISPLAY"))
            self._driver = PyAutoGuiDriver(self.display, self.env_vars.get("XAUTHORITY"), self._pause)
        return self._driver

    # -- observing -------------------------------------------------------------------
    def reset(self, task: str | None = None) -> Observation:
        self.task = task
        self.steps_taken = 0
        return self.observe()

    def check_alive(self) -> None:
        """Raise :class:`ApplicationExitedError` when what this desktop shows has died: acting on
        (or listing) a dead application's screen would go on with nothing behind it."""
        if self.liveness is None:
            return
        dead = self.liveness()
        if dead:
            when = f"during step {self.steps_taken}" if self.steps_taken else "before the first step"
            raise ApplicationExitedError(f"{dead} {when}; the episode was ended (nothing was left on the screen "
                                         "to act on)")

    def screenshot(self) -> Image.Image:
        return self.driver.screenshot()

    def accessibility_tree(self) -> A11yTree:
        """The raw tree (all nodes, not just interactive ones), e.g. to check an app's state."""
        return walk_tree(self.env_vars, app=self.app, max_nodes=self.max_nodes, timeout_s=self.a11y_timeout_s)

    def observe(self) -> Observation:
        self.check_alive()
        shot = self.screenshot()
        info: dict[str, Any] = {"screen": list(shot.size), "display": self.display}
        elements: list[Element] = []
        nodes: list[A11yNode] = []
        text = ""
        if self.a11y != "off":
            try:
                tree = self.accessibility_tree()
                elements, nodes = nodes_to_elements(tree.nodes, shot.size)
                text = tree_text(tree)
                info.update(a11y_nodes=len(tree.nodes), a11y_truncated=tree.truncated,
                            a11y_s=round(tree.elapsed_s, 3), apps=tree.apps)
            except EnvironmentUnavailableError as exc:
                if self.a11y == "on":
                    raise
                info["a11y_error"] = exc.message
                log.info("no accessibility tree: %s", exc.message)
        if elements:
            info["source"] = "a11y"
            if shot.getbbox() is None:  # every pixel black: grabbed before the windows the tree lists painted
                shot = self.screenshot()  # (a loaded machine: the tree was read after the paint)
                info["regrabbed"] = True
        else:
            elements, nodes = grid_elements(shot.size, *self.grid), []
            info["source"] = "grid"
        self.check_alive()  # it may have died while the tree was read: never list a dead app
        obs = Observation(screenshot=shot, elements=elements, text=text, info=info)
        self._last, self._nodes = obs, nodes
        return obs

    def observe_until(self, ready: Callable[[Observation], bool], timeout_s: float = 30.0,
                      interval_s: float = 0.5) -> Observation:
        """Observe until ``ready(obs)`` holds (an app that is still starting, a dialog that is
        about to open); the last observation is returned either way, so check it."""
        deadline = time.monotonic() + timeout_s
        obs = self.observe()
        while not ready(obs) and time.monotonic() < deadline:
            time.sleep(interval_s)
            obs = self.observe()
        return obs

    def observe_stable(self, timeout_s: float = 30.0, interval_s: float = 0.5) -> Observation:
        """Observe until two observations in a row list the same elements at the same places:
        an app whose window is mapped may still be laying itself out (LibreOffice moves its
        toolbars for a second or two), and a click aimed at a stale box lands elsewhere."""
        previous: list[tuple[str, str, tuple[int, int, int, int]]] | None = None

        def same(obs: Observation) -> bool:
            nonlocal previous
            key = [(e.role, e.text, e.bbox) for e in obs.elements]
            stable, previous = key == previous, key
            return stable

        return self.observe_until(same, timeout_s, interval_s)

    # -- acting ----------------------------------------------------------------------
    def step(self, action: Action) -> StepResult:
        self.steps_taken += 1
        self.check_alive()  # before anything is checked against (or sent to) a screen that is gone
        if self._last is None:
            self.observe()
        assert self._last is not None
        if action not in DESKTOP:
            raise InvalidActionError(f"{action.to_call()} is not a desktop action; use one of "
                                     + DESKTOP.call_names())
        if action.terminal:
            return StepResult(self._last, done=True, info={"action": action.to_dict(), "executed": False})
        plan = self._plan(action, self._last)  # validates element numbers etc. before asking
        description = action.describe()
        if self.confirm and not self.confirm_fn(description, action):
            log.info("declined: %s", description)
            return StepResult(self.observe(), done=False,
                              info={"action": action.to_dict(), "executed": False, "skipped": True,
                                    "reason": "declined by the user"})
        try:
            plan()
        except Exception as exc:
            if type(exc).__name__ == "FailSafeException":
                raise EnvironmentUnavailableError("stopped by pyautogui's fail-safe (mouse in a screen corner); "
                                                  "move the mouse away from the corners to continue") from None
            raise
        time.sleep(self.settle_s)
        return StepResult(self.observe(), done=False, info={"action": action.to_dict(), "executed": True})

    def _point(self, obs: Observation, element: int | None, x: int | None, y: int | None) -> tuple[int, int]:
        if element is not None:
            return obs.element(element).center
        assert x is not None and y is not None
        w, h = obs.screenshot.size if obs.screenshot is not None else (10**6, 10**6)
        if not (0 <= x < w and 0 <= y < h):
            raise InvalidActionError(f"point ({x}, {y}) is off the {w}x{h} screen")
        return x, y

    def _plan(self, action: Action, obs: Observation) -> Callable[[], None]:
        """Check an action against the current screen and return the thunk that performs it;
        nothing touches the machine until the thunk runs."""
        d = self.driver
        if isinstance(action, (Click, DoubleClick)):
            p = self._point(obs, action.element, action.x, action.y)
            clicks = 2 if isinstance(action, DoubleClick) else 1
            return lambda: d.click(*p, clicks=clicks)
        if isinstance(action, Type):
            where = obs.element(action.element).center if action.element is not None else None
            typer = self._typer(action.text)
            field = self._focus_target(action.element)

            def do_type() -> None:
                if where is not None:
                    d.click(*where)
                    if field is not None and not self._wait_focus(field):
                        d.click(*where)  # the first click came while the window was busy: once more
                        self._wait_focus(field)
                typer(action.text)

            return do_type
        if isinstance(action, SelectText):
            return self._plan_select(action, obs)
        if isinstance(action, Drag):
            a = obs.element(action.source).center if action.source is not None else action.start
            b = obs.element(action.target).center if action.target is not None else action.end
            assert a is not None and b is not None
            return lambda: d.drag(a, b)
        if isinstance(action, Scroll):
            at = None
            if action.element is not None:
                at = obs.element(action.element).center
            elif action.x is not None:
                at = self._point(obs, None, action.x, action.y)
            sign = 1 if action.direction in ("up", "left") else -1
            horizontal = action.direction in ("left", "right")
            return lambda: d.scroll(sign * action.amount * (-1 if horizontal else 1), horizontal, at)
        if isinstance(action, Hotkey):
            keys = tuple(KEY_ALIASES.get(k, k) for k in action.keys)
            unknown = [k for k in keys if k not in d.key_names()]
            if unknown:
                raise InvalidActionError(f"unknown key(s) {unknown} in {action.to_call()}; use names like ctrl, shift, "
                                         "alt, enter, tab, esc, f5, a")
            return lambda: d.hotkey(keys)
        raise InvalidActionError(f"{action.to_call()} is not supported by the desktop env")

    def _focus_target(self, element: int | None) -> A11yNode | None:
        """The text field ``element`` is, when typing into it should wait for its focus: a field
        that can take focus and does not have it yet (the element came from the tree)."""
        if element is None or self._last is None or self._last.info.get("source") != "a11y":
            return None
        i = element - 1
        if i >= len(self._nodes):
            return None
        node = self._nodes[i]
        if "focusable" in node.states and "focused" not in node.states and (
                "editable" in node.states or node.role in ("text", "entry", "password text")):  # not a combo box: a second click closes it
            return node
        return None

    def _wait_focus(self, node: A11yNode, wait_s: float = 4.0) -> bool:
        """Wait until ``node`` has keyboard focus after a click on it. A busy application (a
        loaded machine, LibreOffice laying out its toolbars) handles the click after keys that
        were already sent, and the text went into the sheet instead of the Name Box (CI saw
        exactly that); False when the focus did not come in ``wait_s`` (the keys are sent anyway)."""
        try:
            out = run_walker(["focused", str(list(node.path)), "--wait", str(wait_s)], self.env_vars,
                             self.a11y_timeout_s)
        except EnvironmentUnavailableError:
            return False
        ok = bool(out.get("focused"))
        if not ok:
            log.info("%s %r did not take the focus within %.0fs (%s)", node.role, node.name, wait_s,
                     out.get("error", "not focused"))
        return ok

    def _typer(self, text: str) -> Callable[[str], None]:
        real = isinstance(self.driver, PyAutoGuiDriver)  # which can bind spare keycodes
        bad = [c for c in self.driver.untypeable(text) if not (real and c.isprintable())]
        if bad:
            raise InvalidActionError(f"cannot type {''.join(bad)!r}: not a key and not a printable character")
        return self.driver.write

    def _plan_select(self, action: SelectText, obs: Observation) -> Callable[[], None]:
        d = self.driver
        if action.start is not None and action.end is not None:
            start, end = action.start, action.end
            return lambda: d.drag(start, end)
        # Select by text: find it in an element's text and select that range through AT-SPI.
        candidates = [obs.element(action.element)] if action.element is not None else obs.elements
        for el in candidates:
            i = el.id - 1
            if i >= len(self._nodes):
                continue
            node = self._nodes[i]
            content = node.text if node.text is not None else node.name
            pos = content.find(action.text)
            if pos < 0:
                continue
            path, env, timeout = node.path, self.env_vars, self.a11y_timeout_s

            def do_select(path: tuple[int, ...] = path, pos: int = pos) -> None:
                out = run_walker(["select", str(list(path)), str(pos), str(pos + len(action.text))], env, timeout)
                if not out.get("ok"):
                    raise InvalidActionError(f"the application refused to select {action.text!r} in element {el.id}")

            return do_select
        raise InvalidActionError(f"no element on this screen shows the text {action.text!r}; "
                                 "use select_text(start=(x1, y1), end=(x2, y2)) to drag-select")

    def close(self) -> None:
        self._last = None

