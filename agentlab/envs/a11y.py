"""The accessibility tree of an X desktop as numbered UI elements, for the desktop env.

pyatspi only exists for the system Python, so the tree is read by
:mod:`agentlab.envs.a11y_walker` in a ``/usr/bin/python3`` subprocess (on the display's
session bus, with a timeout and node/depth caps) and comes back as JSON. This module turns
those nodes into :class:`~agentlab.envs.base.Element` records: interactive widgets (buttons,
menus, tabs, check boxes...) as clickable, text fields and editable documents as focusable,
each with its screen box, role and accessible name, numbered top-to-bottom, left-to-right.

LibreOffice's GTK3 plugin reports the boxes of its own (VCL) widgets shifted up by the height
of the GTK menu bar; :func:`fix_vcl_offsets` corrects that, found on this machine with
LibreOffice 7.4 under Xvfb (see ``docs/desktop.md``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentlab.envs.base import Element
from agentlab.errors import EnvironmentUnavailableError

log = logging.getLogger(__name__)

WALKER = Path(__file__).with_name("a11y_walker.py")
SYSTEM_PYTHON = "/usr/bin/python3"

#: Roles an agent clicks.
CLICKABLE_ROLES = frozenset({
    "push button", "toggle button", "check box", "radio button", "menu", "menu item",
    "check menu item", "radio menu item", "page tab", "link", "combo box", "list item",
    "tree item", "icon", "push button menu", "table column header", "table row header",
})
#: Roles an agent types into.
INPUT_ROLES = frozenset({"text", "entry", "password text", "spin button", "editbar", "terminal"})
#: Containers never shown as elements even when they expose an action (LibreOffice's toolbar
#: panels do): clicking their centre rarely means anything.
CONTAINER_ROLES = frozenset({
    "application", "frame", "window", "dialog", "panel", "filler", "root pane", "layered pane",
    "scroll pane", "viewport", "tool bar", "menu bar", "status bar", "separator", "split pane",
    "page tab list", "scroll bar", "unknown", "redundant object", "invalid", "glass pane",
    "internal frame", "option pane", "desktop frame",
})
CLICK_ACTIONS = frozenset({"click", "press", "activate", "jump", "toggle"})


@dataclass(frozen=True)
class A11yNode:
    """One accessible object as the walker reported it (boxes in screen pixels)."""

    path: tuple[int, ...]
    depth: int
    app: str
    role: str
    name: str
    bbox: tuple[int, int, int, int] | None
    states: frozenset[str]
    actions: tuple[str, ...] = ()
    text: str | None = None
    child_count: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> A11yNode:
        b = d.get("bbox")
        return cls(
            path=tuple(int(i) for i in d.get("path", ())),
            depth=int(d.get("depth", 0)),
            app=str(d.get("app", "")),
            role=str(d.get("role", "")),
            name=str(d.get("name") or ""),
            bbox=(int(b[0]), int(b[1]), int(b[2]), int(b[3])) if b else None,
            states=frozenset(d.get("states", ())),
            actions=tuple(a for a in d.get("actions", ()) if a),
            text=d.get("text"),
            child_count=int(d.get("child_count", 0)),
        )

    @property
    def area(self) -> int:
        if self.bbox is None:
            return 0
        return max(0, self.bbox[2] - self.bbox[0]) * max(0, self.bbox[3] - self.bbox[1])

    def shifted(self, dx: int, dy: int) -> A11yNode:
        if self.bbox is None or (dx == 0 and dy == 0):
            return self
        x1, y1, x2, y2 = self.bbox
        return A11yNode(self.path, self.depth, self.app, self.role, self.name, (x1 + dx, y1 + dy, x2 + dx, y2 + dy),
                        self.states, self.actions, self.text, self.child_count)


@dataclass
class A11yTree:
    """The walk's result: nodes in document order, plus how the walk went."""

    nodes: list[A11yNode] = field(default_factory=list)
    apps: list[str] = field(default_factory=list)
    truncated: bool = False
    elapsed_s: float = 0.0


