"""Synthesized FileAgent pairs: a few random text, CSV, JSON and INI files in folders, and a
request to rename, move, copy, delete, edit lines or values of one of them."""

from __future__ import annotations

import configparser
import dataclasses
import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

from agentlab.selfinstruct.calls import data as _data
from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import CITIES, ITEMS, PEOPLE, TEAMS, pick, polite, sample, stem
from agentlab.toolkits.base import json_or_text

FOLDERS = ("archive", "docs", "backup", "old", "reports", "data", "notes", "exports", "photos", "logs")
JSON_KEYS = {"port": ("8000", "8080", "9090", "5000"), "debug": ("true", "false"), "timeout": ("10", "30", "60", "120"),
             "retries": ("1", "3", "5"), "theme": ("dark", "light"), "language": ("en", "fr", "de"),
             "workers": ("2", "4", "8")}
INI_SECTIONS: dict[str, dict[str, tuple[str, ...]]] = {"server": {"host": ("localhost", "example.org"), "port": ("80", "8080", "8443")},
                "database": {"name": ("shop", "main", "test"), "user": ("admin", "reader")},
                "logging": {"level": ("info", "debug", "warning"), "days": ("7", "30", "90")},
                "mail": {"sender": ("noreply", "office"), "retries": ("2", "5")}}


@dataclass
class Tree:
    text: str
    lines: list[str]
    csv: str
    header: list[str]
    rows: list[list[str]]
    json: str
    config: dict[str, object]
    ini: str
    ini_data: dict[str, dict[str, str]]
    folders: list[str]


