"""The browser-profile toolkit (BrowserAgent): a Chromium profile's ``Preferences`` and ``Bookmarks``.

Chromium keeps its settings as one JSON object (``Default/Preferences``, nested: the home page
is ``homepage``, the download folder ``download.default_directory``) and its bookmarks as a tree
(``Default/Bookmarks``: roots ``bookmark_bar``, ``other``, ``synced``; folders hold ``children``).
A setting is addressed by its dotted key; a bookmark folder by a root, then folder names
(``bookmark_bar/Work``), or by its name alone when that is unique. The catalogue lists the
settings people ask for most, so they are offered even before the file holds them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, json_or_text, workspace_file

Prefs = Annotated[str, file_slot(".json", names=("Preferences", "Secure Preferences"))]
Marks = Annotated[str, file_slot(".json", names=("Bookmarks",))]
NewFile = Annotated[str, file_slot(".txt", ".csv", ".md", new=True)]
Key = Annotated[str, Slot("setting")]
Value = Annotated[str, Slot("value")]
Item = Annotated[str, Slot("item")]
Text = Annotated[str, Slot("text")]

#: Chromium settings people ask for (dotted keys of ``Preferences``)
KEYS: tuple[str, ...] = (
    "homepage", "homepage_is_newtabpage", "browser.show_home_button", "bookmark_bar.show_on_all_tabs",
    "download.default_directory", "download.prompt_for_download", "session.restore_on_startup",
    "session.startup_urls", "enable_do_not_track", "safebrowsing.enabled", "translate.enabled",
    "credentials_enable_service", "autofill.profile_enabled", "autofill.credit_card_enabled",
    "intl.accept_languages", "webkit.webprefs.default_font_size", "webkit.webprefs.default_fixed_font_size",
    "webkit.webprefs.minimum_font_size", "profile.default_content_setting_values.notifications",
    "profile.default_content_setting_values.cookies", "profile.default_content_setting_values.geolocation",
    "profile.default_content_setting_values.popups", "profile.block_third_party_cookies",
    "search.suggest_enabled", "alternate_error_pages.enabled", "net.network_prediction_options",
    "spellcheck.dictionaries", "browser.enable_spellchecking", "savefile.default_directory",
)
ROOTS = ("bookmark_bar", "other", "synced")


#: the profile files the toolkit reads (a running browser leaves a hundred others: caches, databases)
PROFILE_FILES = ("Bookmarks", "Preferences")


def _describe(path: Path) -> str:
    if path.name not in PROFILE_FILES and path.suffix.lower() != ".json":
        raise ValueError(f"{path.name} is not a browser profile file this toolkit reads")
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return f"{path.as_posix()}: not valid JSON"
    if isinstance(data, dict) and isinstance(data.get("roots"), dict):
        lines = []

        def walk(node: dict[str, Any], depth: int) -> None:
            for child in node.get("children", []):
                pad = "  " * depth
                if child.get("type") == "folder":
                    lines.append(f"{pad}[folder] {child.get('name')}")
                    walk(child, depth + 1)
                else:
                    lines.append(f"{pad}{child.get('name')} <{child.get('url')}>")

        for root in ROOTS:
            node = data["roots"].get(root)
            if isinstance(node, dict):
                lines.append(f"{root} ({node.get('name', root)}):")
                walk(node, 1)
        return f"{path.as_posix()} (bookmarks):\n" + "\n".join(lines)[:900]
    return f"{path.as_posix()} (settings): " + json.dumps(data, indent=1)[:700]


kit = Toolkit("browser", "a Chromium browser profile: its Preferences and Bookmarks files", describe=_describe,
              catalogue=KEYS, examples=(
                  ("Make the browser open https://news.example.org/ when I press Home (profile/Default/Preferences).",
                   "set_homepage('profile/Default/Preferences', 'https://news.example.org/')\n"
                   "set_preference('profile/Default/Preferences', 'browser.show_home_button', 'true')\ndone()"),
                  ("Bookmark https://wiki.example.com/ as 'Wiki' in a new 'Team' folder on the bookmarks bar (Default/Bookmarks).",
                   "add_bookmark_folder('Default/Bookmarks', 'Team', 'bookmark_bar')\n"
                   "add_bookmark('Default/Bookmarks', 'Wiki', 'https://wiki.example.com/', 'Team')\ndone()"),
              ))


def _load(path: str) -> dict[str, Any]:
    p = workspace_file(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise ToolError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ToolError(f"{path} does not hold a JSON object")
    return data


def _save(path: str, data: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(data, indent=3) + "\n", encoding="utf-8")


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    node = data
    *parents, last = key.split(".")
    for part in parents:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
        node = nxt
    node[last] = value


@kit.tool
def set_preference(file: Prefs, key: Key, value: Value) -> str:
    """Change a browser setting or option by its dotted key (e.g. download.prompt_for_download to true); the value is read as JSON when it can be."""
    data = _load(file)
    _set(data, key, json_or_text(value))
    _save(file, data)
    return f"{key} = {json.dumps(json_or_text(value))}"


@kit.tool
def remove_preference(file: Prefs, key: Key) -> str:
    """Remove a setting (the browser then uses its default)."""
    data = _load(file)
    node: Any = data
    *parents, last = key.split(".")
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or last not in node:
        raise ToolError(f"{file} has no setting {key!r}")
    del node[last]
    _save(file, data)
    return f"removed {key}"


@kit.tool
def set_homepage(file: Prefs, url: Value) -> str:
    """Make the home page this address (homepage, and homepage_is_newtabpage false)."""
    data = _load(file)
    _set(data, "homepage", url)
    _set(data, "homepage_is_newtabpage", False)
    _save(file, data)
    return f"homepage = {url!r}"


@kit.tool
def set_startup_pages(file: Prefs, urls: Value) -> str:
    """Open these pages at start-up (one or more addresses separated by spaces or commas): session.restore_on_startup 4 and session.startup_urls."""
    pages = [u for u in urls.replace(",", " ").split() if u]
    if not pages:
        raise ToolError("no address given")
    data = _load(file)
    _set(data, "session.restore_on_startup", 4)
    _set(data, "session.startup_urls", pages)
    _save(file, data)
    return f"start-up pages: {', '.join(pages)}"


# -- bookmarks --------------------------------------------------------------------------------
def _roots(data: dict[str, Any], file: str) -> dict[str, Any]:
    roots = data.get("roots")
    if not isinstance(roots, dict):
        raise ToolError(f"{file} is not a Chromium Bookmarks file (no 'roots')")
    return roots


def _folders(roots: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every folder as (path, node): roots first (``bookmark_bar``), then ``bookmark_bar/Work``."""
    out: list[tuple[str, dict[str, Any]]] = []

    def walk(node: dict[str, Any], path: str) -> None:
        out.append((path, node))
        for child in node.get("children", []):
            if child.get("type") == "folder":
                walk(child, f"{path}/{child.get('name')}")

    for root in ROOTS:
        if isinstance(roots.get(root), dict):
            walk(roots[root], root)
    return out


