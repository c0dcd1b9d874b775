"""Synthesized BrowserAgent pairs: a random Chromium profile (its ``Preferences`` and ``Bookmarks``
JSON files, in one of several profile folders) and a request to change a setting, the home or
start-up pages, or the bookmarks, asked as people ask it ("turn off Do Not Track", "bookmark
https://... in my Work folder", "get rid of everything pointing at the staging server").

Why vary the profile folder, the settings present, the bookmark tree and the wording: the adapter
must learn to find the profile file the workspace holds and copy the names and addresses the
request or the bookmark tree gives, not to memorise one path, one key or one sentence. Every
argument a call uses is one the call grammar offers: a setting key from the toolkit's catalogue
or the file, a value or new name the request writes (new names are quoted, addresses written
out), a bookmark or folder name from the ``Bookmarks`` file.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import PEOPLE, pick, polite, sample
from agentlab.toolkits.base import json_or_text

#: profile folders (relative to the workspace) a Chromium-based browser keeps its files in
PROFILES = (".config/chromium/Default", ".config/google-chrome/Default", "chromium/Default", "profile/Default",
            ".config/chromium/Profile 1", "browser-profile/Default", ".config/BraveSoftware/Brave-Browser/Default",
            "chrome/Default", ".config/google-chrome/Profile 2")
DOMAINS = ("example.com", "example.org", "example.net", "acme.io", "northwind.dev", "contoso.com", "fabrikam.org",
           "initech.net", "globex.io", "harbor.dev")
#: bookmark names and the word their address is made of
SITES = (("Team Wiki", "wiki"), ("Webmail", "mail"), ("Calendar", "calendar"), ("Issue Tracker", "issues"),
         ("Daily News", "news"), ("Weather", "weather"), ("Maps", "maps"), ("Forum", "forum"), ("Dev Blog", "blog"),
         ("Job Board", "jobs"), ("Online Banking", "bank"), ("Cinema Times", "cinema"), ("Sales Dashboard", "dashboard"),
         ("Status Page", "status"), ("Hardware Shop", "shop"), ("Radio Stream", "radio"), ("Podcasts", "podcasts"),
         ("Dictionary", "dictionary"), ("Train Times", "trains"), ("Recipe Box", "recipes"), ("Payroll", "payroll"),
         ("Timesheets", "timesheets"), ("Library Catalog", "library"), ("Gym Schedule", "gym"),
         ("Photo Gallery", "photos"), ("Code Review", "review"), ("Build Server", "ci"), ("Travel Deals", "deals"),
         ("Museum Tickets", "museum"), ("City Council", "council"), ("Expense Reports", "expenses"),
         ("Lunch Menu", "menu"), ("Support Desk", "support"), ("Style Guide", "styleguide"))
#: folder names of the start trees
FOLDERS = ("Work", "Travel", "Reading", "Projects", "Shopping", "Finance", "Music", "Reference", "Kids", "Sports",
           "Health", "School", "Dev", "Cooking", "Hobbies", "Clients", "Research", "Admin", "Weekend", "Tools")
#: names of folders a request makes
NEW_FOLDERS = ("Team", "Travel 2025", "Read Later", "Taxes", "Conference", "Side Projects", "Garden", "Holiday",
               "Courses", "Moving House", "Wedding", "Newsletters", "Vendors", "Onboarding", "Car", "Podcasts to try")
#: new names a bookmark is renamed to
NEW_NAMES = ("Reading list", "Old wiki", "Mail (work)", "Bank", "News digest", "Team board", "Docs home",
             "Weekly report", "Tickets", "Personal mail", "Main dashboard", "Archive", "Favourites", "Do not use",
             "Intranet", "Shared drive", "Quick links", "Help")
#: words put into the addresses of bookmarks a request then removes by that text
MARKERS = ("staging", "intranet", "legacy", "beta", "sandbox", "preview", "oldportal", "tracking", "test-env")
#: start-up / home page addresses
PAGES = ("https://start.{d}/", "https://news.{d}/today", "https://www.{d}/", "https://portal.{d}/home",
         "https://mail.{d}/", "https://calendar.{d}/week", "https://intranet.{d}/", "https://{d}/dashboard",
         "https://search.{d}/", "https://wiki.{d}/start")
SUBDIRS = ("Downloads", "Downloads/browser", "Documents/downloads", "incoming", "Desktop/web", "dl", "Downloads/chrome")
LANGS = ("en-US,en", "de-DE,de,en", "fr-FR,fr,en", "es-ES,es", "nl-NL,nl,en", "it-IT,it", "pt-BR,pt,en", "en-GB,en")

ROOT_NAMES = {"bookmark_bar": "Bookmarks bar", "other": "Other bookmarks", "synced": "Mobile bookmarks"}

#: yes/no settings: key -> (what a request calls the setting, asks that switch it on, asks that switch it off)
BOOLS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "download.prompt_for_download": (
        ("asking where to save downloads",),
        ("Ask me where to save each file{w} before downloading", "Make the browser ask where to save every download",
         "Turn on prompt for download"),
        ("Stop asking where to save downloads", "Save downloads without asking me where each file goes",
         "Turn off prompt for download")),
    "browser.show_home_button": (
        ("the Home button",),
        ("Show the Home button in the toolbar", "Turn the home button on", "Put the Home button back on the toolbar"),
        ("Hide the Home button", "Turn off the home button in the toolbar")),
    "enable_do_not_track": (
        ("Do Not Track",),
        ("Turn on Do Not Track", "Send Do Not Track requests with my browsing traffic", "Switch Do Not Track on"),
        ("Turn off Do Not Track", "Stop sending Do Not Track requests")),
    "safebrowsing.enabled": (
        ("Safe Browsing",),
        ("Turn Safe Browsing on", "Enable Safe Browsing protection"),
        ("Switch off Safe Browsing", "Disable Safe Browsing")),
    "translate.enabled": (
        ("the translation offer",),
        ("Have the browser offer to translate pages in other languages", "Turn page translation offers back on"),
        ("Stop the browser offering to translate pages", "Turn off the offer to translate pages")),
    "credentials_enable_service": (
        ("password saving",),
        ("Let the browser offer to save passwords", "Turn password saving on"),
        ("Stop the browser from offering to save passwords", "Turn off password saving")),
    "autofill.profile_enabled": (
        ("address autofill",),
        ("Turn on autofill for addresses", "Let the browser fill in my address in forms"),
        ("Switch autofill of addresses off", "Stop the browser filling in addresses in forms")),
    "autofill.credit_card_enabled": (
        ("credit card autofill",),
        ("Turn on credit card autofill", "Let the browser fill in saved payment cards"),
        ("Turn off credit card autofill", "Stop the browser from filling in credit card numbers")),
    "search.suggest_enabled": (
        ("search suggestions",),
        ("Turn search suggestions on", "Show search suggestions while I type in the address bar"),
        ("Turn off search suggestions", "Stop showing search suggestions in the address bar")),
    "bookmark_bar.show_on_all_tabs": (
        ("the bookmarks bar on every tab",),
        ("Always show the bookmarks bar", "Show the bookmarks bar on all tabs"),
        ("Only show the bookmarks bar on the new tab page", "Stop showing the bookmarks bar on every tab")),
    "browser.enable_spellchecking": (
        ("spell checking",),
        ("Turn on spell checking", "Check my spelling as I type"),
        ("Turn off spell checking", "Stop underlining spelling mistakes")),
    "profile.block_third_party_cookies": (
        ("third-party cookie blocking",),
        ("Block third-party cookies", "Turn on blocking of third-party cookies"),
        ("Allow third-party cookies again", "Stop blocking third-party cookies")),
}
#: settings with a value: key -> (what a request calls it, how to draw a value the request then writes)
VALUED: dict[str, tuple[str, ...]] = {
    "download.default_directory": ("download folder", "default download location", "downloads directory"),
    "savefile.default_directory": ("default folder for saving pages",),
    "webkit.webprefs.default_font_size": ("default font size", "standard font size"),
    "webkit.webprefs.minimum_font_size": ("minimum font size", "smallest font size"),
    "webkit.webprefs.default_fixed_font_size": ("fixed-width font size", "monospace font size"),
    "intl.accept_languages": ("preferred languages", "accepted languages", "language list"),
    "profile.default_content_setting_values.notifications": ("notifications content setting",),
    "profile.default_content_setting_values.popups": ("pop-up content setting",),
}
SPOKEN_KEYS = tuple(BOOLS) + tuple(VALUED)


def _value_for(rng: random.Random, key: str) -> str:
    """A new value of a valued setting, as the request writes it."""
    if key.endswith("_directory"):
        user = pick(rng, PEOPLE).lower()
        return pick(rng, (f"/home/{user}/{pick(rng, SUBDIRS)}", f"~/{pick(rng, SUBDIRS)}"))
    if key.endswith("minimum_font_size"):
        return str(pick(rng, (6, 8, 9, 10, 11, 12, 14)))
    if key.endswith("font_size"):
        return str(pick(rng, (12, 13, 14, 15, 16, 18, 20, 22, 24)))
    if key == "intl.accept_languages":
        return pick(rng, LANGS)
    return pick(rng, ("1", "2"))  # a content setting: 1 allow, 2 block


# -- start states --------------------------------------------------------------------------------
def _profile(rng: random.Random) -> str:
    return pick(rng, PROFILES)


def _prefs(rng: random.Random, root: Path, profile: str, *, with_keys: tuple[str, ...] = (),
           companion: bool = True) -> tuple[str, dict[str, Any]]:
    """Write a small Chromium ``Preferences`` under ``profile``: a few of the spoken settings
    (``with_keys`` always among them) and some of the housekeeping a real profile holds; often
    a ``Bookmarks`` file next to it (``companion``), as a real profile has."""
    data: dict[str, Any] = {"browser": {"check_default_browser": False},
                            "profile": {"exit_type": pick(rng, ("Normal", "Crashed")), "avatar_index": rng.randint(0, 26)}}
    # in a fixed order: a set's order changes with the process's hash seed, and the draws below follow it
    keys = list(dict.fromkeys([*with_keys, *sample(rng, SPOKEN_KEYS, rng.randint(2, 6))]))
    for key in keys:
        value: Any = rng.random() < 0.5 if key in BOOLS else json_or_text(_value_for(rng, key))
        if key == "intl.accept_languages":
            value = pick(rng, LANGS)
        _put(data, key, value)
    if rng.random() < 0.5:
        home = pick(rng, PAGES).format(d=pick(rng, DOMAINS))
        data["homepage"], data["homepage_is_newtabpage"] = home, rng.random() < 0.4
    if rng.random() < 0.3:
        data["session"] = {"restore_on_startup": pick(rng, (1, 5)), "startup_urls": []}
    if rng.random() < 0.4:
        data["extensions"] = {"ui": {"developer_mode": False}}
    path = f"{profile}/Preferences"
    (root / profile).mkdir(parents=True, exist_ok=True)
    (root / path).write_text(json.dumps(data, separators=(",", ":")) if rng.random() < 0.4
                             else json.dumps(data, indent=3) + "\n", encoding="utf-8")
    if companion and rng.random() < 0.4:
        _marks(rng, root, profile, n_folders=rng.randint(0, 2), companion=False)
    return path, data


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    node = data
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def _get(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _read(root: Path, path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / path).read_text(encoding="utf-8"))
    return data


@dataclass
class Tree:
    """A start ``Bookmarks`` file: where it is and what it holds."""

    path: str
    data: dict[str, Any]
    #: bookmark name -> (folder path such as ``bookmark_bar/Work``, address)
    marks: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: folder name -> folder path
    folders: dict[str, str] = field(default_factory=dict)


def _url(rng: random.Random, slug: str, marker: str | None = None) -> str:
    d = pick(rng, DOMAINS)
    if marker:
        return pick(rng, (f"https://{marker}.{d}/{slug}", f"https://{slug}.{marker}.{d}/", f"http://{marker}-{slug}.{d}/"))
    return pick(rng, (f"https://{slug}.{d}/", f"https://www.{d}/{slug}", f"https://{d}/{slug}/home",
                      f"https://{slug}.{d}/app"))


def _marks(rng: random.Random, root: Path, profile: str, *, n_folders: int = 1, marker: str | None = None,
           n_marked: int = 0, companion: bool = True) -> Tree:
    """Write a Chromium ``Bookmarks`` tree: a few bookmarks and ``n_folders`` folders on the bar
    (one sometimes with a sub-folder), maybe some under Other bookmarks; ``n_marked`` bookmarks
    have ``marker`` in their address; often a ``Preferences`` file next to it (``companion``)."""
    sites = sample(rng, SITES, rng.randint(5, 8) + n_marked)
    folder_names = sample(rng, FOLDERS, n_folders + 2)
    tree = Tree(f"{profile}/Bookmarks", {})
    ids = iter(range(4, 1000))
    stamp = 13300000000000000 + rng.randrange(10**12)

    def url_node(name: str, url: str) -> dict[str, Any]:
        return {"date_added": str(stamp + next(ids)), "guid": f"{rng.getrandbits(64):016x}", "id": str(next(ids)),
                "name": name, "type": "url", "url": url}

    def folder_node(name: str) -> dict[str, Any]:
        return {"children": [], "date_added": str(stamp), "date_modified": "0", "guid": f"{rng.getrandbits(64):016x}",
                "id": str(next(ids)), "name": name, "type": "folder"}

    roots = {r: {**folder_node(ROOT_NAMES[r]), "id": str(i)} for i, r in enumerate(("bookmark_bar", "other", "synced"), 1)}
    spots: list[tuple[str, dict[str, Any]]] = [("bookmark_bar", roots["bookmark_bar"])] * 2
    for i in range(n_folders):
        parent_path, parent = ("other", roots["other"]) if rng.random() < 0.25 else ("bookmark_bar", roots["bookmark_bar"])
        node = folder_node(folder_names[i])
        parent["children"].append(node)
        tree.folders[folder_names[i]] = f"{parent_path}/{folder_names[i]}"
        spots.append((tree.folders[folder_names[i]], node))
    if rng.random() < 0.3 and n_folders:  # a sub-folder
        path, parent = spots[-1]
        name = folder_names[n_folders]
        node = folder_node(name)
        parent["children"].append(node)
        tree.folders[name] = f"{path}/{name}"
        spots.append((tree.folders[name], node))
    spots.append(("other", roots["other"]))
    marked = set(range(n_marked))
    for i, (name, slug) in enumerate(sites):
        path, node = pick(rng, spots) if i >= len(spots) else spots[i]  # every folder gets one
        url = _url(rng, slug, marker if i in marked else None)
        node["children"].append(url_node(name, url))
        tree.marks[name] = (path, url)
    for _, node in spots:  # folders and bookmarks mixed, as people leave them
        rng.shuffle(node["children"])
    tree.data = {"checksum": f"{rng.getrandbits(128):032x}", "roots": roots, "version": 1}
    (root / profile).mkdir(parents=True, exist_ok=True)
    (root / tree.path).write_text(json.dumps(tree.data, indent=3) + "\n", encoding="utf-8")
    if rng.random() < 0.3:  # the backup Chromium keeps next to it (not the file to edit)
        (root / f"{tree.path}.bak").write_text(json.dumps(tree.data, indent=3) + "\n", encoding="utf-8")
    if companion and rng.random() < 0.4:
        _prefs(rng, root, profile, companion=False)
    return tree


def _walk(node: dict[str, Any], path: str) -> list[tuple[str, dict[str, Any]]]:
    """(folder path, entry) of every entry below ``node``, in order."""
    out = []
    for child in node.get("children", []):
        out.append((path, child))
        if child.get("type") == "folder":
            out += _walk(child, f"{path}/{child.get('name')}")
    return out


def _entries(root: Path, path: str) -> list[tuple[str, dict[str, Any]]]:
    roots = _read(root, path)["roots"]
    return [e for r in ("bookmark_bar", "other", "synced") for e in _walk(roots[r], r)]


def _urls_under(node: dict[str, Any]) -> list[str]:
    return [c["url"] for _, c in _walk(node, "") if c.get("type") == "url"]


def _node(data: dict[str, Any], folder_path: str) -> dict[str, Any]:
    first, *rest = folder_path.split("/")
    node = data["roots"][first]
    for name in rest:
        node = next(c for c in node["children"] if c.get("type") == "folder" and c.get("name") == name)
    return node


# -- wording --------------------------------------------------------------------------------------
def _prefs_where(rng: random.Random, path: str) -> str:
    """How a request says which Preferences file (often not at all: the profile has one)."""
    profile = path.rsplit("/", 1)[0]
    return pick(rng, (f" in {path}", f" ({path})", " in the Chromium Preferences file", f" in the profile at {profile}",
                      " in my browser profile", " in the Preferences file", "", f" in {profile}/Preferences",
                      " in the browser settings", " in the Chromium settings file", " in my browser's preferences",
                      f" in the browser settings ({path})"))


def _marks_where(rng: random.Random, path: str) -> str:
    profile = path.rsplit("/", 1)[0]
    return pick(rng, (f" in {path}", f" ({path})", " in the Bookmarks file", f" in the profile at {profile}", "", "",
                      " in my Chromium bookmarks"))


#: what people say before the ask, sometimes
CONTEXT = ("The browser is closed now. ", "I'm setting up this laptop for a colleague. ", "Quick one: ",
           "Before I restart Chromium, ", "I share this computer with my family. ", "Small favour: ",
           "Chrome is closed. ", "This is the profile I use every day. ")


#: first words of asks that are statements, not commands ("I need ...", "When Chromium starts ..."): not softened
STATEMENT = ("I", "I'd", "When", "My")


def _ask(rng: random.Random, ask: str, where: str) -> str:
    """``ask`` (a sentence starting with its verb) with ``where`` (which file) placed at its
    ``{w}`` or at its end, and worded in one of several ways (a question, a softened command,
    the file first, a bit of context before)."""
    body = ask.replace("{w}", where) if "{w}" in ask else ask + where
    low = body[0].lower() + body[1:]
    r = rng.random()
    if ask.split(" ", 1)[0] in STATEMENT:
        s = body + "."
    elif re.search(r"\S/\S*$", body):  # an address at the end is not followed by "?" (it would read as part of it)
        s = polite(rng, body)
    elif r < 0.12 and where.startswith(" in "):
        bare = ask.replace("{w}", "")
        s = f"In {where[4:]}, {bare[0].lower()}{bare[1:]}."
    elif r < 0.22:
        s = f"Could you {low}?"
    elif r < 0.3:
        s = f"Can you {low}?"
    elif r < 0.36:
        s = f"I'd like you to {low}."
    elif r < 0.42:
        s = f"Would you {low}, please?"
    else:
        s = polite(rng, body)
    if rng.random() < 0.2:
        ctx = pick(rng, CONTEXT)
        s = ctx + (s if ctx.endswith(". ") or s.startswith(("I ", "I'")) else s[0].lower() + s[1:])
    return s


# -- settings -------------------------------------------------------------------------------------
def set_preference(rng: random.Random, root: Path) -> Draft:
    key = pick(rng, SPOKEN_KEYS)
    path, data = _prefs(rng, root, _profile(rng))
    where = _prefs_where(rng, path)
    if key in BOOLS:
        names, on, off = BOOLS[key]
        want = not bool(_get(data, key)) if rng.random() < 0.8 else rng.random() < 0.5
        value = "true" if want else "false"
        r = rng.random()
        if r < 0.15:
            ask = f"Set {key} to {value}"
        elif r < 0.25:
            ask = pick(rng, (f"Turn {names[0]} {'on' if want else 'off'}", f"Switch {'on' if want else 'off'} {names[0]}"))
        else:
            ask = pick(rng, on if want else off)
    else:
        value = _value_for(rng, key)
        spoken = pick(rng, VALUED[key])
        if "content_setting" in key:
            what = "notifications" if key.endswith("notifications") else "pop-ups"
            verb = "Allow" if value == "1" else "Block"
            ask = pick(rng, (f"{verb} {what} on all sites by default: set the {spoken} to {value}",
                             f"Set {key} to {value}",
                             f"Change the default {spoken} to {value} ({verb.lower()} {what} everywhere)"))
        elif key.endswith("_directory"):
            if value.startswith("~"):  # a home path is written in quotes
                value_said = pick(rng, (f"'{value}'", f'"{value}"'))
            else:
                value_said = value
            ask = pick(rng, (f"Set the {spoken} to {value_said}", f"Change the {spoken} to {value_said}",
                             f"Make {value_said} the {spoken}", f"Save downloads to {value_said} from now on"
                             if key.startswith("download") else f"Use {value_said} as the {spoken}"))
        elif key == "intl.accept_languages":
            ask = pick(rng, (f"Set the {spoken} to '{value}'", f"Change the {spoken} to \"{value}\"",
                             f"Set intl.accept_languages to '{value}'"))
        else:
            ask = pick(rng, (f"Set the {spoken} to {value}", f"Change the {spoken} to {value}",
                             f"Make the {spoken} {value}", f"I find the text hard to read; set the {spoken} to {value}"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        got = _get(_read(r, path), key)
        return None if got == json_or_text(value) else f"{key} is {got!r}"

    return Draft(s, (("set_preference", (path, key, value)),), check, "browser.set_preference")


def remove_preference(rng: random.Random, root: Path) -> Draft:
    key = pick(rng, SPOKEN_KEYS)
    path, _ = _prefs(rng, root, _profile(rng), with_keys=(key,))
    spoken = BOOLS[key][0][0] if key in BOOLS else pick(rng, VALUED[key])
    where = _prefs_where(rng, path)
    ask = pick(rng, (f"Remove the {spoken} setting", f"Delete the {key} entry{{w}} so the browser uses its default",
                     f"Reset {spoken}{{w}} to the browser's default by removing the setting",
                     f"Drop the custom {spoken} value", f"Remove {key}"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        return None if _get(_read(r, path), key) is None else f"{key} still set"

    return Draft(s, (("remove_preference", (path, key)),), check, "browser.remove_preference")


def set_homepage(rng: random.Random, root: Path) -> Draft:
    path, data = _prefs(rng, root, _profile(rng))
    url = pick(rng, [p.format(d=d) for p in PAGES for d in DOMAINS if p.format(d=d) != data.get("homepage")])
    where = _prefs_where(rng, path)
    button = rng.random() < 0.15
    if button:
        ask = pick(rng, (f"Make {url} my home page and show the Home button",
                         f"Set the home page to {url}, and turn the home button on",
                         f"Make the browser open {url}{{w}} when I press the Home button (show that button too)"))
        calls: tuple[tuple[str, tuple[Any, ...]], ...] = (
            ("set_homepage", (path, url)), ("set_preference", (path, "browser.show_home_button", "true")))
    else:
        ask = pick(rng, (f"Set the homepage to {url}", f"Make {url} my home page", f"Change the browser's home page to {url}",
                         f"Use {url} as the home page instead of the new tab page",
                         f"Make the browser open {url} when I press Home"))
        calls = (("set_homepage", (path, url)),)
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        got = _read(r, path)
        if got.get("homepage") != url or got.get("homepage_is_newtabpage") is not False:
            return f"homepage is {got.get('homepage')!r} (new tab page: {got.get('homepage_is_newtabpage')!r})"
        if button and _get(got, "browser.show_home_button") is not True:
            return "home button not shown"
        return None

    return Draft(s, calls, check, "browser.set_homepage")


def set_startup_pages(rng: random.Random, root: Path) -> Draft:
    path, _ = _prefs(rng, root, _profile(rng))
    pages = sample(rng, [p.format(d=pick(rng, DOMAINS)) for p in PAGES], 1 if rng.random() < 0.6 else 2)
    where = _prefs_where(rng, path)
    if len(pages) == 1:
        url = pages[0]
        value = url
        ask = pick(rng, (f"Open {url} when the browser starts", f"Make {url} the start-up page",
                         f"Set the startup page to {url}", f"Have the browser open {url} every time it starts",
                         f"When Chromium starts, it should open {url}"))
    else:
        sep = pick(rng, (" ", ", "))
        value = sep.join(pages)
        ask = pick(rng, (f"Set the start-up pages to '{value}'", f"Open these pages at startup: \"{value}\"",
                         f"Make the browser open '{value}' whenever it starts"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        got = _read(r, path).get("session", {})
        if got.get("restore_on_startup") != 4 or got.get("startup_urls") != pages:
            return f"session is {got!r}"
        return None

    return Draft(s, (("set_startup_pages", (path, value)),), check, "browser.set_startup_pages")


# -- bookmarks ------------------------------------------------------------------------------------
def _in_folder(rng: random.Random, folder_path: str) -> tuple[str, str]:
    """(the folder argument, how a request says it) for a folder path."""
    root, *rest = folder_path.split("/")
    if rest:
        name = rest[-1]
        return name, pick(rng, (f"in my {name} folder", f"in the {name} folder", f"in the '{name}' folder",
                                f"under {name}"))
    if root == "bookmark_bar":
        return pick(rng, (("Bookmarks bar", pick(rng, ("on the bookmarks bar", "on my bookmarks bar", "in the Bookmarks bar"))),
                          ("bookmark_bar", "in bookmark_bar")))
    if root == "other":
        return "Other bookmarks", pick(rng, ("in Other bookmarks", "under Other bookmarks"))
    return "Mobile bookmarks", "in Mobile bookmarks"


def add_bookmark(rng: random.Random, root: Path) -> Draft:
    profile = _profile(rng)
    tree = _marks(rng, root, profile, n_folders=rng.randint(0, 2))
    name, slug = pick(rng, [s for s in SITES if s[0] not in tree.marks])
    url = _url(rng, slug)
    folder_path = pick(rng, ["bookmark_bar", "bookmark_bar", "other", *tree.folders.values()])
    folder, said = _in_folder(rng, folder_path)
    where = _marks_where(rng, tree.path)
    quoted = pick(rng, (f"'{name}'", f'"{name}"'))
    ask = pick(rng, (f"Bookmark {url} as {quoted} {said}", f"Add a bookmark {quoted} for {url} {said}",
                     f"Add {url} to my bookmarks {said}{{w}} and call it {quoted}",
                     f"Save {url} as a bookmark named {quoted} {said}"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        got = [(p, e.get("url")) for p, e in _entries(r, tree.path) if e.get("name") == name]
        return None if got == [(folder_path, url)] else f"bookmark {name!r}: {got!r}"

    return Draft(s, (("add_bookmark", (tree.path, name, url, folder)),), check, "browser.add_bookmark")


def add_bookmark_folder(rng: random.Random, root: Path) -> Draft:
    profile = _profile(rng)
    tree = _marks(rng, root, profile, n_folders=rng.randint(0, 2))
    name = pick(rng, [f for f in NEW_FOLDERS if f not in tree.folders and f not in tree.marks])
    parent_path = pick(rng, ["bookmark_bar", "bookmark_bar", "other", *tree.folders.values()])
    parent, said = _in_folder(rng, parent_path)
    quoted = pick(rng, (f"'{name}'", f'"{name}"', name if " " not in name else f"'{name}'"))
    where = _marks_where(rng, tree.path)
    ask = pick(rng, (f"Make a bookmarks folder called {quoted} {said}", f"Create a new bookmark folder {quoted} {said}",
                     f"Add a folder named {quoted} to my bookmarks, {said}",
                     f"I need an empty bookmark folder {quoted} {said}"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        got = [(p, e.get("children")) for p, e in _entries(r, tree.path) if e.get("name") == name]
        return None if got == [(parent_path, [])] else f"folder {name!r}: {got!r}"

    return Draft(s, (("add_bookmark_folder", (tree.path, name, parent)),), check, "browser.add_bookmark_folder")


def rename_bookmark(rng: random.Random, root: Path) -> Draft:
    tree = _marks(rng, root, _profile(rng), n_folders=rng.randint(0, 2))
    folder = rng.random() < 0.25 and bool(tree.folders)
    old = pick(rng, list(tree.folders) if folder else list(tree.marks))
    new = pick(rng, [n for n in NEW_NAMES if n not in tree.marks and n not in tree.folders])
    kind = "folder" if folder else "bookmark"
    where = _marks_where(rng, tree.path)
    ask = pick(rng, (f"Rename the {kind} \"{old}\" to \"{new}\"", f"Rename my '{old}' {kind} to '{new}'",
                     f"Change the name of the {old} {kind} to '{new}'", f"Give the '{old}' {kind} the new name '{new}'"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        names = [e.get("name") for _, e in _entries(r, tree.path)]
        return None if old not in names and names.count(new) == 1 else f"names are {names!r}"

    return Draft(s, (("rename_bookmark", (tree.path, old, new)),), check, "browser.rename_bookmark")


def remove_bookmark(rng: random.Random, root: Path) -> Draft:
    tree = _marks(rng, root, _profile(rng), n_folders=rng.randint(0, 2))
    folder = rng.random() < 0.25 and bool(tree.folders)
    name = pick(rng, list(tree.folders) if folder else list(tree.marks))
    where = _marks_where(rng, tree.path)
    if folder:
        ask = pick(rng, (f"Delete the {name} bookmark folder{{w}} with everything in it",
                         f"Remove my '{name}' bookmarks folder", f"Get rid of the {name} folder in my bookmarks"))
    else:
        ask = pick(rng, (f"Delete the bookmark \"{name}\"", f"Remove the '{name}' bookmark",
                         f"I don't use the {name} bookmark any more; delete it{{w}}",
                         f"Delete the {name} bookmark"))
    s = _ask(rng, ask, where)
    before = len(_entries(root, tree.path))
    inside = tree.folders[name] if folder else "\0"
    gone = 1 + len([m for m in tree.marks.values() if m[0] == inside or m[0].startswith(inside + "/")]) \
        + len([f for f in tree.folders.values() if f.startswith(inside + "/")])

    def check(r: Path) -> str | None:
        entries = _entries(r, tree.path)
        if any(e.get("name") == name for _, e in entries):
            return f"{name!r} still there"
        return None if len(entries) == before - gone else f"{before - len(entries)} entries removed, not {gone}"

    return Draft(s, (("remove_bookmark", (tree.path, name)),), check, "browser.remove_bookmark")


def remove_bookmarks_matching(rng: random.Random, root: Path) -> Draft:
    marker = pick(rng, MARKERS)
    tree = _marks(rng, root, _profile(rng), n_folders=rng.randint(0, 2), marker=marker, n_marked=rng.randint(1, 3))
    where = _marks_where(rng, tree.path)
    said = marker
    ask = pick(rng, (f"Delete every bookmark that points at the {said} server",
                     f"Remove all bookmarks with '{marker}' in their address",
                     f"Get rid of any bookmark whose URL contains \"{marker}\"",
                     f"Clean out the {said} links from my bookmarks{{w}}, wherever they are",
                     f"Remove every bookmark containing {marker}"))
    s = _ask(rng, ask, where)
    keep = sorted(n for n, (_, u) in tree.marks.items() if marker not in u and marker not in n.lower())

    def check(r: Path) -> str | None:
        left = sorted(e["name"] for _, e in _entries(r, tree.path) if e.get("type") == "url")
        return None if left == keep else f"left {left!r}, want {keep!r}"

    return Draft(s, (("remove_bookmarks_matching", (tree.path, marker)),), check, "browser.remove_bookmarks_matching")


def move_bookmark(rng: random.Random, root: Path) -> Draft:
    tree = _marks(rng, root, _profile(rng), n_folders=rng.randint(1, 2))
    move_folder = rng.random() < 0.3
    if move_folder:
        name = pick(rng, list(tree.folders))
        src = tree.folders[name].rsplit("/", 1)[0]
        inside = tree.folders[name]
        targets = [p for p in ["bookmark_bar", "other", *tree.folders.values()]
                   if p != src and p != inside and not p.startswith(inside + "/")]
    else:
        name = pick(rng, list(tree.marks))
        src = tree.marks[name][0]
        targets = [p for p in ["bookmark_bar", "other", *tree.folders.values()] if p != src]
    dest_path = pick(rng, targets)
    dest, said = _in_folder(rng, dest_path)
    said = said.replace("in ", "into ", 1) if said.startswith("in ") else said
    kind = "bookmark folder" if move_folder else "bookmark"
    where = _marks_where(rng, tree.path)
    to = said.replace("into ", "to ", 1) if said.startswith("into ") else said
    src_name = src.rsplit("/", 1)[-1]
    origin = {"bookmark_bar": pick(rng, ("the bar", "the bookmarks bar")), "other": "Other bookmarks",
              "synced": "Mobile bookmarks"}.get(src, f"the {src_name} folder")
    ask = pick(rng, (f"Move the \"{name}\" {kind} {said}", f"Move my '{name}' {kind}{{w}} {said}",
                     f"Move the {name} {kind} from {origin} {to}", f"Relocate the '{name}' {kind} {to}",
                     f"I want the '{name}' {kind} moved {said}",
                     f"The {name} {kind} belongs {said.replace('into ', 'in ', 1)}{{w}}; move it there"))
    s = _ask(rng, ask, where)

    def check(r: Path) -> str | None:
        got = [p for p, e in _entries(r, tree.path) if e.get("name") == name]
        return None if got == [dest_path] else f"{name!r} is in {got!r}"

    return Draft(s, (("move_bookmark", (tree.path, name, dest)),), check, "browser.move_bookmark")


def export_bookmark_urls(rng: random.Random, root: Path) -> Draft:
    tree = _marks(rng, root, _profile(rng), n_folders=rng.randint(1, 2))
    folder_path = pick(rng, ["bookmark_bar", *tree.folders.values()])
    folder, said = _in_folder(rng, folder_path)
    out = pick(rng, ("links.txt", "urls.txt", "bookmarks.txt", "addresses.txt", "bookmark_urls.txt", "links.md",
                     "export.txt", "sites.csv", f"{folder_path.rsplit('/', 1)[-1].lower()}_links.txt"))
    where = _marks_where(rng, tree.path)
    things = pick(rng, ("the addresses of the bookmarks", "the URLs of everything", "all the bookmark URLs",
                        "the links"))
    ask = pick(rng, (f"Export {things} {said}{{w}} to {out}", f"Write {things} {said}{{w}} into {out}, one per line",
                     f"Make a list of {things} {said}{{w}} in {out}",
                     f"Put {things} I have {said}{{w}} in a text file called {out}"))
    s = _ask(rng, ask, where)
    want = _urls_under(_node(tree.data, folder_path))

    def check(r: Path) -> str | None:
        f = r / out
        if not f.is_file():
            return f"{out} missing"
        got = f.read_text(encoding="utf-8").splitlines()
        return None if got == want else f"{out} holds {got!r}, want {want!r}"

    return Draft(s, (("export_bookmark_urls", (tree.path, out, folder)),), check, "browser.export_bookmark_urls")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    set_preference, remove_preference, set_homepage, set_startup_pages, add_bookmark, add_bookmark_folder,
    rename_bookmark, remove_bookmark, remove_bookmarks_matching, move_bookmark, export_bookmark_urls)}
