"""Walk the AT-SPI accessibility tree and print it as JSON (runs under the *system* Python).

pyatspi is a Debian package (``python3-pyatspi``) that cannot be installed into a virtualenv,
so :mod:`agentlab.envs.a11y` runs this file with ``/usr/bin/python3`` in a subprocess, on the
display's session bus, with a timeout. It must not import ``agentlab``.

Commands (one JSON object on stdout):

* ``walk`` - ``{"nodes": [...], "truncated": bool, "elapsed_s": float, "apps": [...]}``. Each
  node: ``path`` (child indices from the desktop), ``depth``, ``app``, ``role``, ``name``,
  ``text`` (editable/text content, clipped), ``bbox`` [x1, y1, x2, y2] in screen pixels,
  ``states`` and ``actions``. Subtrees that are not showing are skipped (in a web page, only
  those not visible either); containers with more
  than ``--max-children`` children (a spreadsheet's cell table has billions) are recorded but
  not entered; the walk stops at ``--max-nodes`` nodes, ``--max-depth`` or ``--deadline`` s.
* ``select PATH START END`` - select characters [START, END) of the text node at PATH.
* ``do PATH ACTION`` - invoke a named action (``click``, ``press``, ``activate``) on PATH.
* ``focused PATH --wait S`` - whether the node at PATH has keyboard focus, polled for up to S
  seconds: ``{"focused": bool, "role": str, "name": str}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

#: the roles of a web page's root: below one, a node that is not showing may hold ones that are
WEB_ROLES = ("document web", "document frame")
KEEP_STATES = ("showing", "visible", "enabled", "sensitive", "focusable", "focused", "editable",
               "selectable", "selected", "checked", "pressed", "expanded", "multi_line", "single_line")


def _states(acc, pyatspi) -> list[str]:
    ss = acc.getState()
    out = []
    for name in KEEP_STATES:
        st = getattr(pyatspi, "STATE_" + name.upper(), None)
        if st is not None and ss.contains(st):
            out.append(name)
    return out


def _bbox(acc, pyatspi) -> list[int] | None:
    try:
        ext = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    except Exception:
        return None
    return [int(ext.x), int(ext.y), int(ext.x + ext.width), int(ext.y + ext.height)]


def _actions(acc) -> list[str]:
    try:
        act = acc.queryAction()
    except Exception:
        return []
    return [act.getName(i) for i in range(min(act.nActions, 8))]


def _text(acc, limit: int) -> str:
    try:
        t = acc.queryText()
    except Exception:
        return ""
    try:
        n = t.characterCount
        return t.getText(0, min(n, limit)) if n > 0 else ""
    except Exception:
        return ""


def _selected_children(acc) -> set[int]:
    """Indices of the children a menu bar or menu has selected (its open menu, in GTK 2)."""
    try:
        sel = acc.querySelection()
        return {sel.getSelectedChild(k).getIndexInParent() for k in range(sel.nSelectedChildren)}
    except Exception:
        return set()


def walk(args: argparse.Namespace) -> dict:
    import pyatspi

    t0 = time.monotonic()
    deadline = t0 + args.deadline
    desktop = pyatspi.Registry.getDesktop(0)
    nodes: list[dict] = []
    apps: list[str] = []
    truncated = False

    def visit(acc, path: list[int], depth: int, app: str, selected: bool = False, in_open_menu: bool = False,
              in_web: bool = False) -> None:
        nonlocal truncated
        if len(nodes) >= args.max_nodes or time.monotonic() > deadline:
            truncated = True
            return
        try:
            role = acc.getRoleName()
            states = _states(acc, pyatspi)
            n_children = acc.childCount
        except Exception:
            return  # the widget went away while we walked
        if depth > 1 and "showing" not in states and in_web and "visible" in states:
            # Chromium takes SHOWING off a page's container once its top is scrolled out of view,
            # not off what is in view inside it: such a subtree is entered (its nodes keep their
            # own states, and only showing ones become elements)
            pass
        elif depth > 1 and "showing" not in states:
            # GTK 2's gail (GIMP 2.10) never sets SHOWING on the items of an open popup menu
            # (and closed ones keep their last screen box): an item of a menu that its menu bar
            # or parent menu has selected -- the open one -- is taken as showing
            box = _bbox(acc, pyatspi) if in_open_menu and "visible" in states else None
            if box is None or box[0] < -10000 or box[1] < -10000 or box[2] - box[0] <= 1:
                return
            states.append("showing")
        node = {"path": path, "depth": depth, "app": app, "role": role, "name": acc.name or "",
                "bbox": _bbox(acc, pyatspi), "states": states, "actions": _actions(acc),
                "child_count": n_children}
        if "editable" in states or role in ("text", "entry", "password text", "label", "paragraph"):
            node["text"] = _text(acc, args.max_text)
        nodes.append(node)
        if depth >= args.max_depth:
            return
        if n_children > args.max_children:
            node["children_skipped"] = True
            return
        open_now = role == "menu" and selected
        chosen = _selected_children(acc) if role in ("menu bar", "menu") else set()
        for i in range(n_children):
            try:
                child = acc.getChildAtIndex(i)
            except Exception:
                continue
            if child is not None:
                visit(child, path + [i], depth + 1, app, i in chosen, open_now, in_web or role in WEB_ROLES)

    for i in range(desktop.childCount):
        try:
            app = desktop.getChildAtIndex(i)
        except Exception:
            continue
        if app is None:
            continue
        name = app.name or ""
        apps.append(name)
        if args.app and not any(part in name.lower() for part in args.app.lower().split("|")):
            continue
        visit(app, [i], 1, name)
    return {"nodes": nodes, "truncated": truncated, "elapsed_s": round(time.monotonic() - t0, 4), "apps": apps}


def _resolve(path: list[int]):
    import pyatspi

    acc = pyatspi.Registry.getDesktop(0)
    for i in path:
        acc = acc.getChildAtIndex(i)
        if acc is None:
            raise LookupError(f"no accessible at path {path}")
    return acc


def select(path: list[int], start: int, end: int) -> dict:
    acc = _resolve(path)
    text = acc.queryText()
    ok = bool(text.setSelection(0, start, end)) if text.getNSelections() > 0 else bool(text.addSelection(start, end))
    return {"ok": ok, "role": acc.getRoleName(), "name": acc.name or ""}


def do_action(path: list[int], name: str) -> dict:
    acc = _resolve(path)
    act = acc.queryAction()
    names = [act.getName(i) for i in range(act.nActions)]
    if name not in names:
        return {"ok": False, "error": f"no action {name!r}; has {names}"}
    return {"ok": bool(act.doAction(names.index(name)))}


def focused(path: list[int], wait_s: float) -> dict:
    import pyatspi

    acc = _resolve(path)
    deadline = time.monotonic() + wait_s
    while True:
        has = acc.getState().contains(pyatspi.STATE_FOCUSED)
        if has or time.monotonic() >= deadline:
            return {"focused": bool(has), "role": acc.getRoleName(), "name": acc.name or ""}
        time.sleep(0.05)


def main() -> None:
    ap = argparse.ArgumentParser(description="AT-SPI tree as JSON")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("walk")
    w.add_argument("--app", default="", help="only applications whose name contains this (or one of its |-separated parts)")
    w.add_argument("--max-depth", type=int, default=25)
    w.add_argument("--max-nodes", type=int, default=3000)
    w.add_argument("--max-children", type=int, default=300)
    w.add_argument("--max-text", type=int, default=500)
    w.add_argument("--deadline", type=float, default=8.0)
    s = sub.add_parser("select")
    s.add_argument("path")
    s.add_argument("start", type=int)
    s.add_argument("end", type=int)
    d = sub.add_parser("do")
    d.add_argument("path")
    d.add_argument("action")
    f = sub.add_parser("focused")
    f.add_argument("path")
    f.add_argument("--wait", type=float, default=0.0)
    args = ap.parse_args()
    try:
        if args.cmd == "walk":
            out = walk(args)
        elif args.cmd == "select":
            out = select(json.loads(args.path), args.start, args.end)
        elif args.cmd == "focused":
            out = focused(json.loads(args.path), args.wait)
        else:
            out = do_action(json.loads(args.path), args.action)
    except Exception as exc:  # reported to the parent as one line, never a traceback
        out = {"error": f"{type(exc).__name__}: {exc}"}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
