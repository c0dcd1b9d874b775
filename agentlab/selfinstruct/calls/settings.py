"""Synthesized VSAgent pairs: a random .vscode/settings.json (and sometimes a launch.json) and a
request to set, remove or extend a setting, named as people say it ("tab size", "word wrap")."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import pick, polite, sample
from agentlab.toolkits.base import json_or_text

SETTINGS = ".vscode/settings.json"
LAUNCH = ".vscode/launch.json"
#: key -> (how a request names it, values it takes as the request writes them)
SPOKEN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "editor.fontSize": (("font size", "editor font size"), ("12", "13", "14", "16", "18", "20")),
    "editor.tabSize": (("tab size", "editor tab size"), ("2", "4", "8")),
    "editor.wordWrap": (("word wrap",), ("on", "off", "bounded")),
    "editor.minimap.enabled": (("minimap",), ("true", "false")),
    "editor.formatOnSave": (("format on save",), ("true", "false")),
    "editor.lineNumbers": (("line numbers",), ("on", "off", "relative")),
    "editor.renderWhitespace": (("render whitespace",), ("all", "none", "boundary", "trailing")),
    "editor.cursorStyle": (("cursor style",), ("line", "block", "underline")),
    "editor.insertSpaces": (("insert spaces",), ("true", "false")),
    "files.autoSave": (("auto save", "autosave"), ("off", "afterDelay", "onFocusChange")),
    "files.autoSaveDelay": (("auto save delay",), ("500", "1000", "2000")),
    "files.trimTrailingWhitespace": (("trim trailing whitespace",), ("true", "false")),
    "files.insertFinalNewline": (("insert final newline",), ("true", "false")),
    "terminal.integrated.fontSize": (("terminal font size",), ("12", "14", "16")),
    "explorer.confirmDelete": (("confirm delete",), ("true", "false")),
}
GLOBS = ("**/build", "**/dist", "**/node_modules", "**/.cache", "**/tmp", "**/*.log", "**/coverage")
LANGUAGES = ("python", "yaml", "markdown", "javascript", "json", "go")


def _start(rng: random.Random, root: Path, launch: bool = False) -> dict[str, Any]:
    (root / ".vscode").mkdir()
    keys = sample(rng, list(SPOKEN), rng.randint(2, 5))
    data: dict[str, Any] = {k: json_or_text(pick(rng, SPOKEN[k][1])) for k in keys}
    if rng.random() < 0.4:
        data["files.exclude"] = {pick(rng, GLOBS): True}
    (root / SETTINGS).write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    if launch:
        cfg = {"version": "0.2.0", "configurations": [
            {"name": "Run file", "type": "debugpy", "request": "launch", "program": "${file}", "console": "integratedTerminal"}]}
        (root / LAUNCH).write_text(json.dumps(cfg, indent=4) + "\n", encoding="utf-8")
    return data


def _read(root: Path, name: str = SETTINGS) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / name).read_text(encoding="utf-8"))
    return data


def set_setting(rng: random.Random, root: Path) -> Draft:
    data = _start(rng, root)
    key = pick(rng, list(SPOKEN))
    spoken = pick(rng, SPOKEN[key][0])
    value = pick(rng, [v for v in SPOKEN[key][1] if json_or_text(v) != data.get(key)])
    where = pick(rng, (f" in {SETTINGS}", " in the VS Code settings", f" ({SETTINGS})", ""))
    s = pick(rng, [f"Set the {spoken} to {value}{where}", f"Change {spoken} to {value}{where}",
                   f"Set {key} to {value}{where}", f"I want {spoken} set to {value}{where}"])

    def check(r: Path) -> str | None:
        got = _read(r).get(key)
        return None if got == json_or_text(value) else f"{key} is {got!r}"

    return Draft(polite(rng, s), (("set_setting", (SETTINGS, key, value)),), check, "settings.set_setting")


def remove_setting(rng: random.Random, root: Path) -> Draft:
    data = _start(rng, root)
    key = pick(rng, [k for k in data if k in SPOKEN])
    spoken = pick(rng, SPOKEN[key][0])
    s = pick(rng, [f"Remove the {spoken} setting from {SETTINGS}", f"Delete {key} from the VS Code settings",
                   f"Drop the {spoken} entry in {SETTINGS} so the default applies"])

    def check(r: Path) -> str | None:
        return None if key not in _read(r) else f"{key} still set"

    return Draft(polite(rng, s), (("remove_setting", (SETTINGS, key)),), check, "settings.remove_setting")


def add_to_setting(rng: random.Random, root: Path) -> Draft:
    data = _start(rng, root)
    key = pick(rng, ("files.exclude", "search.exclude"))
    glob = pick(rng, [g for g in GLOBS if g not in data.get(key, {})])
    where = "from the explorer" if key == "files.exclude" else "from search"
    s = pick(rng, [f"Exclude '{glob}' {where} in {SETTINGS}", f"Add '{glob}' to {key} in {SETTINGS}",
                   f"Hide '{glob}' {where} (VS Code settings)"])

    def check(r: Path) -> str | None:
        got = _read(r).get(key, {})
        return None if isinstance(got, dict) and got.get(glob) is True else f"{key} is {got!r}"

    return Draft(polite(rng, s), (("add_to_setting", (SETTINGS, key, glob)),), check, "settings.add_to_setting")


def set_language_setting(rng: random.Random, root: Path) -> Draft:
    _start(rng, root)
    lang = pick(rng, LANGUAGES)
    key = pick(rng, ("editor.tabSize", "editor.wordWrap", "editor.formatOnSave", "editor.insertSpaces"))
    spoken = SPOKEN[key][0][0]
    value = pick(rng, SPOKEN[key][1])
    s = pick(rng, [f"For {lang} files only, set the {spoken} to {value} in {SETTINGS}",
                   f"Set {spoken} to {value} just for {lang} in the VS Code settings",
                   f"In {SETTINGS}, use {spoken} {value} for {lang}"])

    def check(r: Path) -> str | None:
        block = _read(r).get(f"[{lang}]", {})
        return None if block.get(key) == json_or_text(value) else f"[{lang}] is {block!r}"

    return Draft(polite(rng, s), (("set_language_setting", (SETTINGS, lang, key, value)),), check, "settings.set_language_setting")


def set_launch_value(rng: random.Random, root: Path) -> Draft:
    _start(rng, root, launch=True)
    key, value = pick(rng, [("program", pick(rng, ("main.py", "app.py", "src/run.py", "tools/cli.py"))),
                            ("console", pick(rng, ("internalConsole", "externalTerminal")))])
    s = pick(rng, [f"In {LAUNCH}, set the {key} of the debug configuration to '{value}'",
                   f"Make the launch configuration use {key} '{value}' ({LAUNCH})",
                   f"Change {key} to '{value}' in every configuration of {LAUNCH}"])

    def check(r: Path) -> str | None:
        cfgs = _read(r, LAUNCH).get("configurations", [])
        return None if cfgs and all(c.get(key) == value for c in cfgs) else "not set"

    return Draft(polite(rng, s), (("set_launch_value", (LAUNCH, key, value)),), check, "settings.set_launch_value")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    set_setting, remove_setting, add_to_setting, set_language_setting, set_launch_value)}
