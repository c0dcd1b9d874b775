"""The data toolkit (DataAgent): everyday chores on CSV, JSON and text files -- converting between
formats, totals per group, a column's statistic, counts of words and lines, sorting, duplicates.

Why a toolkit for the general domain: its workspace tasks ("turn contacts.csv into JSON", "how many
words are in essay.txt?", "total the amounts per category") went to the raw code agent, which a
135M model cannot drive (0 of 12 on the development and blind sets: unclosed programs, the token
cap). These functions are the operations such requests are made of; each writes its result into a
file the request names, so the model only chooses the operation and copies the names.

Numbers are read the way people write them in a table ("1,200.50", "$12", "7.5"); a result that
is a number is written bare (whole numbers without decimals) unless the tool says otherwise.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, column_index, file_slot, json_or_text, text_head, workspace_file

AnyFile = Annotated[str, file_slot()]
TextFile = Annotated[str, file_slot(".txt", ".md", ".log", ".csv", ".json", ".text")]
CSV = Annotated[str, file_slot(".csv", ".tsv")]
JSONFile = Annotated[str, file_slot(".json")]
NewFile = Annotated[str, file_slot(new=True)]
NewCSV = Annotated[str, file_slot(".csv", new=True)]
NewJSON = Annotated[str, file_slot(".json", new=True)]
Column = Annotated[str, Slot("header")]
Value = Annotated[str, Slot("value")]
Stat = Annotated[str, Slot("choice", choices=("sum", "mean", "min", "max", "count"))]
JSONKey = Annotated[str, Slot("setting")]
Phrase = Annotated[str, Slot("phrase")]

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
#: a number written plainly: no sign but minus, no separators, no leading zero
_PLAIN = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?")


def _describe(path: Path) -> str:
    return text_head(path, 6, 160)


kit = Toolkit("data", "CSV, JSON and text files: conversions, totals, statistics and counts written to files",
              describe=_describe, examples=(
                  ("Turn members.csv into a JSON file members.json.", "csv_to_json('members.csv', 'members.json')\ndone()"),
                  ("What is the average score in results.csv? Put it in average.txt.",
                   "column_stat('results.csv', 'score', 'mean', 'average.txt')\ndone()"),
                  ("How many lines of server.log mention timeout? Write the count to timeouts.txt.",
                   "count_lines('server.log', 'timeout', 'timeouts.txt')\ndone()"),
              ))


def _number(text: str) -> float | None:
    """A table cell as a number ("1,200.50", "$12", "7.5 %"), or ``None`` when it is not one."""
    cleaned = re.sub(r"[\s$€£%]", "", str(text)).replace(",", "")
    return float(cleaned) if _NUMBER.fullmatch(cleaned) else None


def _plain(x: float) -> str:
    """A number as people write a result: 12, 3.5, 0.33 (at most two decimals)."""
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}".rstrip("0").rstrip(".")


def _read_csv(path: str) -> tuple[list[str], list[list[str]]]:
    p = workspace_file(path, "CSV file")
    text = p.read_text(encoding="utf-8-sig")
    dialect = csv.excel_tab if p.suffix.lower() == ".tsv" else csv.excel
    rows = [r for r in csv.reader(text.splitlines(), dialect) if any(c.strip() for c in r)]
    if not rows:
        raise ToolError(f"{path} is empty")
    header = [h.strip() for h in rows[0]]
    return header, [r + [""] * (len(header) - len(r)) for r in rows[1:]]


def _write_csv(path: str, header: list[str], rows: list[list[str]]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _write(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def _numbers(rows: list[list[str]], i: int, column: str) -> list[float]:
    out = []
    for r in rows:
        if not r[i].strip():
            continue
        n = _number(r[i])
        if n is None:
            raise ToolError(f"column {column!r} holds {r[i]!r}, not a number")
        out.append(n)
    if not out:
        raise ToolError(f"column {column!r} has no numbers")
    return out


@kit.tool
def csv_to_json(path: CSV, new_name: NewJSON) -> str:
    """Write a CSV table as a JSON list with one object per row (columns of numbers as numbers; blank rows left out)."""
    header, rows = _read_csv(path)
    # a column becomes JSON numbers only when every cell is a plain number (no phone numbers,
    # zip codes with leading zeros, or amounts written with separators turned into other values)
    numeric = [all(_PLAIN.fullmatch(r[i].strip()) for r in rows if r[i].strip()) and any(r[i].strip() for r in rows)
               for i in range(len(header))]
    out: list[dict[str, Any]] = []
    for r in rows:
        item: dict[str, Any] = {}
        for i, h in enumerate(header):
            cell = r[i].strip()
            item[h] = (float(cell) if "." in cell else int(cell)) if numeric[i] and cell else cell
        out.append(item)
    _write(new_name, json.dumps(out, indent=2, ensure_ascii=False))
    return f"{len(out)} rows of {path} -> {new_name}"


def _cell(value: Any) -> str:
    """A JSON value as a CSV cell: text as it is, numbers as written, true/false and nested
    values as JSON (never Python's ``True`` or ``['x']``)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@kit.tool
def json_to_csv(path: JSONFile, new_name: NewCSV) -> str:
    """Write a JSON list of objects as a CSV table (one column per key, in the order they first appear)."""
    try:
        data = json.loads(workspace_file(path, "JSON file").read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ToolError(f"{path} is not valid JSON: {exc}") from None
    if isinstance(data, dict):  # {"people": [...]}: the one list inside
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else [data]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ToolError(f"{path} does not hold a list of objects")
    header: list[str] = []
    for item in data:
        header += [k for k in item if k not in header]
    rows = [[_cell(item.get(k)) for k in header] for item in data]
    _write_csv(new_name, header, rows)
    return f"{len(rows)} objects of {path} -> {new_name}"


@kit.tool
def total_by(path: CSV, group: Column, value: Column, new_name: NewCSV) -> str:
    """Total a column of numbers per value of another column into a new CSV (header: group,total; biggest total first; two decimals)."""
    header, rows = _read_csv(path)
    g, v = column_index(header, group), column_index(header, value)
    totals: dict[str, float] = {}
    for r in rows:
        n = _number(r[v])
        if n is None:
            if r[v].strip():
                raise ToolError(f"column {value!r} holds {r[v]!r}, not a number")
            continue
        totals[r[g].strip()] = totals.get(r[g].strip(), 0.0) + n
    ordered = sorted(totals.items(), key=lambda kv: -kv[1])
    _write_csv(new_name, [header[g], "total"], [[k, f"{t:.2f}"] for k, t in ordered])
    return f"{len(ordered)} totals of {header[v]} by {header[g]} -> {new_name}"


@kit.tool
def column_stat(path: CSV, column: Column, stat: Stat, out: NewFile) -> str:
    """Write the sum, mean, min, max or count of a column of numbers into a file (the number alone)."""
    header, rows = _read_csv(path)
    i = column_index(header, column)
    if stat == "count":
        result = float(sum(1 for r in rows if r[i].strip()))
    else:
        nums = _numbers(rows, i, column)
        result = {"sum": sum(nums), "mean": sum(nums) / len(nums), "min": min(nums), "max": max(nums)}[stat]
    _write(out, _plain(result))
    return f"{stat} of {header[i]} = {_plain(result)} -> {out}"


@kit.tool
def count_words(path: TextFile, out: NewFile) -> str:
    """Count the words of a text file and write the number into a file."""
    n = len(workspace_file(path).read_text(encoding="utf-8", errors="replace").split())
    _write(out, str(n))
    return f"{path}: {n} words -> {out}"


@kit.tool
def count_lines(path: TextFile, text: Value, out: NewFile) -> str:
    """Count the lines of a file containing a text (any case; * for every non-empty line) and write the number into a file."""
    lines = [ln for ln in workspace_file(path).read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    want = text.strip().casefold()
    if want in ("*", ""):
        n, used = len(lines), "every line"
    else:
        used = next((f for f in reversed(_forms(want)) if any(f in ln.casefold() for ln in lines)), want)
        n = sum(1 for ln in lines if used in ln.casefold())
    _write(out, str(n))
    return f"{path}: {n} lines with {used!r} -> {out}"


def _forms(word: str) -> list[str]:
    """A word as written, then shorter forms a log may use for it: "warnings" is counted in lines
    saying WARNING or WARN, "errors" in lines saying ERROR (a request's word is plural and spelled
    out; a log's is singular and often cut short). The shortest form found in the file is the one
    counted (its lines include the longer forms'). Only for one word, never below three letters."""
    forms = [word]
    if " " not in word:
        for suffix in ("s", "es", "ings", "ing"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                forms.append(word[: -len(suffix)])
    return forms


@kit.tool
def sort_csv(path: CSV, column: Column, descending: bool = False) -> str:
    """Sort a CSV table's rows by one column (as numbers when they all are), the header staying first."""
    header, rows = _read_csv(path)
    i = column_index(header, column)
    filled = [k for k in range(len(rows)) if rows[k][i].strip()]
    blank = [k for k in range(len(rows)) if not rows[k][i].strip()]  # blanks go last, in their order
    nums = {k: _number(rows[k][i]) for k in filled}
    if all(n is not None for n in nums.values()):
        order = sorted(filled, key=lambda k: nums[k] or 0.0, reverse=descending)
    else:
        order = sorted(filled, key=lambda k: rows[k][i].casefold(), reverse=descending)
    _write_csv(path, header, [rows[k] for k in order + blank])
    return f"sorted {len(rows)} rows of {path} by {header[i]}"


@kit.tool
def remove_duplicate_rows(path: AnyFile) -> str:
    """Remove repeated rows or lines of a file, keeping the first of each (a CSV's header stays)."""
    p = workspace_file(path)
    lines = p.read_text(encoding="utf-8").splitlines()
    seen: set[str] = set()
    kept = []
    for ln in lines:
        key = ln.strip()
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(ln)
    p.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return f"removed {len(lines) - len(kept)} repeated line(s) of {path}"


@kit.tool
def filter_rows(path: CSV, column: Column, value: Value, new_name: NewCSV) -> str:
    """Write the header and the rows whose column equals a value (* for any non-blank value) into a new CSV."""
    header, rows = _read_csv(path)
    i = column_index(header, column)
    want = value.strip().casefold()
    kept = [r for r in rows if (r[i].strip() != "" if want == "*" else r[i].strip().casefold() == want)]
    _write_csv(new_name, header, kept)
    return f"{len(kept)} of {len(rows)} rows -> {new_name}"


@kit.tool
def keep_columns(path: CSV, columns: Value, new_name: NewCSV) -> str:
    """Write only some columns of a CSV table (names separated by commas, in that order) into a new CSV."""
    header, rows = _read_csv(path)
    idx = [column_index(header, c) for c in re.split(r"\s*,\s*|\s+and\s+", columns.strip()) if c]
    if not idx:
        raise ToolError("name at least one column")
    _write_csv(new_name, [header[i] for i in idx], [[r[i] for i in idx] for r in rows])
    return f"{len(idx)} column(s) of {path} -> {new_name}"


@kit.tool
def set_json_value(path: JSONFile, key: JSONKey, value: Phrase) -> str:
    """Set a top-level key of a JSON file (the value is read as JSON when it can be: 8081, true, [1, 2])."""
    p = workspace_file(path)
    data = json.loads(p.read_text(encoding="utf-8") or "{}")
    if not isinstance(data, dict):
        raise ToolError(f"{path} does not hold a JSON object")
    data[key] = json_or_text(value)
    p.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return f"{path}: {key} = {data[key]!r}"
