"""The editor-settings toolkit (VSAgent): VS Code's JSON settings and launch configurations.

Its domain knowledge is a catalogue of the settings people ask for (:data:`KEYS`) with the values
they take (:data:`VALUES`), offered to the agent beside the keys already in the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, json_or_text, workspace_file

JSONFile = Annotated[str, file_slot(".json")]
Key = Annotated[str, Slot("setting")]
Value = Annotated[str, Slot("value")]
Language = Annotated[str, Slot("phrase")]

#: settings people ask for, and the values the enumerated ones take
VALUES: dict[str, tuple[str, ...]] = {
    "editor.fontSize": (), "editor.tabSize": (), "editor.insertSpaces": ("true", "false"),
    "editor.wordWrap": ("off", "on", "wordWrapColumn", "bounded"), "editor.minimap.enabled": ("true", "false"),
    "editor.rulers": (), "editor.formatOnSave": ("true", "false"), "editor.lineNumbers": ("on", "off", "relative"),
    "editor.renderWhitespace": ("none", "boundary", "selection", "trailing", "all"), "editor.fontFamily": (),
    "editor.cursorStyle": ("line", "block", "underline"), "editor.detectIndentation": ("true", "false"),
    "files.autoSave": ("off", "afterDelay", "onFocusChange", "onWindowChange"), "files.autoSaveDelay": (),
    "files.trimTrailingWhitespace": ("true", "false"), "files.insertFinalNewline": ("true", "false"),
    "files.exclude": (), "search.exclude": (), "files.eol": ("\\n", "\\r\\n", "auto"),
    "workbench.colorTheme": (), "workbench.startupEditor": ("none", "welcomePage", "newUntitledFile"),
    "terminal.integrated.fontSize": (), "python.defaultInterpreterPath": (), "git.enabled": ("true", "false"),
    "explorer.confirmDelete": ("true", "false"),
}
KEYS: tuple[str, ...] = tuple(VALUES)
#: every value an enumerated key takes, once (offered to the value slot: "turn it off" is ``false``)
ENUMERATED: tuple[str, ...] = tuple(dict.fromkeys(v for vals in VALUES.values() for v in vals))


def _describe(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return f"{path.as_posix()}: not valid JSON"
    return f"{path.as_posix()}: " + json.dumps(data, indent=1)[:600]


kit = Toolkit("settings", "VS Code settings.json and launch.json files", describe=_describe, catalogue=KEYS, catalogue_values=ENUMERATED,
              examples=(('Set the tab size to 2 in .vscode/settings.json.', "set_setting('.vscode/settings.json', 'editor.tabSize', '2')\ndone()"), ('Turn off format on save in .vscode/settings.json.', "set_setting('.vscode/settings.json', 'editor.formatOnSave', 'false')\ndone()"), ('Exclude the build folder from search in .vscode/settings.json.', "add_to_setting('.vscode/settings.json', 'search.exclude', '**/build')\ndone()"),))


def _load(path: str) -> dict[str, Any]:
    p = workspace_file(path)
    text = re.sub(r"^\s*//.*$", "", p.read_text(encoding="utf-8"), flags=re.M)  # VS Code allows comments
    data = json.loads(text or "{}")
    if not isinstance(data, dict):
        raise ToolError(f"{path} does not hold a JSON object")
    return data


def _save(path: str, data: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")


@kit.tool
def set_setting(file: JSONFile, key: Key, value: Value) -> str:
    """Set a setting (e.g. editor.fontSize to 16); the value is read as JSON when it can be (16, true, [80, 120])."""
    data = _load(file)
    data[key] = json_or_text(value)
    _save(file, data)
    return f"{key} = {json.dumps(data[key])}"


@kit.tool
def remove_setting(file: JSONFile, key: Key) -> str:
    """Remove a setting from the file (the others stay)."""
    data = _load(file)
    if key not in data:
        raise ToolError(f"{file} has no setting {key!r}; it has {', '.join(data)}")
    del data[key]
    _save(file, data)
    return f"removed {key}"


@kit.tool
def add_to_setting(file: JSONFile, key: Key, item: Value) -> str:
    """Add an entry to an object setting (e.g. a glob to search.exclude, set to true) or a list setting."""
    data = _load(file)
    current = data.get(key, {})
    if isinstance(current, list):
        current.append(json_or_text(item))
    elif isinstance(current, dict):
        current[item] = True
    else:
        raise ToolError(f"{key} is neither a list nor an object")
    data[key] = current
    _save(file, data)
    return f"{key} = {json.dumps(current)}"


@kit.tool
def set_language_setting(file: JSONFile, language: Language, key: Key, value: Value) -> str:
    """Set a setting for one language only (e.g. yaml, editor.tabSize, 2) as a "[yaml]" block."""
    data = _load(file)
    block = data.setdefault(f"[{language.strip('[]').lower()}]", {})
    block[key] = json_or_text(value)
    _save(file, data)
    return f"[{language}] {key} = {json.dumps(block[key])}"


@kit.tool
def set_launch_value(file: JSONFile, key: Key, value: Value) -> str:
    """Set a field (e.g. program) in every debug configuration of a launch.json."""
    data = _load(file)
    configs = data.get("configurations")
    if not isinstance(configs, list) or not configs:
        raise ToolError(f"{file} has no configurations")
    for c in configs:
        c[key] = json_or_text(value)
    _save(file, data)
    return f"{key} = {value!r} in {len(configs)} configuration(s)"
