"""Getters that read a desktop application's own state files, as OSWorld's getters do.

Each reads what the application itself writes, after it was closed cleanly (the desktop task
env's ``collect()`` quits it first): Chromium's ``Bookmarks`` JSON (its ``Preferences`` are read
with ``json_setting``), Thunderbird's ``prefs.js`` and mbox mail folders, VLC's ``vlcrc``, the
pixels of an image GIMP exported, and the entries of a folder a file manager or a terminal
changed. Registered with :func:`~agentlab.judge.getters.getter` like every getter; paths are
relative to the state folder, and read as every getter reads (never through a symbolic link).
"""

from __future__ import annotations

import email
import email.header
import io
import json
import mailbox
import re
import tempfile
from pathlib import Path
from typing import Any

from agentlab.judge.getters import _MISSING, FinalState, GetterError, getter


# -- Chromium -------------------------------------------------------------------------------
def _bookmark_folder(roots: dict[str, Any], folder: str, path: str) -> dict[str, Any]:
    """``"bookmark_bar"`` or ``"bookmark_bar/Work/Reading"``: a root, then folder names."""
    first, *rest = folder.split("/")
    node = roots.get(first)
    if not isinstance(node, dict):
        raise GetterError(f"{path}: no bookmark root {first!r} (roots: {sorted(roots)})")
    for name in rest:
        sub = [c for c in node.get("children", []) if c.get("type") == "folder" and c.get("name") == name]
        if not sub:
            raise GetterError(f"{path}: no bookmark folder {name!r} in {folder!r}")
        node = sub[0]
    return node