@lru_cache(maxsize=4)
def pyatspi_available(python: str = SYSTEM_PYTHON) -> str | None:
    """None when the system Python can import pyatspi, else why not (for info and skips)."""
    if not Path(python).exists():
        return f"{python} not found (pyatspi is a Debian package for the system Python)"
    try:
        r = subprocess.run([python, "-c", "import pyatspi"], capture_output=True, text=True, timeout=20,
                           env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run {python}: {exc}"
    if r.returncode != 0:
        return "pyatspi is not installed for the system Python (apt-get install python3-pyatspi at-spi2-core)"
    return None


def _walker_env(env: dict[str, str]) -> dict[str, str]:
    """The display's environment for the system Python: drop the venv's Python settings."""
    out = {k: v for k, v in env.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"}
    out["PATH"] = "/usr/bin:/bin"
    return out


def run_walker(args: list[str], env: dict[str, str], timeout_s: float, python: str = SYSTEM_PYTHON) -> dict[str, Any]:
    """Run one walker command; errors become :class:`EnvironmentUnavailableError` lines."""
    if "DBUS_SESSION_BUS_ADDRESS" not in env:
        # Without a bus libdbus would auto-launch one per call and leave it running.
        raise EnvironmentUnavailableError("no session D-Bus (DBUS_SESSION_BUS_ADDRESS unset): accessibility tree unavailable")
    reason = pyatspi_available(python)
    if reason:
        raise EnvironmentUnavailableError(reason)
    try:
        r = subprocess.run([python, str(WALKER), *args], env=_walker_env(env), capture_output=True, text=True,
                           timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise EnvironmentUnavailableError(f"accessibility walk took longer than {timeout_s:.0f}s") from None
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {}
    except json.JSONDecodeError:
        out = {}
    if not out:
        raise EnvironmentUnavailableError(f"accessibility walker failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    if "error" in out:
        raise EnvironmentUnavailableError(f"accessibility walker: {out['error']}")
    return out


def walk_tree(env: dict[str, str], *, app: str = "", max_depth: int = 25, max_nodes: int = 3000,
              max_children: int = 300, timeout_s: float = 20.0) -> A11yTree:
    """The accessibility tree of every application on ``env``'s display (or those whose name
    contains ``app``, or one of its ``|``-separated parts). A container with more than ``max_children`` children (a spreadsheet's
    cell table) is recorded but not entered."""
    t0 = time.monotonic()
    deadline = max(1.0, timeout_s - 3.0)  # leave the walker time to print what it has
    out = run_walker(["walk", "--app", app, "--max-depth", str(max_depth), "--max-nodes", str(max_nodes),
                      "--max-children", str(max_children), "--deadline", str(deadline)], env, timeout_s)
    nodes = fix_vcl_offsets([A11yNode.from_json(n) for n in out.get("nodes", [])])
    tree = A11yTree(nodes, list(out.get("apps", [])), bool(out.get("truncated")), time.monotonic() - t0)
    log.debug("a11y walk: %d nodes, %d apps, %.2fs", len(nodes), len(tree.apps), tree.elapsed_s)
    return tree


def fix_vcl_offsets(nodes: list[A11yNode]) -> list[A11yNode]:
    """Undo LibreOffice/gtk3's shifted boxes.

    The VCL "root pane" under a GTK menu bar reports its origin at the window's top instead
    of below the menu bar, and so does everything VCL draws inside it; GTK widgets embedded
    in VCL (the Name Box, font boxes) report true positions again. So: inside a root pane
    whose origin differs from its parent's, shift by the difference, until a child reports
    exactly its parent's box moved by that shift (an embedded GTK widget): from there on,
    boxes are true.
    """
    by_path = {n.path: n for n in nodes}
    shift: dict[tuple[int, ...], tuple[int, int]] = {}
    out: list[A11yNode] = []
    for n in nodes:
        parent = by_path.get(n.path[:-1])
        dx, dy = shift.get(n.path[:-1], (0, 0))
        if n.role == "root pane" and parent is not None and parent.bbox and n.bbox:
            pdx, pdy = parent.bbox[0] - n.bbox[0], parent.bbox[1] - n.bbox[1]
            if (pdx, pdy) != (0, 0) and pdx >= 0 and pdy >= 0:
                dx, dy = pdx, pdy
        elif (dx, dy) != (0, 0) and parent is not None and parent.bbox and n.bbox:
            moved = (parent.bbox[0] + dx, parent.bbox[1] + dy, parent.bbox[2] + dx, parent.bbox[3] + dy)
            if n.bbox == moved:
                dx, dy = 0, 0
        shift[n.path] = (dx, dy)
        out.append(n.shifted(dx, dy))
    return out


def _label(n: A11yNode) -> str:
    content = (n.text or "").strip()
    if n.role in INPUT_ROLES or "editable" in n.states:
        if n.name and content:
            return f"{n.name}: {content}"
        return n.name or content
    return n.name or content


def _on_screen(b: tuple[int, int, int, int], size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    x1, y1, x2, y2 = max(b[0], 0), max(b[1], 0), min(b[2], size[0]), min(b[3], size[1])
    if x2 - x1 < 2 or y2 - y1 < 2:
        return None
    return x1, y1, x2, y2


def nodes_to_elements(nodes: list[A11yNode], screen: tuple[int, int],
                      max_elements: int = 200) -> tuple[list[Element], list[A11yNode]]:
    """Interactive, showing, enabled nodes as numbered Elements, and the node behind each one
    (so the env can ask AT-SPI to act on it, e.g. select text)."""
    hidden: set[tuple[int, ...]] = set()
    picked: list[tuple[A11yNode, tuple[int, int, int, int], bool, bool]] = []
    for n in nodes:
        if any(n.path[:k] in hidden for k in range(1, len(n.path))):
            continue
        if n.depth > 1 and (n.bbox is None or n.area == 0) and n.role in CONTAINER_ROLES:
            hidden.add(n.path)  # a zero-size container clips everything in it
            continue
        if n.bbox is None or "showing" not in n.states or not (n.states & {"enabled", "sensitive"}):
            continue
        box = _on_screen(n.bbox, screen)
        if box is None:
            continue
        editable = "editable" in n.states
        is_input = n.role in INPUT_ROLES or (editable and n.role not in CONTAINER_ROLES)
        clickable = not is_input and n.role not in CONTAINER_ROLES and (
            n.role in CLICKABLE_ROLES or bool(CLICK_ACTIONS & set(n.actions)))
        if not (clickable or is_input):
            continue
        picked.append((n, box, clickable, is_input or "focusable" in n.states))
    # An element nested in another with the same box adds nothing: keep the deepest one.
    boxes: dict[tuple[int, int, int, int], int] = {}
    for i, (_n, box, _, _) in enumerate(picked):
        boxes[box] = i
    kept = [picked[i] for i in sorted(boxes.values())]
    kept.sort(key=lambda t: (t[1][1], t[1][0]))
    kept = kept[:max_elements]
    elements = []
    sources = []
    for i, (n, box, clickable, focusable) in enumerate(kept, start=1):
        label = _label(n)
        uid = f"{n.app}:{n.role}:{n.name}" if n.name else f"{n.app}:{n.role}:{box[2] - box[0]}x{box[3] - box[1]}"
        elements.append(Element(id=i, bbox=box, role=n.role, text=label, resource_id=None,
                                clickable=clickable, focusable=focusable, uid=uid))
        sources.append(n)
    return elements, sources


def tree_text(tree: A11yTree, max_lines: int = 40) -> str:
    """A short text view for the observation: window titles and visible label text."""
    lines: list[str] = []
    for n in tree.nodes:
        if n.role in ("frame", "dialog", "alert", "window") and n.name and "showing" in n.states:
            lines.append(f"{n.role.capitalize()}: {n.name}")
        elif n.role in ("label", "status bar", "heading", "paragraph") and "showing" in n.states:
            t = (n.text or n.name or "").strip()
            if t:
                lines.append(f"  {t[:120]}")
        if len(lines) >= max_lines:
            lines.append("  ...")
            break
    return "\n".join(lines)
