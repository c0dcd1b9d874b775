"""Per-element documentation written during exploration and read during deployment.

``data/docs/<app>/<element-uid>.json`` holds, per action kind (``tap``, ``long_press``,
``text``, ``v_swipe``, ``h_swipe``; desktop: ``click``...), what doing that to the element
does, how many times it was observed and where the text came from (exploration or a
demonstration). Seeing an element again updates its entry (the reflection prompt is shown
the old text to refine it). ``_useless.json`` lists elements whose action changed nothing;
exploration stops offering them. Files are written atomically.

Element uids are whatever an env makes them: Android resource ids are plain names, but desktop
ids hold colons, spaces, commas, slashes and any script (``demo_gtk.py:push button:Add one``,
``grid:1,2``). :func:`doc_filename` names the file: a uid that is a safe file name is used as it
is (``com.example.clock.id_settings_btn.json``, the layout docs were always written in), any
other uid becomes a readable slug plus a hash of the full uid after ``@``
(``demo_gtk.py_push_button_Add_one@<16 hex>.json``). The full uid is kept inside the file, where
reading checks it.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Type
from agentlab.envs.actions.phone import Swipe, Text
from agentlab.envs.base import Element
from agentlab.errors import ConfigError, DataError
from agentlab.fileio import atomic_write_json
from agentlab.paths import data_dir

USELESS_FILE = "_useless.json"
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")
#: longest uid used as its own file name
MAX_PLAIN = 200
#: characters of an unsafe uid's slug kept in its file name (the hash keeps names apart, not the slug)
SLUG_CHARS = 60
HASH_CHARS = 16


def doc_filename(uid: str) -> str:
    """The file name of an element's documentation, stable and distinct for distinct uids.

    A safe uid (letters, digits, '.', '_', '-'; not starting with '.', '_' or '-'; at most
    :data:`MAX_PLAIN` characters) names its file as it is. Any other gets ``<slug>@<hash>``:
    the slug keeps the safe characters (other runs become one '_', no leading '.' so never
    ``..`` or a hidden file) for people browsing the folder, the hash (sha256 of the whole uid,
    :data:`HASH_CHARS` hex digits) tells apart uids whose slugs agree. Safe uids never contain
    '@', so the two kinds of name never meet.
    """
    if not uid:
        raise DataError("an element without a uid cannot be documented")
    if _SAFE.match(uid) and len(uid) <= MAX_PLAIN:
        return f"{uid}.json"
    slug = _UNSAFE_RUN.sub("_", uid).lstrip("._")[:SLUG_CHARS] or "element"
    digest = hashlib.sha256(uid.encode("utf-8")).hexdigest()[:HASH_CHARS]
    return f"{slug}@{digest}.json"


def doc_key(action: Action) -> str:
    """The documentation slot an action fills (AppAgent splits swipes by axis)."""
    if isinstance(action, Swipe):
        return "v_swipe" if action.direction in ("up", "down") else "h_swipe"
    if isinstance(action, (Text, Type)):
        return "text"
    return action.call_name


@dataclass
class ElementDoc:
    uid: str
    app: str
    docs: dict[str, str] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    label: str = ""  #: last seen role + text, for people reading the file
    updated: float = field(default_factory=time.time)


class DocStore:
    """The documentation of one app."""

    def __init__(self, app: str, root: str | Path | None = None) -> None:
        if not _SAFE.match(app):
            raise ConfigError(f"app name {app!r} must be letters, digits, '.', '_' or '-' (it names a folder)")
        self.app = app
        self.dir = Path(root) if root is not None else data_dir() / "docs"
        self.dir = self.dir / app
        self._cache: dict[str, ElementDoc | None] = {}

    def _file(self, uid: str) -> Path:
        return self.dir / doc_filename(uid)

    def _load(self, path: Path) -> ElementDoc:
        try:
            return ElementDoc(**json.loads(path.read_text("utf-8")))
        except (json.JSONDecodeError, TypeError) as exc:
            raise DataError(f"element documentation is malformed ({exc})", where=path) from None

    def get(self, uid: str) -> ElementDoc | None:
        if uid in self._cache:
            return self._cache[uid]
        path = self._file(uid)
        doc = self._load(path) if path.exists() else None
        if doc is not None and doc.uid != uid:
            raise DataError(f"this file documents element {doc.uid!r}, not {uid!r} (file names collided); "
                            "move one of them away", where=path)
        self._cache[uid] = doc
        return doc

    def update(self, element: Element, key: str, text: str, source: str = "explore") -> ElementDoc:
        """Set (or replace, when refined) the ``key`` documentation of an element."""
        doc = self.get(element.uid) or ElementDoc(uid=element.uid, app=self.app)
        doc.docs[key] = text.strip()
        doc.seen[key] = doc.seen.get(key, 0) + 1
        doc.sources[key] = source
        doc.label = f"{element.role.rsplit('.', 1)[-1]} {element.text}".strip()
        doc.updated = time.time()
        atomic_write_json(self._file(element.uid), asdict(doc))
        self._cache[element.uid] = doc
        return doc

    def useless(self) -> set[str]:
        path = self.dir / USELESS_FILE
        if not path.exists():
            return set()
        try:
            return set(json.loads(path.read_text("utf-8")).get("uids", []))
        except (json.JSONDecodeError, AttributeError) as exc:
            raise DataError(f"useless-element list is malformed ({exc})", where=path) from None

    def mark_useless(self, uid: str) -> None:
        uids = self.useless() | {uid}
        atomic_write_json(self.dir / USELESS_FILE, {"app": self.app, "uids": sorted(uids)})

    def documented(self) -> list[str]:
        """The uids of every documented element (read from the files: names are not uids)."""
        if not self.dir.exists():
            return []
        return sorted({self._load(p).uid for p in self.dir.glob("*.json") if p.name != USELESS_FILE})

    def has_docs(self) -> bool:
        """Whether anything was learned for this app (a document or the useless list)."""
        return self.dir.is_dir() and any(self.dir.glob("*.json"))

    def by_mark(self, elements: list[Element], keys: Collection[str] | None = None) -> dict[int, str]:
        """Each documented on-screen element's documentation as one text (only its ``keys``
        entries when given), by element number: what typed deployment grounds a request on
        (:func:`agentlab.agents.gui_actions.grounding`)."""
        out: dict[int, str] = {}
        for el in elements:
            doc = self.get(el.uid) if el.uid else None
            texts = [v for k, v in (doc.docs.items() if doc else ()) if v and (keys is None or k in keys)]
            if texts:
                out[el.id] = "; ".join(texts)
        return out

    def for_screen(self, elements: list[Element], max_chars: int = 240) -> str:
        """Documentation of the on-screen elements, one line per documented element."""
        lines = []
        for el in elements:
            doc = self.get(el.uid) if el.uid else None
            if doc is None or not doc.docs:
                continue
            parts = "; ".join(f"{k}: {v}" for k, v in doc.docs.items() if v)
            if len(parts) > max_chars:
                parts = parts[: max_chars - 1] + "…"
            lines.append(f"[{el.id}] {parts}")
        return "\n".join(lines)
