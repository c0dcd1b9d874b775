"""The files toolkit (FileAgent): files and folders, lines of text, CSV, JSON and INI edits.

Paths are relative to the workspace; a path may name a new file or folder the request mentions.
"""

from __future__ import annotations

import configparser
import csv
import fnmatch
import re
import shutil
from pathlib import Path
from typing import Annotated

from agentlab.toolkits.base import Slot, Toolkit, ToolError, column_index, file_slot, text_head
from agentlab.toolkits.data import count_lines, count_words, set_json_value

AnyFile = Annotated[str, file_slot()]
NewFile = Annotated[str, file_slot(new=True)]
Folder = Annotated[str, Slot("folder")]
CSV = Annotated[str, file_slot(".csv")]
INI = Annotated[str, file_slot(".ini", ".cfg", ".conf")]
JSONFile = Annotated[str, file_slot(".json")]
Column = Annotated[str, Slot("header")]
Section = Annotated[str, Slot("section")]
Key = Annotated[str, Slot("setting")]
Value = Annotated[str, Slot("phrase")]
Text = Annotated[str, Slot("text")]
Pattern = Annotated[str, Slot("pattern")]
Anchor = Annotated[str, Slot("anchor")]


def _describe(path: Path) -> str:
    return text_head(path, 8)


kit = Toolkit("files", "files and folders, text lines, CSV, JSON and INI files", describe=_describe,
              examples=(('Rename old.log to archive.log.', "rename('old.log', 'archive.log')\ndone()"), ('Set debug to true in app.json.', "set_json_value('app.json', 'debug', 'true')\ndone()"), ("Add 'eggs' at the end of list.txt.", "append_line('list.txt', 'eggs')\ndone()"),))


def _existing(path: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise ToolError(f"no {path!r} in the workspace")
    return p


@kit.tool
def rename(path: AnyFile, new_name: NewFile) -> str:
    """Rename (or move) a file or folder to a new path."""
    src, dst = _existing(path), Path(new_name)
    dst.parent.mkdir(parents=True, exist_ok=True)
    src.rename(dst)
    return f"{path} -> {new_name}"


@kit.tool
def move_to_folder(path: AnyFile, folder: Folder) -> str:
    """Move a file into a folder (made if missing), keeping its name."""
    src = _existing(path)
    Path(folder).mkdir(parents=True, exist_ok=True)
    dst = Path(folder) / src.name
    src.rename(dst)
    return f"{path} -> {dst.as_posix()}"


@kit.tool
def copy_file(path: AnyFile, new_name: NewFile) -> str:
    """Copy a file to a new path."""
    src = _existing(path)
    Path(new_name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, new_name)
    return f"copied {path} to {new_name}"


@kit.tool
def delete(path: AnyFile) -> str:
    """Delete a file or an empty folder."""
    p = _existing(path)
    p.rmdir() if p.is_dir() else p.unlink()
    return f"deleted {path}"


@kit.tool
def make_folder(folder: Folder) -> str:
    """Create a folder (and its parents)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return f"folder {folder} exists"


@kit.tool
def create_file(path: NewFile, text: Text = "") -> str:
    """Create a file (and its folders) holding the given text (empty by default)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + ("\n" if text and not text.endswith("\n") else ""), encoding="utf-8")
    return f"wrote {path}"


@kit.tool
def append_line(path: AnyFile, text: Text) -> str:
    """Add a line at the end of a text file."""
    p = _existing(path)
    old = p.read_text(encoding="utf-8")
    p.write_text(old + ("" if not old or old.endswith("\n") else "\n") + text + "\n", encoding="utf-8")
    return f"appended {text!r} to {path}"


@kit.tool
def sort_lines(path: AnyFile, descending: bool = False) -> str:
    """Sort the lines of a text file alphabetically (empty lines dropped)."""
    p = _existing(path)
    lines = sorted((ln for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()),
                   key=str.casefold, reverse=descending)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"sorted {len(lines)} lines of {path}"


@kit.tool
def replace_in_file(path: AnyFile, old: Value, new: Text) -> str:
    """Replace every occurrence of a text in a file."""
    p = _existing(path)
    text = p.read_text(encoding="utf-8")
    n = text.count(old)
    p.write_text(text.replace(old, new), encoding="utf-8")
    return f"replaced {n} occurrence(s) in {path}"


# shared with DataAgent (defined there: files imports data, never the other way round)
kit.tool(set_json_value)