@getter("chrome_bookmarks")
def chrome_bookmarks(state: FinalState, path: str, folder: str = "bookmark_bar", field: str = "name",
                     recursive: bool = False) -> list[Any]:
    """The bookmarks in a folder of Chromium's ``Bookmarks`` file, in order: each one's ``field``
    (``name``, ``url``, or ``"*"`` for ``{"name", "url", "type"}``); folders are listed too (their
    url is None); ``recursive`` also lists what the sub-folders hold, depth first."""
    text = state.read_text(path)
    try:
        data = json.loads(text)
        roots = data["roots"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise GetterError(f"{path}: not a Chromium Bookmarks file ({type(exc).__name__}: {exc})") from None
    out: list[Any] = []

    def walk(node: dict[str, Any]) -> None:
        for child in node.get("children", []):
            item = {"name": child.get("name"), "url": child.get("url"), "type": child.get("type")}
            out.append(item if field == "*" else item.get(field))
            if recursive and child.get("type") == "folder":
                walk(child)

    walk(_bookmark_folder(roots, folder, path))
    return out


# -- Thunderbird ----------------------------------------------------------------------------
_PREF = re.compile(r'^\s*user_pref\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*(.*?)\s*\)\s*;\s*$')


def read_prefs_js(text: str) -> dict[str, Any]:
    """A Gecko ``prefs.js`` (``user_pref("key", value);`` lines) as a dict; a later line wins."""
    prefs: dict[str, Any] = {}
    for line in text.splitlines():
        m = _PREF.match(line)
        if not m:
            continue
        key = json.loads(f'"{m.group(1)}"')
        try:
            prefs[key] = json.loads(m.group(2))
        except json.JSONDecodeError:
            prefs[key] = m.group(2)
    return prefs


@getter("prefs_js")
def prefs_js(state: FinalState, path: str, key: str, default: Any = _MISSING) -> Any:
    """One preference from a Thunderbird (or Firefox) ``prefs.js``; a pref left at its default is
    not written there, so ``default`` gives that value."""
    prefs = read_prefs_js(state.read_text(path, errors="replace"))
    if key in prefs:
        return prefs[key]
    if default is not _MISSING:
        return default
    raise GetterError(f"{path}: no user_pref {key!r}")


#: X-Mozilla-Status flags (nsMsgMessageFlags)
MSG_READ, MSG_FLAGGED, MSG_DELETED = 0x1, 0x4, 0x8


def _header(msg: email.message.Message, name: str) -> str:
    raw = msg.get(name)
    if raw is None:
        return ""
    return str(email.header.make_header(email.header.decode_header(str(raw))))


@getter("mbox_messages")
def mbox_messages(state: FinalState, path: str, field: str = "subject", flag: str | None = None) -> list[Any]:
    """The messages of an mbox mail folder (Thunderbird's ``Mail/Local Folders/Inbox``), in order,
    without those Thunderbird marked deleted (X-Mozilla-Status), as each one's ``field``
    (``subject``, ``from``, ``to``, or ``"*"`` for a dict with the flags); ``flag`` keeps only the
    ``read``, ``unread``, ``flagged`` or ``unflagged`` ones. A folder that does not exist yet is empty
    only when Thunderbird never created it: a missing file is an error."""
    data = state.read_bytes(path)
    out: list[Any] = []
    try:
        with tempfile.TemporaryDirectory(prefix="agentlab-mbox-") as tmp:  # mailbox reads by path: a private copy
            copy = Path(tmp) / "mbox"
            copy.write_bytes(data)
            box = mailbox.mbox(str(copy), create=False)
            messages = list(box)
            box.close()
    except (OSError, mailbox.Error) as exc:
        raise GetterError(f"{path}: not a readable mbox folder ({exc})") from None
    for msg in messages:
        try:
            status = int(str(msg.get("X-Mozilla-Status", "0")).strip() or "0", 16)
        except ValueError:
            status = 0
        if status & MSG_DELETED:
            continue
        item = {"subject": _header(msg, "Subject"), "from": _header(msg, "From"), "to": _header(msg, "To"),
                "read": bool(status & MSG_READ), "flagged": bool(status & MSG_FLAGGED)}
        wanted = {None: True, "read": item["read"], "unread": not item["read"], "flagged": item["flagged"],
                  "unflagged": not item["flagged"]}
        if flag not in wanted:
            raise GetterError(f"mbox_messages: unknown flag {flag!r}; use read, unread, flagged or unflagged")
        if wanted[flag]:
            out.append(item if field == "*" else item.get(field))
    return out


@getter("mail_folders")
def mail_folders(state: FinalState, path: str) -> list[str]:
    """The mail folders in a Thunderbird account directory (``Mail/Local Folders``), sorted: the
    mbox files, with sub-folders as ``Parent/Child`` (Thunderbird keeps them in ``Parent.sbd/``)."""
    try:
        base = state.folder(path)
    except GetterError:
        raise GetterError(f"{path}: no such mail account folder in {state.root}") from None
    out = []
    for e in state.safe.walk(under=base):
        name = e.rel.rsplit("/", 1)[-1]
        if e.kind == "file" and not Path(name).suffix and not name.startswith("."):
            rel = e.rel[len(base) + 1:] if base else e.rel
            out.append(re.sub(r"\.sbd/", "/", rel))
    return sorted(out)


# -- VLC ------------------------------------------------------------------------------------
@getter("vlcrc_setting")
def vlcrc_setting(state: FinalState, path: str, key: str, default: Any = _MISSING) -> str | Any:
    """One option of VLC's ``vlcrc`` (``key=value`` under ``[module]`` sections, as text). VLC
    writes every option, the ones left at their default commented out (``#key=value``): those
    give ``default``. ``key`` may be ``module.key`` to pick the section."""
    section, _, name = key.rpartition(".")
    current = ""
    found: str | None = None
    for line in state.read_text(path, errors="replace").splitlines():
        line = line.strip()
        if line.startswith("[") and "]" in line:
            current = line[1:line.index("]")].strip()
            continue
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, _, v = line.partition("=")
        if k.strip() == name and (not section or current == section):
            found = v.strip()
    if found is not None:
        return found
    if default is not _MISSING:
        return default
    raise GetterError(f"{path}: {key} is not set (commented out or missing)")


# -- images and folders ---------------------------------------------------------------------
@getter("image_pixel")
def image_pixel(state: FinalState, path: str, x: int, y: int) -> list[int]:
    """The RGB colour of one pixel of an image (negative coordinates count from the far edge)."""
    from PIL import Image, UnidentifiedImageError

    data = state.read_bytes(path)
    try:
        with Image.open(io.BytesIO(data)) as im:
            rgb = im.convert("RGB")
            w, h = rgb.size
            px, py = x % w if x < 0 else x, y % h if y < 0 else y
            if not (0 <= px < w and 0 <= py < h):
                raise GetterError(f"{path}: pixel ({x}, {y}) is outside the {w}x{h} image")
            value = rgb.getpixel((px, py))
    except (UnidentifiedImageError, OSError) as exc:
        raise GetterError(f"{path}: not a readable image ({exc})") from None
    assert isinstance(value, tuple)
    return [int(c) for c in value]


@getter("folder_entries")
def folder_entries(state: FinalState, path: str = ".", kind: str = "all", hidden: bool = False) -> list[str]:
    """The names in a folder, sorted (``kind``: ``all``, ``files`` or ``folders``; names starting
    with a dot only with ``hidden``)."""
    base = state.folder(path)
    if kind not in ("all", "files", "folders"):
        raise GetterError(f"folder_entries: kind must be all, files or folders, not {kind!r}")
    out = []
    for entry in state.safe.listdir(base):
        name = entry.rel.rsplit("/", 1)[-1]
        if name.startswith(".") and not hidden:
            continue
        # a link is listed by "all" as the name it is, never followed to say what it points to
        if kind == "all" or (kind == "files" and entry.kind == "file") or (kind == "folders" and entry.kind == "dir"):
            out.append(name)
    return sorted(out)
