"""Synthesized SheetAgent pairs: a small random workbook and a request for one of its tools.

Rows are named by their key (first column), columns by their header, sheets by name, values
written in the request: what the sheets toolkit's slots offer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import CITIES, ITEMS, NEW_NAMES, PEOPLE, SHEETS, TEAMS, pick, polite, sample, stem

#: (header, how to make a value) per theme; the first column is the key
THEMES: dict[str, list[tuple[str, Any]]] = {
    "people": [("Name", PEOPLE), ("Age", (19, 70)), ("City", CITIES), ("Team", TEAMS)],
    "stock": [("Item", ITEMS), ("Price", (2, 90)), ("Quantity", (0, 400)), ("Supplier", PEOPLE)],
    "sales": [("Region", CITIES), ("Revenue", (1000, 9000)), ("Units", (10, 300)), ("Manager", PEOPLE)],
    "grades": [("Student", PEOPLE), ("Score", (40, 100)), ("Class", ("A", "B", "C")), ("Tutor", PEOPLE)],
}


@dataclass
class Book:
    file: str
    sheets: list[str]
    headers: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    @property
    def sheet(self) -> str:
        return self.sheets[0]


def _book(rng: random.Random, root: Path, n_sheets: int | None = None) -> Book:
    import openpyxl

    theme = THEMES[pick(rng, list(THEMES))]
    cols = theme[: rng.choice((3, 4))]
    n = rng.randint(3, 6)
    keys = sample(rng, cols[0][1], n)
    rows = []
    for k in keys:
        row: list[Any] = [k]
        for _, spec in cols[1:]:
            row.append(rng.randint(*spec) if isinstance(spec, tuple) and isinstance(spec[0], int) else pick(rng, spec))
        rows.append(row)
    names = sample(rng, SHEETS, n_sheets or rng.choice((1, 1, 2, 3)))
    book = Book(f"{stem(rng)}.xlsx", names, [c[0] for c in cols], rows)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = names[0]
    ws.append(book.headers)
    for r in rows:
        ws.append(r)
    for extra in names[1:]:
        wb.create_sheet(extra).append(["Note"])
    wb.save(root / book.file)
    return book


def _load(root: Path, book: Book) -> Any:
    import openpyxl

    return openpyxl.load_workbook(root / book.file)


def _col_letter(i: int) -> str:
    return "ABCDEFGH"[i]


def set_cell(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    cell = f"{pick(rng, 'ABCDEF')}{rng.randint(2, 12)}"
    value: Any = rng.randint(1, 999) if rng.random() < 0.6 else pick(rng, ("done", "pending", "n/a", "TBD", "ok"))
    s = pick(rng, [f"Put {value} in cell {cell} of {b.file}", f"Write {value} into {cell} on the {b.sheet} sheet of {b.file}",
                   f"In {b.file}, set {cell} to {value}", f"Set cell {cell} of the {b.sheet} sheet in {b.file} to {value}",
                   f"{b.file}: cell {cell} should read {value}"])

    def check(r: Path) -> str | None:
        got = _load(r, b)[b.sheet][cell].value
        return None if str(got) == str(value) else f"{cell} is {got!r}"

    return Draft(polite(rng, s), (("set_cell", (b.file, b.sheet, cell, str(value))),), check, "sheets.set_cell")


def sum_into(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    c = _col_letter(rng.randint(1, len(b.headers) - 1))
    last = len(b.rows) + 1
    target = f"{c}{last + 1}"
    s = pick(rng, [f"Put the sum of {c}2 to {c}{last} into {target} in {b.file}",
                   f"In {b.file}, add a total of {c}2:{c}{last} in cell {target}",
                   f"Total {c}2 through {c}{last} into {target} on the {b.sheet} sheet of {b.file}",
                   f"Write a SUM formula in {target} of {b.file} that adds {c}2 to {c}{last}"])
    formula = f"=SUM({c}2:{c}{last})"

    def check(r: Path) -> str | None:
        got = _load(r, b)[b.sheet][target].value
        return None if got == formula else f"{target} is {got!r}"

    return Draft(polite(rng, s), (("sum_into", (b.file, b.sheet, target, f"{c}2", f"{c}{last}")),), check, "sheets.sum_into")


def update_value(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    row = pick(rng, b.rows)
    ci = rng.randint(1, len(b.headers) - 1)
    col = b.headers[ci]
    old = row[ci]
    value: Any = rng.randint(1, 999) if isinstance(old, int) else pick(rng, [v for v in CITIES + TEAMS + PEOPLE if v != old])
    key = row[0]
    s = pick(rng, [f"Set the {col} of {key} to {value} in {b.file}", f"In {b.file}, change {col} for {key} to {value}",
                   f"Update {key} in {b.file}: the {col} is now {value}", f"{key} has a new {col}, {value}; update {b.file}",
                   f"Change the {col} value in the {key} row of {b.file} to {value}"])

    def check(r: Path) -> str | None:
        ws = _load(r, b)[b.sheet]
        for cells in ws.iter_rows(min_row=2, values_only=True):
            if cells[0] == key:
                return None if str(cells[ci]) == str(value) else f"{key}'s {col} is {cells[ci]!r}"
        return f"no row {key}"

    return Draft(polite(rng, s), (("update_value", (b.file, b.sheet, key, col, str(value))),), check, "sheets.update_value")


def delete_row(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    key = pick(rng, b.rows)[0]
    s = pick(rng, [f"Remove the row for {key} from {b.file}", f"Delete {key} from the {b.sheet} sheet of {b.file}",
                   f"In {b.file}, drop the {key} row", f"{key} should no longer be listed in {b.file}; delete that row"])

    def check(r: Path) -> str | None:
        keys = [c[0] for c in _load(r, b)[b.sheet].iter_rows(min_row=2, values_only=True)]
        return None if key not in keys and len(keys) == len(b.rows) - 1 else f"keys are {keys}"

    return Draft(polite(rng, s), (("delete_row", (b.file, b.sheet, key)),), check, "sheets.delete_row")


def _new_row(rng: random.Random, b: Book) -> list[Any]:
    theme = next(t for t in THEMES.values() if [c[0] for c in t[: len(b.headers)]] == b.headers)
    taken = {r[0] for r in b.rows}
    key = pick(rng, [v for v in theme[0][1] if v not in taken])
    out: list[Any] = [key]
    for _, spec in theme[1: len(b.headers)]:
        out.append(rng.randint(*spec) if isinstance(spec, tuple) and isinstance(spec[0], int) else pick(rng, spec))
    return out


def insert_row_after(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    after = pick(rng, b.rows)[0]
    new = _new_row(rng, b)
    text = ",".join(str(v) for v in new)
    s = pick(rng, [f"Insert the row '{text}' right after {after} in {b.file}",
                   f"In {b.file}, add a new row '{text}' below the {after} row",
                   f"Put '{text}' as a new row after {after} on the {b.sheet} sheet of {b.file}"])

    def check(r: Path) -> str | None:
        keys = [c[0] for c in _load(r, b)[b.sheet].iter_rows(min_row=2, values_only=True)]
        i = keys.index(after) if after in keys else -2
        return None if i + 1 < len(keys) and keys[i + 1] == new[0] else f"keys are {keys}"

    return Draft(polite(rng, s), (("insert_row_after", (b.file, b.sheet, after, text)),), check, "sheets.insert_row_after")


def append_row(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    new = _new_row(rng, b)
    text = ",".join(str(v) for v in new)
    s = pick(rng, [f"Add the row '{text}' at the end of {b.file}", f"Append '{text}' to the {b.sheet} sheet of {b.file}",
                   f"In {b.file}, add a last row with '{text}'", f"Add a new entry '{text}' at the bottom of {b.file}"])

    def check(r: Path) -> str | None:
        rows = list(_load(r, b)[b.sheet].iter_rows(min_row=2, values_only=True))
        return None if rows and rows[-1][0] == new[0] else f"last row is {rows[-1] if rows else None}"

    return Draft(polite(rng, s), (("append_row", (b.file, b.sheet, text)),), check, "sheets.append_row")


def sort_rows(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    ci = rng.randrange(len(b.headers))
    col = b.headers[ci]
    desc = rng.random() < 0.5
    if desc:
        s = pick(rng, [f"Sort {b.file} by {col}, highest first", f"Order the rows of {b.file} by {col} in descending order",
                       f"In {b.file}, sort the {b.sheet} sheet by {col} from largest to smallest",
                       f"Sort the {col} column of {b.file} descending, keeping rows together"])
    else:
        s = pick(rng, [f"Sort {b.file} by {col}", f"Order the rows of {b.file} by {col}, smallest first",
                       f"In {b.file}, sort the {b.sheet} sheet by {col} in ascending order",
                       f"Sort the rows in {b.file} alphabetically by {col}"])

    def check(r: Path) -> str | None:
        vals = [c[ci] for c in _load(r, b)[b.sheet].iter_rows(min_row=2, values_only=True)]
        key = [(0, v) if isinstance(v, (int, float)) else (1, str(v).casefold()) for v in vals]
        return None if key == sorted(key, reverse=desc) else f"{col} is {vals}"

    return Draft(polite(rng, s), (("sort_rows", (b.file, b.sheet, col, desc)),), check, "sheets.sort_rows")


def rename_sheet(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    sheet = pick(rng, b.sheets)
    new = pick(rng, [n for n in NEW_NAMES if n not in b.sheets])
    s = pick(rng, [f"Rename the {sheet} tab of {b.file} to {new}", f"In {b.file}, call the sheet {sheet} '{new}' instead",
                   f"Change the name of sheet {sheet} in {b.file} to {new}", f"The {sheet} sheet of {b.file} should be named {new}"])

    def check(r: Path) -> str | None:
        names = _load(r, b).sheetnames
        return None if new in names and sheet not in names else f"sheets are {names}"

    return Draft(polite(rng, s), (("rename_sheet", (b.file, sheet, new)),), check, "sheets.rename_sheet")


def delete_sheet(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root, n_sheets=rng.choice((2, 3)))
    sheet = pick(rng, b.sheets[1:])
    s = pick(rng, [f"Delete the {sheet} sheet from {b.file}", f"Remove the tab called {sheet} in {b.file}",
                   f"In {b.file}, get rid of the {sheet} worksheet"])

    def check(r: Path) -> str | None:
        names = _load(r, b).sheetnames
        return None if sheet not in names and len(names) == len(b.sheets) - 1 else f"sheets are {names}"

    return Draft(polite(rng, s), (("delete_sheet", (b.file, sheet)),), check, "sheets.delete_sheet")


def add_sheet(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    new = pick(rng, [n for n in NEW_NAMES if n not in b.sheets])
    s = pick(rng, [f"Add a sheet named {new} to {b.file}", f"Create a new tab called '{new}' in {b.file}",
                   f"In {b.file}, add an empty worksheet {new}"])

    def check(r: Path) -> str | None:
        names = _load(r, b).sheetnames
        return None if new in names else f"sheets are {names}"

    return Draft(polite(rng, s), (("add_sheet", (b.file, new)),), check, "sheets.add_sheet")


def move_sheet(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root, n_sheets=3)
    sheet = pick(rng, b.sheets[1:])
    pos = rng.randint(1, 2) if sheet == b.sheets[2] else pick(rng, (1, 3))
    s = pick(rng, [f"Move the {sheet} sheet of {b.file} to position {pos}",
                   f"In {b.file}, put the {sheet} tab at position {pos}", f"Make {sheet} tab number {pos} in {b.file}"])

    def check(r: Path) -> str | None:
        names = _load(r, b).sheetnames
        return None if names.index(sheet) == pos - 1 else f"tabs are {names}"

    return Draft(polite(rng, s), (("move_sheet", (b.file, sheet, pos)),), check, "sheets.move_sheet")


def change_case(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root)
    text_cols = [i for i, v in enumerate(b.rows[0]) if isinstance(v, str)]
    ci = pick(rng, text_cols)
    col = b.headers[ci]
    case = pick(rng, ("upper", "lower", "title"))
    words = {"upper": pick(rng, ("upper case", "uppercase", "capital letters", "all caps")),
             "lower": pick(rng, ("lower case", "lowercase", "small letters")),
             "title": pick(rng, ("title case", "title case (first letter capital)"))}[case]
    s = pick(rng, [f"Make every {col} in {b.file} {words}", f"Put the {col} column of {b.file} in {words}",
                   f"In {b.file}, change the {col} entries to {words}", f"Convert the {col} values of {b.file} to {words}"])

    def check(r: Path) -> str | None:
        vals = [c[ci] for c in _load(r, b)[b.sheet].iter_rows(min_row=2, values_only=True)]
        ok = all(getattr(str(v), case)() == v for v in vals if isinstance(v, str))
        return None if ok else f"{col} is {vals}"

    return Draft(polite(rng, s), (("change_case", (b.file, b.sheet, col, case)),), check, "sheets.change_case")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    set_cell, sum_into, update_value, delete_row, insert_row_after, append_row, sort_rows, rename_sheet, delete_sheet,
    add_sheet, move_sheet, change_case)}
