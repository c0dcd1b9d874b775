"""AppAgent's exploration with the reflection read off the screens: a deterministic survey of an app.

AppAgent (Zhang et al., 2023) explores an app by letting the LLM pick an action towards a goal
and then asking it to compare the screens before and after and write what the element does.
With the embedded SmolLM2-135M that phase writes nothing usable (0 documents on the fake clock
app: its replies fail the reflection format), so deployment never gets any documentation. The
survey keeps the paper's *what* -- one document per element and action, written from the
difference between the screen before and after acting, elements that change nothing put on the
app's useless list, pages that lead nowhere gone back from -- and replaces its *how*:

* **no LLM**: the element's effect is classified from the two screens (:func:`describe_effect`):
  "Opens a screen showing: Vibrate, Dark theme" (the texts present after and not before),
  "Switches Dark theme on or off" (a checkable element's state flipped), "Shows: Delete" (texts
  added to the same screen), "Goes back to the previous screen", or nothing (the useless list);
* **no goal**: instead of following the model's choices towards a task, every clickable element
  (and, on a phone, every long-clickable one: ``long_press``) of the launch screen is tried,
  then those of the screens they open, breadth first, down to ``depth`` screens;
* **deterministic**: the same app gives the same documents, in a known number of actions. After
  each action the survey gets back to the screen it is surveying: a flipped switch is flipped back
  (the app's data is left as it was), anything else is undone with Back, and when Back does not
  lead to the same screen the app is relaunched (``relaunch``: on a phone ``am force-stop`` +
  launch, else the env's reset) and the path to the screen replayed.

A page whose every element either does nothing or goes back (an about page, an advert) is
documented at its opener as such ("Opens a page with nothing to do but go back"), the paper's
BACK decision. Documents go through :class:`~agentlab.agents.appagent.docs_store.DocStore`
(atomic writes) with the source :data:`SOURCE`. It runs on any :class:`~agentlab.envs.base.Env`
whose observations list elements with uids; on Android the screen's texts come from the
uiautomator dump (labels such as "Dark theme" are plain TextViews, not elements).

On a desktop (:func:`desktop_survey`) the same survey runs on a real application under Xvfb,
opened on a synthesized start state (a skill demonstration's task, never an evaluation task):
anything an action opened is undone with Escape (a menu, a dialog) before the application is
relaunched on its files (:meth:`~agentlab.envs.desktop_task.DesktopTaskEnv.reopen`); a screen is
compared by its elements' roles and names, not their states or numbers (a focus moving is no new
screen), and only the controls a person clicks to reach something are tried (buttons, menus,
tabs, check boxes, links: :data:`DESKTOP_ROLES`), not a sheet's cells or a list's rows.

Caveat: acting on every element changes an app's data where an element does (a delete button
reached at the surveyed depth would delete). Survey a device whose data does not matter.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.agents.appagent.docs_store import DocStore
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Click, Hotkey
from agentlab.envs.actions.phone import PHONE, Back, LongPress, Tap
from agentlab.envs.android_ui import UINode, parse_hierarchy
from agentlab.envs.base import Element, Env, Observation, StepResult, clip
from agentlab.errors import ApplicationExitedError, ConfigError, DataError, InvalidActionError
from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)

#: the ``sources`` entry of every document the survey writes (exploration phase, survey method)
SOURCE = "explore/survey"
#: screens down from the launch screen whose elements are acted on (1: the launch screen only)
DEFAULT_DEPTH = 2
#: at most this many texts quoted in one document (a long list says little more and costs prompt)
MAX_TEXTS = 12
#: a survey stops after this many actions (a guard against an app that keeps opening new screens)
DEFAULT_MAX_ACTIONS = 300

#: how an opening action's document starts, and how it starts once the page proved a dead end
OPENS = "Opens a screen showing: "
DEAD_END = "Opens a page with nothing to do but go back, showing: "

#: the desktop roles a survey clicks: the controls that lead somewhere or switch something (a
#: spreadsheet's cells, a list's rows and a text's paragraphs are content, not the application's)
DESKTOP_ROLES = frozenset({"push button", "toggle button", "check box", "radio button", "menu", "page tab",
                           "link", "combo box", "push button menu", "check menu item", "radio menu item", "menu item"})

#: the document of a desktop control whose click closed the application (or made it exit)
CLOSES = "Closes the application"

#: one step of the way from the launch screen to a screen: element uid, its box, the action's key
Step = tuple[str, tuple[int, int, int, int], str]


@dataclass
class Finding:
    """What one action on one element did (a row of the survey's report)."""

    uid: str
    label: str  #: the element's prompt line on the screen it was found on
    key: str  #: ``tap``, ``long_press`` (phone) or ``click``
    effect: str  #: opens | dead_end | shows | hides | switch | back | focus | changes | leaves | closes | nothing
    doc: str  #: the document written ("" for nothing)
    level: int  #: 1 = the launch screen
    element: Element | None = field(default=None, repr=False, compare=False)  #: what DocStore labels the file with


@dataclass
class SurveyReport:
    app: str
    depth: int
    findings: list[Finding] = field(default_factory=list)
    screens: int = 0
    actions: int = 0
    relaunches: int = 0
    seconds: float = 0.0

    @property
    def documented(self) -> list[str]:
        return sorted({f.uid for f in self.findings if f.doc})

    @property
    def useless(self) -> list[str]:
        """Uids none of whose tried actions changed anything (written to the app's useless list on
        a phone only: on a desktop, Bold changes the selection's text and not the screen's controls)."""
        acted: dict[str, bool] = {}
        for f in self.findings:
            acted[f.uid] = acted.get(f.uid, False) or f.effect != "nothing"
        return sorted(u for u, did in acted.items() if not did)


# -- reading a screen ---------------------------------------------------------------------------
def _signature(obs: Observation) -> str:
    sig = obs.info.get("signature")
    return str(sig) if sig is not None else "\n".join(e.label() for e in obs.elements)


def _dump_nodes(obs: Observation) -> list[UINode]:
    """Every node of the screen's uiautomator dump (``obs.info["xml"]``), or none: no dump (a
    desktop), or one that does not parse."""
    xml = obs.info.get("xml")
    if not isinstance(xml, str) or not xml:
        return []
    try:
        return [n for r in parse_hierarchy(xml) for n in r.walk()]
    except DataError:
        return []


def screen_texts(obs: Observation) -> list[str]:
    """Every distinct text the screen shows, in screen order: on Android the dump's texts and
    content descriptions (a switch's label is a separate TextView), else the elements' texts."""
    out: list[str] = []
    nodes = _dump_nodes(obs)
    for n in nodes:
        t = (n.text or n.content_desc).strip()
        if t and t not in out:
            out.append(t)
    if nodes:
        return out
    for e in obs.elements:  # no dump: the elements' texts (on Android a row's is its children's, joined)
        t = e.text.strip()
        if t and t not in out:
            out.append(t)
    return out


def _long_clickable(obs: Observation) -> set[tuple[int, int, int, int]]:
    """Boxes of the long-clickable nodes (the env's elements do not carry that flag; the dump does)."""
    return {n.bounds for n in _dump_nodes(obs) if n.long_clickable}


def _label_near(obs: Observation, el: Element) -> str:
    """A text-less element's name: the text beside it on its row (a switch's "Dark theme"), else
    its resource id's words."""
    _, y1, _, y2 = el.bbox
    cy = (y1 + y2) / 2
    best: tuple[float, str] | None = None
    for n in _dump_nodes(obs):
        t = n.text.strip()
        if not t or n.bounds == el.bbox or not (n.bounds[1] <= cy <= n.bounds[3]) or n.bounds[2] > el.bbox[0] + 1:
            continue
        gap = el.bbox[0] - n.bounds[2]
        if best is None or gap < best[0]:
            best = (gap, t)
    if best is not None:
        return best[1]
    if el.resource_id:
        return el.resource_id.rsplit("/", 1)[-1].replace("_", " ")
    return el.role.rsplit(".", 1)[-1]


def _quote(texts: list[str]) -> str:
    shown = [clip(t, 60) for t in texts[:MAX_TEXTS]]
    return ", ".join(shown) + (", ..." if len(texts) > MAX_TEXTS else "")


def _checked(obs: Observation) -> dict[tuple[str, tuple[int, int, int, int]], bool]:
    return {(e.uid, e.bbox): "checked" in e.state for e in obs.elements if {"checked", "unchecked"} & set(e.state)}


def describe_effect(before: Observation, after: Observation, el: Element, parent: str | None) -> tuple[str, str]:
    """(effect, document) of an action on ``el`` read from the screens: see the module docstring.

    ``parent`` is the signature of the screen ``before`` was opened from (None on the launch screen).
    """
    if _signature(before) == _signature(after):
        return "nothing", ""
    pkg_b, pkg_a = before.info.get("package"), after.info.get("package")
    texts_b, texts_a = screen_texts(before), screen_texts(after)
    new = [t for t in texts_a if t not in texts_b]
    gone = [t for t in texts_b if t not in texts_a]
    if pkg_b and pkg_a and pkg_a != pkg_b:
        return "leaves", f"Leaves the app for {pkg_a}" + (f", showing: {_quote(new)}" if new else "")
    if parent is not None and _signature(after) == parent:
        return "back", "Goes back to the previous screen"
    cb, ca = _checked(before), _checked(after)
    flipped = [k for k in cb if k in ca and cb[k] != ca[k]]
    if flipped and not new and not gone:
        own = (el.uid, el.bbox) in flipped
        if own and sum(1 for e in before.elements if e.uid == el.uid) > 1:
            return "switch", "Switches the item of its own row on or off (one such switch per row)"
        target = el if own else next(e for e in before.elements if (e.uid, e.bbox) == flipped[0])
        name = target.text.strip() or _label_near(before, target)
        return "switch", f"Switches {name} on or off"
    mine = next((e for e in after.elements if (e.uid, e.bbox) == (el.uid, el.bbox)), None)
    if mine is not None and "focused" in mine.state and "focused" not in el.state and not new and not gone:
        return "focus", "Focuses this field for typing"
    if new and not gone:
        return "shows", f"Shows: {_quote(new)}"
    if new:
        return "opens", f"{OPENS}{_quote(new)}"
    if gone:
        return "hides", f"Hides: {_quote(gone)}"
    return "changes", "Changes the screen (no text appears or goes)"


# -- the survey ----------------------------------------------------------------------------------
class _Lost(Exception):
    """The survey could not get back to the screen it is surveying."""


class Survey:
    """One survey of one app on one env (see the module docstring); :meth:`run` does it."""

    def __init__(self, env: Env, docs: DocStore, *, depth: int = DEFAULT_DEPTH,
                 relaunch: Callable[[], Observation] | None = None, max_actions: int = DEFAULT_MAX_ACTIONS) -> None:
        if depth < 1:
            raise ValueError("depth must be at least 1 (the launch screen)")
        self.env, self.docs, self.depth, self.max_actions = env, docs, depth, max_actions
        self.phone = env.actions is PHONE
        self._relaunch = relaunch or (lambda: env.reset())
        self.report = SurveyReport(app=docs.app, depth=depth)
        self.obs: Observation | None = None

    # ---------------------------------------------------------------- moving about
    def _act(self, action: Action) -> Observation:
        self.report.actions += 1
        self.obs = self.env.step(action).observation
        return self.obs

    def _action(self, el: Element, key: str) -> Action:
        if key == "long_press":
            return LongPress(el.id)
        return Tap(el.id) if self.phone else Click(element=el.id)

    @staticmethod
    def _find(obs: Observation, uid: str, bbox: tuple[int, int, int, int]) -> Element | None:
        same = [e for e in obs.elements if e.uid == uid]
        return next((e for e in same if e.bbox == bbox), same[0] if same else None)

    def goto(self, path: list[Step], want: str) -> Observation:
        """Relaunch the app and replay ``path``; :class:`_Lost` unless the screen is ``want``."""
        self.report.relaunches += 1
        obs = self.obs = self._relaunch()
        for uid, bbox, key in path:
            el = self._find(obs, uid, bbox)
            if el is None:
                raise _Lost(f"{uid} is not on the screen any more")
            try:
                obs = self._act(self._action(el, key))
            except ApplicationExitedError as exc:
                raise _Lost(exc.message) from None
        if _signature(obs) != want:
            raise _Lost("replaying the path led to another screen")
        return obs

    def _back_to(self, path: list[Step], want: str, how: Action | None) -> Observation:
        """Undo the last action with ``how`` (None: go straight to relaunching) and check."""
        if how is not None:
            try:
                obs = self._act(how)
                if _signature(obs) == want:
                    return obs
            except (InvalidActionError, ApplicationExitedError) as exc:  # refused, or it died: relaunch
                log.debug("undo %s: %s", how.describe(), exc.message)
        return self.goto(path, want)

    # ---------------------------------------------------------------- one screen
    def _keys(self, obs: Observation, el: Element) -> list[str]:
        if not self.phone and (el.role not in DESKTOP_ROLES or not el.text.strip()):
            return []  # a desktop control with no name cannot be found by words, so its document helps no one
        keys = ["tap" if self.phone else "click"] if el.clickable else []
        if self.phone and el.bbox in _long_clickable(obs):
            keys.append("long_press")
        return keys

    def _survey_screen(self, path: list[Step], screen: Observation, parent: str | None,
                       queue: deque[tuple[list[Step], Observation, str, Finding | None]], known: set[str]) -> list[Finding]:
        want = _signature(screen)
        level = len(path) + 1
        found: list[Finding] = []
        done: set[str] = set()
        for el in screen.elements:
            if not el.uid or el.uid in done:
                continue
            done.add(el.uid)  # one document per uid: a list's rows share theirs
            for key in self._keys(screen, el):
                if self.report.actions >= self.max_actions:
                    log.warning("survey: stopped at %d actions (max_actions)", self.max_actions)
                    return found
                obs = self.obs if self.obs is not None and _signature(self.obs) == want else self.goto(path, want)
                target = self._find(obs, el.uid, el.bbox)
                if target is None:
                    continue
                action = self._action(target, key)
                try:
                    after = self._act(action)
                except ApplicationExitedError as exc:  # it closed (or crashed): say so, open it again
                    log.info("survey L%d %s %s: the application exited (%s)", level, key, target.label(), exc.message)
                    found.append(Finding(el.uid, target.label(), key, "closes", CLOSES, level, element=target))
                    self.obs = None
                    self.goto(path, want)
                    continue
                effect, doc = describe_effect(obs, after, target, parent)
                f = Finding(el.uid, target.label(), key, effect, doc, level, element=target)
                found.append(f)
                log.info("survey L%d %s %s: %s", level, key, target.label(), doc or "nothing changed")
                sig = _signature(after)
                if effect == "opens" and sig not in known:
                    known.add(sig)
                    if level < self.depth:
                        queue.append(([*path, (el.uid, el.bbox, key)], after, want, f))
                if effect == "nothing":
                    continue
                if effect == "switch":  # flip it back: the app's data stays as it was
                    again = self._find(after, el.uid, el.bbox)
                    self._back_to(path, want, self._action(again, key) if again is not None else None)
                elif effect == "back":
                    self._back_to(path, want, None)
                elif not self.phone:  # a menu or a dialog closes on Escape; else the app is relaunched
                    self._back_to(path, want, Hotkey("escape"))
                else:
                    self._back_to(path, want, Back())
        return found

    # ---------------------------------------------------------------- the whole app
    def run(self) -> SurveyReport:
        """Survey breadth first, write the documents and the useless list; the report says what was done."""
        t0 = time.perf_counter()
        start = self.obs = self._relaunch()
        known = {_signature(start)}
        queue: deque[tuple[list[Step], Observation, str, Finding | None]] = deque([([], start, "", None)])
        while queue:
            path, screen, parent_sig, opener = queue.popleft()
            want = _signature(screen)
            try:
                if self.obs is None or _signature(self.obs) != want:
                    self.goto(path, want)
                found = self._survey_screen(path, screen, parent_sig or None, queue, known)
            except _Lost as exc:
                log.warning("survey: skipped a screen at depth %d: %s", len(path) + 1, exc)
                continue
            self.report.screens += 1
            self.report.findings += found
            if opener is not None and found and all(f.effect in ("nothing", "back") for f in found):
                opener.effect = "dead_end"
                opener.doc = opener.doc.replace(OPENS, DEAD_END, 1)
        self.report.relaunches += 1
        self.obs = self._relaunch()  # leave the app where the survey found it: on its launch screen
        self._write()
        self.report.seconds = time.perf_counter() - t0
        return self.report

    def _write(self) -> None:
        for f in self.report.findings:
            if f.doc and f.element is not None:
                self.docs.update(f.element, f.key, f.doc, source=SOURCE)
        if not self.phone:  # a desktop control may change the document, not the screen (Bold): not useless
            return
        for uid in self.report.useless:
            self.docs.mark_useless(uid)


def survey_app(env: Env, docs: DocStore, *, depth: int = DEFAULT_DEPTH,
               relaunch: Callable[[], Observation] | None = None, max_actions: int = DEFAULT_MAX_ACTIONS) -> SurveyReport:
    """Survey the app on ``env`` into ``docs`` (see the module docstring)."""
    return Survey(env, docs, depth=depth, relaunch=relaunch, max_actions=max_actions).run()


# -- on a phone ------------------------------------------------------------------------------------
def relauncher(env: Env, package: str | None) -> tuple[Callable[[], Observation] | None, str | None]:
    """How a survey gets back to the app's launch screen, and the app's package: on a phone
    (an env with ``launch_app``) force-stop and launch ``package`` (default: the one on screen),
    which also reloads the app's saved data; elsewhere the env's own reset (None)."""
    launch = getattr(env, "launch_app", None)
    if launch is None:
        return None, package
    pkg = package or str(env.reset().info.get("package") or "") or None
    if pkg is None:
        raise ConfigError("no app is on the phone's screen: name the package to survey")

    def relaunch() -> Observation:
        launch(pkg)
        return env.reset()

    return relaunch, pkg


@contextlib.contextmanager
def fake_phone() -> Iterator[Env]:
    """An AndroidEnv on an in-process protocol-level fake adb server (the scripted clock app of
    :mod:`agentlab.envs.testing`), stopped afterwards: the phone the shipped clock documents come from."""
    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb daemon
    from agentlab.envs.android import AndroidEnv
    from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice

    with FakeAdbServer(FakeDevice()) as server:
        env = AndroidEnv(serial=server.device.serial, adb_port=server.port, settle=0.0, retry_delay=0.05)
        try:
            yield env
        finally:
            env.close()


#: two desktop screens whose controls differ in at most this many (role, name) pairs are one screen:
#: a Paste button enabled by a cut, an Undo by an edit, do not make the launch screen another
SAME_SCREEN_SLACK = 2


class SignedDesktop:
    """A desktop env whose observations carry a ``signature``: the survey's "same screen" test.

    Built from the elements' roles and names only (not their states or numbers: a focus moving
    is no new screen), and screens within :data:`SAME_SCREEN_SLACK` pairs of one seen before get
    that screen's signature (the clipboard a Cut filled enables Paste for good, relaunch or not).
    Everything else is the wrapped env's."""

    def __init__(self, env: Env, folder: Path | None = None) -> None:
        self.inner = env
        self._seen: list[frozenset[str]] = []
        #: the survey's own folder: written as ``<files>`` wherever a screen shows it (a file
        #: manager's location, a browser's address bar), so no document holds a temporary path
        self.folder = str(folder) if folder is not None else None
        self._where = re.compile(re.escape(self.folder) + r"(?:/launch-\d+)?") if self.folder else None

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def _signed(self, obs: Observation) -> Observation:
        if self.folder and self._where is not None:
            obs = dataclasses.replace(obs, elements=[
                dataclasses.replace(e, text=self._where.sub("<files>", e.text)) if self.folder in e.text else e
                for e in obs.elements])
        pairs = frozenset(f"{e.role}|{e.text.strip()}" for e in obs.elements)
        same = next((s for s in self._seen if len(s ^ pairs) <= SAME_SCREEN_SLACK), None)
        if same is None:
            self._seen.append(pairs)
            same = pairs
        return dataclasses.replace(obs, info={**obs.info, "signature": "\n".join(sorted(same))})

    def reset(self, task: str = "") -> Observation:
        return self._signed(self.inner.reset(task))

    def observe(self) -> Observation:
        return self._signed(self.inner.observe())

    def step(self, action: Action) -> StepResult:
        res = self.inner.step(action)
        return dataclasses.replace(res, observation=self._signed(res.observation))


@contextlib.contextmanager
def desktop_survey_env(start: ExecTask, folder: Path) -> Iterator[tuple[Env, Callable[[], Observation]]]:
    """The desktop of ``start`` (a synthesized task: its applications open on its files under a
    private Xvfb, as ``agentlab tasks check --gui`` opens one) and how to relaunch it; closed after.

    A relaunch opens the start state afresh in a new folder (new files, new profile, new screen)
    rather than restarting the applications on the old ones: an application killed with unsaved
    changes, or one that crashed (LibreOffice Calc aborts on its Clear button under Xvfb), greets
    the next start on the same profile with a recovery dialog, which is no screen the survey knows."""
    from agentlab.envs.desktop import DesktopEnv
    from agentlab.envs.desktop_task import DesktopTaskEnv, open_desktop_task
    from agentlab.envs.task_env import TaskEnvOptions

    launches = [0]

    def open_fresh() -> DesktopTaskEnv:
        launches[0] += 1
        opened = open_desktop_task(start, folder / f"launch-{launches[0]}", TaskEnvOptions())
        assert isinstance(opened, DesktopTaskEnv) and isinstance(opened.env, DesktopEnv)
        return opened

    current = [open_fresh()]
    env = SignedDesktop(current[0].env, folder)

    def relaunch() -> Observation:
        current[0].close()
        current[0] = open_fresh()
        env.inner = current[0].env
        return env.observe()

    try:
        yield env, relaunch  # type: ignore[misc]  # SignedDesktop stands in for the Env it wraps
    finally:
        current[0].close()