@kit.tool
def set_ini_value(path: INI, section: Section, key: Key, value: Value) -> str:
    """Set a key in a section of an INI file (the section is made if missing)."""
    p = _existing(path)
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(p, encoding="utf-8")
    if not cfg.has_section(section):
        cfg.add_section(section)
    cfg.set(section, key, str(value))
    with open(p, "w", encoding="utf-8") as fh:
        cfg.write(fh)
    return f"{path}: [{section}] {key} = {value}"


@kit.tool
def remove_lines(path: AnyFile, containing: Anchor) -> str:
    """Delete every line of a text file that contains a text (any case): take an entry off a list."""
    p = _existing(path)
    lines = p.read_text(encoding="utf-8").splitlines()
    kept = [ln for ln in lines if containing.casefold() not in ln.casefold()]
    if len(kept) == len(lines):
        raise ToolError(f"no line of {path} contains {containing!r}")
    p.write_text("".join(f"{ln}\n" for ln in kept), encoding="utf-8")
    return f"removed {len(lines) - len(kept)} line(s) of {path}"


def _matching(pattern: str) -> list[Path]:
    """The workspace's files a pattern (``downloads/*.pdf``, ``*.tmp``) matches, any case of the
    extension; a pattern reaching outside the workspace or matching nothing is a :class:`ToolError`."""
    if pattern.startswith("/") or ".." in Path(pattern).parts:
        raise ToolError(f"{pattern!r} is not a pattern inside the workspace")
    folder, _, glob = pattern.rpartition("/")
    base = Path(folder or ".")
    if not base.is_dir():
        raise ToolError(f"no folder {folder!r} in the workspace")
    rx = re.compile(fnmatch.translate(glob), re.IGNORECASE)
    found = sorted(p for p in base.iterdir() if p.is_file() and rx.match(p.name))
    if not found:
        raise ToolError(f"no file matches {pattern!r}")
    return found


def _free(targets: list[Path]) -> None:
    """Refuse, before anything moves, when a file would land on one that exists (a rename would
    silently replace it)."""
    taken = [t.as_posix() for t in targets if t.exists()]
    if taken:
        raise ToolError(f"{', '.join(map(repr, taken))} already exist(s); nothing was moved or renamed")


@kit.tool
def move_matching(pattern: Pattern, folder: Folder) -> str:
    """Move every file that matches a pattern (such as downloads/*.pdf) into a folder (made if missing)."""
    found = _matching(pattern)
    _free([Path(folder) / p.name for p in found])
    Path(folder).mkdir(parents=True, exist_ok=True)
    for p in found:
        p.rename(Path(folder) / p.name)
    return f"moved {len(found)} file(s) into {folder}"


@kit.tool
def delete_matching(pattern: Pattern) -> str:
    """Delete every file that matches a pattern (such as downloads/*.tmp)."""
    found = _matching(pattern)
    for p in found:
        p.unlink()
    return f"deleted {len(found)} file(s)"


@kit.tool
def add_prefix(pattern: Pattern, prefix: Text) -> str:
    """Put a prefix in front of the name of every file that matches a pattern (such as photos/*.jpg)."""
    if not prefix or "/" in prefix:
        raise ToolError(f"{prefix!r} is not a prefix for a file name")
    found = _matching(pattern)
    _free([p.with_name(prefix + p.name) for p in found])
    for p in found:
        p.rename(p.with_name(prefix + p.name))
    return f"renamed {len(found)} file(s)"


def _read_csv(path: str) -> tuple[list[str], list[list[str]]]:
    with open(_existing(path), newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise ToolError(f"{path} is empty")
    return rows[0], rows[1:]


def _write_csv(path: str, header: list[str], rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


@kit.tool
def drop_csv_column(path: CSV, column: Column) -> str:
    """Remove a column from a CSV file."""
    header, rows = _read_csv(path)
    i = column_index(header, column)
    _write_csv(path, header[:i] + header[i + 1:], [r[:i] + r[i + 1:] for r in rows])
    return f"dropped column {column!r} of {path}"


@kit.tool
def filter_csv(path: CSV, column: Column, value: Value, new_name: NewFile) -> str:
    """Write the header and the rows whose column equals a value into a new CSV file."""
    header, rows = _read_csv(path)
    i = column_index(header, column)
    kept = [r for r in rows if i < len(r) and r[i].strip().casefold() == value.strip().casefold()]
    _write_csv(new_name, header, kept)
    return f"{len(kept)} of {len(rows)} rows -> {new_name}"


# counting lines or words into a file is a chore of both domains ("how many warnings are in app.log?")
kit.tool(count_lines)
kit.tool(count_words)