def _tree(rng: random.Random, root: Path) -> Tree:
    folders = sample(rng, FOLDERS, rng.randint(1, 2))
    for f in folders:
        (root / f).mkdir()
    lines = sample(rng, pick(rng, (ITEMS, PEOPLE, CITIES)), rng.randint(3, 6))
    text = f"{pick(rng, ('list', 'names', 'todo', 'shopping', 'guests', 'cities'))}.txt"
    (root / text).write_text("\n".join(lines) + "\n", encoding="utf-8")
    header = ["name", "city", "team"] if rng.random() < 0.5 else ["item", "qty", "owner"]
    rows = [[pick(rng, PEOPLE), pick(rng, CITIES), pick(rng, TEAMS)] if header[0] == "name"
            else [pick(rng, ITEMS), str(rng.randint(1, 50)), pick(rng, PEOPLE)] for _ in range(rng.randint(3, 6))]
    csv_name = f"{stem(rng)}.csv"
    with open(root / csv_name, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    keys = sample(rng, list(JSON_KEYS), rng.randint(2, 4))
    config: dict[str, object] = {k: json_or_text(pick(rng, JSON_KEYS[k])) for k in keys}
    json_name = pick(rng, ("config.json", "app.json", "settings.json", "options.json"))
    (root / json_name).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    secs = sample(rng, list(INI_SECTIONS), 2)
    ini_data = {s: {k: pick(rng, v) for k, v in INI_SECTIONS[s].items()} for s in secs}
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read_dict(ini_data)
    ini_name = pick(rng, ("app.ini", "setup.cfg", "service.ini", "tool.conf"))
    with open(root / ini_name, "w", encoding="utf-8") as fh:
        cfg.write(fh)
    return Tree(text, lines, csv_name, header, rows, json_name, config, ini_name, ini_data, folders)


def rename(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    src = pick(rng, [t.text, t.csv])
    new = f"{stem(rng)}{Path(src).suffix}"
    if new == src:
        new = f"renamed_{src}"
    s = pick(rng, [f"Rename {src} to {new}", f"Change the name of {src} to {new}", f"{src} should be called {new}"])

    def check(r: Path) -> str | None:
        return None if (r / new).is_file() and not (r / src).exists() else "not renamed"

    return Draft(polite(rng, s), (("rename", (src, new)),), check, "files.rename")


def move_to_folder(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    src = pick(rng, [t.text, t.csv, t.json])
    folder = pick(rng, t.folders)
    s = pick(rng, [f"Move {src} into the {folder} folder", f"Put {src} in {folder}/", f"File {src} away in the {folder} folder"])

    def check(r: Path) -> str | None:
        return None if (r / folder / src).is_file() and not (r / src).exists() else "not moved"

    return Draft(polite(rng, s), (("move_to_folder", (src, folder)),), check, "files.move_to_folder")


def copy_file(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    src = pick(rng, [t.text, t.csv, t.json])
    p = Path(src)
    new = pick(rng, [f"{p.stem}_copy{p.suffix}", f"{p.stem}_backup{p.suffix}", f"{pick(rng, t.folders)}/{p.name}"])
    s = pick(rng, [f"Make a copy of {src} called {new}", f"Copy {src} to {new}", f"Duplicate {src} as {new}"])

    def check(r: Path) -> str | None:
        return None if (r / new).is_file() and (r / src).is_file() else "not copied"

    return Draft(polite(rng, s), (("copy_file", (src, new)),), check, "files.copy_file")


def delete(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    src = pick(rng, [t.text, t.csv, t.ini])
    s = pick(rng, [f"Delete {src}", f"Remove the file {src}", f"{src} is not needed any more; delete it"])

    def check(r: Path) -> str | None:
        return None if not (r / src).exists() else "still there"

    return Draft(polite(rng, s), (("delete", (src,)),), check, "files.delete")


def make_folder(rng: random.Random, root: Path) -> Draft:
    _tree(rng, root)
    folder = pick(rng, [f for f in FOLDERS if not (root / f).exists()])
    s = pick(rng, [f"Create a folder called {folder}/", f"Make a new {folder}/ folder", f"Add an empty folder {folder}/"])

    def check(r: Path) -> str | None:
        return None if (r / folder).is_dir() else "no folder"

    return Draft(polite(rng, s), (("make_folder", (folder,)),), check, "files.make_folder")


def create_file(rng: random.Random, root: Path) -> Draft:
    _tree(rng, root)
    name = f"{pick(rng, ('readme', 'todo', 'notes', 'hello', 'status'))}.txt"
    text = pick(rng, ("hello world", "nothing to report", "call the bank", "back on Monday", "all tests pass"))
    s = pick(rng, [f"Create {name} containing '{text}'", f"Make a new file {name} with the text '{text}'",
                   f"Write '{text}' into a new file called {name}"])

    def check(r: Path) -> str | None:
        return None if (r / name).is_file() and (r / name).read_text(encoding="utf-8").strip() == text else "wrong file"

    return Draft(polite(rng, s), (("create_file", (name, text)),), check, "files.create_file")


def append_line(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    line = pick(rng, [w for w in (*ITEMS, *PEOPLE, *CITIES) if w not in t.lines])
    s = pick(rng, [f"Add '{line}' at the end of {t.text}", f"Append the line '{line}' to {t.text}",
                   f"Put '{line}' on a new last line of {t.text}"])

    def check(r: Path) -> str | None:
        got = (r / t.text).read_text(encoding="utf-8").splitlines()
        return None if got and got[-1] == line else f"last line {got[-1:]}"

    return Draft(polite(rng, s), (("append_line", (t.text, line)),), check, "files.append_line")


def sort_lines(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    desc = rng.random() < 0.35
    s = (pick(rng, [f"Sort the lines of {t.text} in reverse alphabetical order", f"Order {t.text} from Z to A"]) if desc else
         pick(rng, [f"Sort the lines of {t.text} alphabetically", f"Put the lines in {t.text} in A to Z order",
                    f"Alphabetize {t.text}"]))

    def check(r: Path) -> str | None:
        got = (r / t.text).read_text(encoding="utf-8").splitlines()
        return None if got == sorted(t.lines, key=str.casefold, reverse=desc) else f"lines {got}"

    return Draft(polite(rng, s), (("sort_lines", (t.text, desc)),), check, "files.sort_lines")


def replace_in_file(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    old = pick(rng, t.lines)
    new = pick(rng, [w for w in (*ITEMS, *PEOPLE, *CITIES) if w not in t.lines])
    s = pick(rng, [f"Replace {old} with '{new}' in {t.text}", f"In {t.text}, change every '{old}' to '{new}'",
                   f"Swap '{old}' for '{new}' in {t.text}"])

    def check(r: Path) -> str | None:
        got = (r / t.text).read_text(encoding="utf-8")
        return None if old not in got.replace(new, "") and new in got else "not replaced"

    return Draft(polite(rng, s), (("replace_in_file", (t.text, old, new)),), check, "files.replace_in_file")


def set_json_value(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    key = pick(rng, list(t.config))
    value = pick(rng, [v for v in JSON_KEYS[key] if json_or_text(v) != t.config[key]])
    s = pick(rng, [f"Set {key} to {value} in {t.json}", f"In {t.json}, change the {key} value to {value}",
                   f"Update {t.json} so that {key} is {value}"])

    def check(r: Path) -> str | None:
        data = json.loads((r / t.json).read_text(encoding="utf-8"))
        return None if data.get(key) == json_or_text(value) else f"{key} is {data.get(key)!r}"

    return Draft(polite(rng, s), (("set_json_value", (t.json, key, value)),), check, "files.set_json_value")


def set_ini_value(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    section = pick(rng, list(t.ini_data))
    key = pick(rng, list(t.ini_data[section]))
    value = pick(rng, [v for v in INI_SECTIONS[section][key] if v != t.ini_data[section][key]])
    s = pick(rng, [f"In {t.ini}, set {key} under [{section}] to {value}", f"Change the {key} of the {section} section in {t.ini} to {value}",
                   f"Set {section} {key} = {value} in {t.ini}"])

    def check(r: Path) -> str | None:
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(r / t.ini, encoding="utf-8")
        return None if cfg.get(section, key, fallback=None) == value else "not set"

    return Draft(polite(rng, s), (("set_ini_value", (t.ini, section, key, value)),), check, "files.set_ini_value")


def drop_csv_column(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    col = pick(rng, t.header[1:])
    s = pick(rng, [f"Remove the {col} column from {t.csv}", f"Delete column {col} in {t.csv}", f"Drop {col} from {t.csv}"])

    def check(r: Path) -> str | None:
        first = (r / t.csv).read_text(encoding="utf-8").splitlines()[0].split(",")
        return None if col not in first and len(first) == len(t.header) - 1 else f"header {first}"

    return Draft(polite(rng, s), (("drop_csv_column", (t.csv, col)),), check, "files.drop_csv_column")


def filter_csv(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    ci = rng.randrange(len(t.header))
    col = t.header[ci]
    value = pick(rng, t.rows)[ci]
    new = f"{value.lower()}_{Path(t.csv).stem}.csv"
    s = pick(rng, [f"Save the rows of {t.csv} whose {col} is {value} into {new}",
                   f"Write the {t.csv} rows with {col} {value} to a new file {new}",
                   f"Filter {t.csv} to {col} = {value} and save it as {new}"])
    kept = sum(1 for r in t.rows if r[ci].casefold() == value.casefold())

    def check(r: Path) -> str | None:
        if not (r / new).is_file():
            return "no output"
        rows = (r / new).read_text(encoding="utf-8").splitlines()
        return None if len(rows) == kept + 1 else f"{len(rows) - 1} rows"

    return Draft(polite(rng, s), (("filter_csv", (t.csv, col, value, new)),), check, "files.filter_csv")


def remove_lines(rng: random.Random, root: Path) -> Draft:
    t = _tree(rng, root)
    gone = pick(rng, t.lines)
    s = pick(rng, [f"Take {gone} off {t.text}", f"Remove the line with {gone} from {t.text}",
                   f"{gone} is sorted, so cross it off {t.text}", f"Delete the {gone} entry in {t.text}",
                   f"{t.text} should not list {gone} any more"])

    def check(r: Path) -> str | None:
        got = (r / t.text).read_text(encoding="utf-8").splitlines()
        return None if got == [ln for ln in t.lines if ln != gone] else f"lines {got}"

    return Draft(polite(rng, s), (("remove_lines", (t.text, gone)),), check, "files.remove_lines")


#: file kinds a folder of mixed files holds, and how people name them
KINDS = {".pdf": ("PDFs", "PDF files", ".pdf files"), ".jpg": ("JPGs", ".jpg photos", "jpg pictures"),
         ".png": ("PNGs", ".png images", "png files"), ".tmp": (".tmp files", "temporary .tmp files", "tmp files"),
         ".log": ("log files", ".log files", "logs ending in .log"), ".mp3": ("mp3s", ".mp3 songs", "MP3 files"),
         ".docx": (".docx files", "Word .docx files", "docx documents"), ".zip": ("zips", ".zip archives", "zip files")}
MIXED = ("downloads", "desktop", "inbox", "pictures", "music", "scans", "shared", "export")
NAMES = ("report", "photo", "invoice", "song", "scan", "notes", "draft", "backup", "ticket", "menu", "map", "cv")


@dataclass
class Mixed:
    folder: str
    kind: str
    files: list[str]
    others: list[str]


def _mixed(rng: random.Random, root: Path) -> Mixed:
    """A folder of mixed files (two to four of one kind, one to three of others) beside the usual tree."""
    _tree(rng, root)
    folder = pick(rng, MIXED)
    kind, other = sample(rng, list(KINDS), 2)
    names = sample(rng, NAMES, rng.randint(3, 7))
    n = rng.randint(2, min(4, len(names) - 1))
    files = [f"{folder}/{x}{kind}" for x in names[:n]]
    others = [f"{folder}/{x}{other}" for x in names[n:]]
    for f in files + others:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(f"{f}\n", encoding="utf-8")
    return Mixed(folder, kind, files, others)


def move_matching(rng: random.Random, root: Path) -> Draft:
    m = _mixed(rng, root)
    what = pick(rng, KINDS[m.kind])
    sub = pick(rng, (m.kind.strip(".") + "s", "sorted", "keep", "old", "done"))
    dest, s = pick(rng, [
        (f"{m.folder}/{sub}", f"Put all the {what} in {m.folder} into a new folder called {sub} inside {m.folder}"),
        (sub, f"Move every one of the {what} from {m.folder} to the {sub} folder"),
        (f"{m.folder}/{sub}", f"Gather the {what} of the {m.folder} folder in a folder named {sub} in {m.folder}"),
        (sub, f"{m.folder} is cluttered: move its {what} into {sub}/"),
    ])

    def check(r: Path) -> str | None:
        moved = all((r / dest / Path(f).name).is_file() and not (r / f).exists() for f in m.files)
        stayed = all((r / f).is_file() for f in m.others)
        return None if moved and stayed else "not moved"

    return Draft(polite(rng, s), (("move_matching", (f"{m.folder}/*{m.kind}", dest)),), check, "files.move_matching")


def delete_matching(rng: random.Random, root: Path) -> Draft:
    m = _mixed(rng, root)
    what = pick(rng, KINDS[m.kind])
    s = pick(rng, [f"Delete the {what} in {m.folder}", f"Get rid of all the {what} in the {m.folder} folder",
                   f"Clear every one of the {what} out of {m.folder}", f"{m.folder} has {what} I don't need; remove them"])

    def check(r: Path) -> str | None:
        gone = not any((r / f).exists() for f in m.files)
        return None if gone and all((r / f).is_file() for f in m.others) else "not deleted"

    return Draft(polite(rng, s), (("delete_matching", (f"{m.folder}/*{m.kind}",)),), check, "files.delete_matching")


def add_prefix(rng: random.Random, root: Path) -> Draft:
    m = _mixed(rng, root)
    what = pick(rng, KINDS[m.kind])
    prefix = pick(rng, ("2024_", "2025_", "old_", "draft-", "final_", "team-", "v2_", "archived_"))
    example = Path(m.files[0]).name
    s = pick(rng, [f"Put {prefix} in front of the names of all the {what} in {m.folder}",
                   f"Prefix every one of the {what} in the {m.folder} folder with '{prefix}'",
                   f"Rename the {what} in {m.folder} so they start with {prefix}, e.g. {example} becomes {prefix}{example}",
                   f"Add '{prefix}' to the start of each of the {what} in {m.folder}"])

    def check(r: Path) -> str | None:
        done = all((r / Path(f).parent / (prefix + Path(f).name)).is_file() and not (r / f).exists() for f in m.files)
        return None if done and all((r / f).is_file() for f in m.others) else "not renamed"

    return Draft(polite(rng, s), (("add_prefix", (f"{m.folder}/*{m.kind}", prefix)),), check, "files.add_prefix")


def count_lines(rng: random.Random, root: Path) -> Draft:
    """DataAgent's generator (the tool is shared), under this toolkit's family name."""
    return dataclasses.replace(_data.count_lines(rng, root), family="files.count_lines")


def count_words(rng: random.Random, root: Path) -> Draft:
    return dataclasses.replace(_data.count_words(rng, root), family="files.count_words")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    rename, move_to_folder, copy_file, delete, make_folder, create_file, append_line, sort_lines, replace_in_file,
    set_json_value, set_ini_value, remove_lines, move_matching, delete_matching, add_prefix, drop_csv_column, filter_csv,
    count_lines, count_words)}