def _folder(roots: dict[str, Any], folder: str, file: str) -> dict[str, Any]:
    """A folder by path (``bookmark_bar/Work``), root name or display name (``Bookmarks bar``), or its own name."""
    wanted = folder.strip().strip("/")
    folders = _folders(roots)
    for path, node in folders:
        if wanted in (path, node.get("name")) or wanted.casefold() == str(node.get("name", "")).casefold():
            return node
    if wanted.casefold() in ("bar", "bookmarks bar", "toolbar"):
        return roots["bookmark_bar"]
    names = ", ".join(p for p, _ in folders)
    raise ToolError(f"no bookmark folder {folder!r}; the folders are {names}")


def _find(roots: dict[str, Any], name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(parent, entry) of every bookmark or folder called ``name`` (case-insensitive)."""
    hits = []
    for _, node in _folders(roots):
        for child in node.get("children", []):
            if str(child.get("name", "")).casefold() == name.strip().casefold():
                hits.append((node, child))
    return hits


@kit.tool
def add_bookmark(file: Marks, name: Text, url: Value, folder: Item = "bookmark_bar") -> str:
    """Add a bookmark at the end of a folder (bookmark_bar, other, or a folder's name)."""
    data = _load(file)
    node = _folder(_roots(data, file), folder, file)
    node.setdefault("children", []).append({"type": "url", "name": name, "url": url})
    _save(file, data)
    return f"added {name!r} <{url}> to {folder}"


@kit.tool
def add_bookmark_folder(file: Marks, name: Text, parent: Item = "bookmark_bar") -> str:
    """Make a new bookmark folder inside another (bookmark_bar, other, or a folder's name)."""
    data = _load(file)
    node = _folder(_roots(data, file), parent, file)
    if any(c.get("type") == "folder" and c.get("name") == name for c in node.get("children", [])):
        raise ToolError(f"{parent} already has a folder {name!r}")
    node.setdefault("children", []).append({"type": "folder", "name": name, "children": []})
    _save(file, data)
    return f"folder {name!r} made in {parent}"


@kit.tool
def rename_bookmark(file: Marks, name: Item, new_name: Text) -> str:
    """Rename a bookmark or bookmark folder."""
    data = _load(file)
    hits = _find(_roots(data, file), name)
    if not hits:
        raise ToolError(f"no bookmark called {name!r}")
    for _, entry in hits:
        entry["name"] = new_name
    _save(file, data)
    return f"renamed {len(hits)} bookmark(s) {name!r} to {new_name!r}"


@kit.tool
def remove_bookmark(file: Marks, name: Item) -> str:
    """Delete a bookmark (or a whole folder) by its name."""
    data = _load(file)
    hits = _find(_roots(data, file), name)
    if not hits:
        raise ToolError(f"no bookmark called {name!r}")
    for parent, entry in hits:
        parent["children"].remove(entry)
    _save(file, data)
    return f"removed {len(hits)} bookmark(s) called {name!r}"


@kit.tool
def remove_bookmarks_matching(file: Marks, text: Value) -> str:
    """Delete every bookmark whose name or address contains this text (case-insensitive), in every folder."""
    data = _load(file)
    needle, gone = text.casefold(), 0
    for _, node in _folders(_roots(data, file)):
        keep = []
        for child in node.get("children", []):
            hit = child.get("type") == "url" and (needle in str(child.get("name", "")).casefold()
                                                  or needle in str(child.get("url", "")).casefold())
            gone += hit
            if not hit:
                keep.append(child)
        node["children"] = keep
    if not gone:
        raise ToolError(f"no bookmark name or address contains {text!r}")
    _save(file, data)
    return f"removed {gone} bookmark(s) matching {text!r}"


def _inside(node: dict[str, Any], folder: dict[str, Any]) -> bool:
    """Whether ``node`` is somewhere below ``folder`` (moving a folder there would cut it loose)."""
    return any(child is node or _inside(node, child) for child in folder.get("children", [])
               if isinstance(child, dict))


@kit.tool
def move_bookmark(file: Marks, name: Item, folder: Item) -> str:
    """Move a bookmark (or folder) to the end of another folder."""
    data = _load(file)
    roots = _roots(data, file)
    hits = _find(roots, name)
    if not hits:
        raise ToolError(f"no bookmark called {name!r}")
    target = _folder(roots, folder, file)
    for parent, entry in hits:
        if entry is target or _inside(target, entry):
            raise ToolError(f"cannot move {name!r} into itself or one of its own folders")
        parent["children"].remove(entry)
        target.setdefault("children", []).append(entry)
    _save(file, data)
    return f"moved {name!r} to {folder}"


@kit.tool
def export_bookmark_urls(file: Marks, out: NewFile, folder: Item = "bookmark_bar") -> str:
    """Write the addresses of the bookmarks in a folder (and its sub-folders) to a text file, one per line, in order."""
    data = _load(file)
    node = _folder(_roots(data, file), folder, file)
    urls: list[str] = []

    def walk(n: dict[str, Any]) -> None:
        for child in n.get("children", []):
            if child.get("type") == "folder":
                walk(child)
            elif child.get("url"):
                urls.append(str(child["url"]))

    walk(node)
    Path(out).write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    return f"wrote {len(urls)} address(es) to {out}"
