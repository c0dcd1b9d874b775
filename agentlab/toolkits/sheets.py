"""The spreadsheet toolkit (SheetAgent): atomic operations on .xlsx workbooks with openpyxl.

Rows are found by a value in them (``key``: a name, an id), columns by their header or their
letter, sheets by name: what a request mentions, so a call can be written from the request and
the workbook's listing alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, workspace_file

XLSX = Annotated[str, file_slot(".xlsx")]
Sheet = Annotated[str, Slot("sheet")]
Column = Annotated[str, Slot("header")]
Cell = Annotated[str, Slot("cell")]
Key = Annotated[str, Slot("row_key")]
Value = Annotated[str, Slot("phrase")]
Name = Annotated[str, Slot("phrase", new=True)]  # a new sheet name: not an existing one
Position = Annotated[int, Slot("number")]
Descending = Annotated[bool, Slot("bool")]
Case = Annotated[str, Slot("choice", choices=("upper", "lower", "title"))]


def _describe(path: Path) -> str:
    import openpyxl

    wb = openpyxl.load_workbook(path)
    out = [f"{path.name}: sheets {', '.join(repr(s) for s in wb.sheetnames)}"]
    for ws in wb.worksheets:
        out.append(f"  sheet {ws.title!r} ({ws.max_row} rows x {ws.max_column} columns):")
        for r, row in enumerate(ws.iter_rows(min_row=1, max_row=min(ws.max_row, 8), values_only=True), start=1):
            out.append(f"    row {r}: " + " | ".join("" if v is None else str(v) for v in row))
        if ws.max_row > 8:
            out.append(f"    ... {ws.max_row - 8} more rows")
    return "\n".join(out)


kit = Toolkit("sheets", "spreadsheets (.xlsx) with openpyxl", describe=_describe,
              examples=(('Rename the Sheet1 tab of sales.xlsx to Totals.', "rename_sheet('sales.xlsx', 'Sheet1', 'Totals')\ndone()"), ("Set Bob's age to 41 in people.xlsx.", "update_value('people.xlsx', 'People', 'Bob', 'age', '41')\ndone()"), ('Sort inventory.xlsx by price, highest first.', "sort_rows('inventory.xlsx', 'Stock', 'price', True)\ndone()"),))


def _open(file: str) -> Any:
    import openpyxl

    workspace_file(file)
    return openpyxl.load_workbook(file)


def _sheet(wb: Any, sheet: str) -> Any:
    if sheet not in wb.sheetnames:
        raise ToolError(f"no sheet {sheet!r}; the sheets are {', '.join(map(repr, wb.sheetnames))}")
    return wb[sheet]


def _value(text: Any) -> Any:
    """A number when the text is one, else the text (a formula keeps its leading '=')."""
    if not isinstance(text, str):
        return text
    s = text.strip()
    if re.fullmatch(r"[-+]?\d+", s):
        return int(s)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+)", s):
        return float(s)
    return s


def _column(ws: Any, column: str) -> int:
    """A column's index (1-based) by its header in row 1 (case-insensitive) or its letter."""
    from openpyxl.utils import column_index_from_string

    for cell in ws[1]:
        if cell.value is not None and str(cell.value).strip().casefold() == column.strip().casefold():
            return int(cell.column)
    if re.fullmatch(r"[A-Za-z]{1,3}", column.strip()):
        return int(column_index_from_string(column.strip().upper()))
    headers = [str(c.value) for c in ws[1] if c.value is not None]
    raise ToolError(f"no column {column!r}; the headers are {', '.join(map(repr, headers))}")


def _row(ws: Any, key: str) -> int:
    """The first row (from 2) holding ``key`` in one of its cells (case-insensitive)."""
    want = str(key).strip().casefold()
    for r in range(2, ws.max_row + 1):
        for c in range(1, ws.max_column + 1):
            v = ws.cell(r, c).value
            if v is not None and str(v).strip().casefold() == want:
                return r
    raise ToolError(f"no row holds {key!r} in sheet {ws.title!r}")


@kit.tool
def set_cell(file: XLSX, sheet: Sheet, cell: Cell, value: Value) -> str:
    """Write a value (a number, text, or a formula starting with '=') into one cell."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    ws[cell.strip().upper()] = _value(value)
    wb.save(file)
    return f"{sheet}!{cell.upper()} = {value!r}"


@kit.tool
def sum_into(file: XLSX, sheet: Sheet, cell: Cell, first: Cell, last: Cell) -> str:
    """Put a =SUM(first:last) formula into a cell."""
    from openpyxl.utils.cell import coordinate_from_string, get_column_letter
    from openpyxl.utils.cell import column_index_from_string as col
    from openpyxl.utils.exceptions import CellCoordinatesException

    try:  # a range is the same range written either way round: B5, B2 is B2:B5
        (c1, r1), (c2, r2) = coordinate_from_string(first.strip().upper()), coordinate_from_string(last.strip().upper())
    except (ValueError, CellCoordinatesException):
        raise ToolError(f"{first!r} and {last!r} are not cell references such as B2") from None
    top = f"{get_column_letter(min(col(c1), col(c2)))}{min(r1, r2)}"
    bottom = f"{get_column_letter(max(col(c1), col(c2)))}{max(r1, r2)}"
    return set_cell(file, sheet, cell, f"=SUM({top}:{bottom})")


@kit.tool
def update_value(file: XLSX, sheet: Sheet, key: Key, column: Column, value: Value) -> str:
    """Change the value in the row holding `key`, in the given column (header or letter)."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    r, c = _row(ws, key), _column(ws, column)
    ws.cell(r, c).value = _value(value)
    wb.save(file)
    return f"row {r} ({key}), column {column}: {value!r}"


@kit.tool
def delete_row(file: XLSX, sheet: Sheet, key: Key) -> str:
    """Delete the row holding `key` (the rows below move up)."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    r = _row(ws, key)
    ws.delete_rows(r)
    wb.save(file)
    return f"deleted row {r} ({key})"


@kit.tool
def insert_row_after(file: XLSX, sheet: Sheet, key: Key, values: Value) -> str:
    """Insert a new row right after the row holding `key`; `values` are the cells, comma-separated."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    r = _row(ws, key) + 1
    ws.insert_rows(r)
    for c, v in enumerate(str(values).split(","), start=1):
        ws.cell(r, c).value = _value(v)
    wb.save(file)
    return f"inserted row {r}: {values}"


@kit.tool
def append_row(file: XLSX, sheet: Sheet, values: Value) -> str:
    """Add a row at the end of the sheet; `values` are the cells, comma-separated."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    ws.append([_value(v) for v in str(values).split(",")])
    wb.save(file)
    return f"appended row {ws.max_row}: {values}"


@kit.tool
def sort_rows(file: XLSX, sheet: Sheet, column: Column, descending: Descending = False) -> str:
    """Sort the rows below the header by one column (whole rows move together)."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    c = _column(ws, column)
    rows = [list(r) for r in ws.iter_rows(min_row=2, values_only=True)]
    rows = [r for r in rows if any(v is not None for v in r)]

    def key(row: list[Any]) -> tuple[int, Any]:
        v = row[c - 1]
        return (0, v) if isinstance(v, (int, float)) else (1, str(v or "").casefold())

    rows.sort(key=key, reverse=descending)
    for i, row in enumerate(rows, start=2):
        for j, v in enumerate(row, start=1):
            ws.cell(i, j).value = v
    wb.save(file)
    return f"sorted {len(rows)} rows by {column} ({'descending' if descending else 'ascending'})"


@kit.tool
def rename_sheet(file: XLSX, sheet: Sheet, new_name: Name) -> str:
    """Give a sheet a new name."""
    wb = _open(file)
    _sheet(wb, sheet).title = new_name
    wb.save(file)
    return f"sheet {sheet!r} is now {new_name!r}"


@kit.tool
def delete_sheet(file: XLSX, sheet: Sheet) -> str:
    """Delete a sheet (the others stay)."""
    wb = _open(file)
    wb.remove(_sheet(wb, sheet))
    wb.save(file)
    return f"deleted sheet {sheet!r}; left: {', '.join(wb.sheetnames)}"


@kit.tool
def add_sheet(file: XLSX, name: Name) -> str:
    """Add an empty sheet at the end."""
    wb = _open(file)
    wb.create_sheet(name)
    wb.save(file)
    return f"added sheet {name!r}"


@kit.tool
def move_sheet(file: XLSX, sheet: Sheet, position: Position) -> str:
    """Move a sheet to a position among the tabs (1 = first)."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    wb.move_sheet(ws, offset=(position - 1) - wb.sheetnames.index(sheet))
    wb.save(file)
    return f"tabs now: {', '.join(wb.sheetnames)}"


@kit.tool
def change_case(file: XLSX, sheet: Sheet, column: Column, case: Case) -> str:
    """Make every text below the header in one column upper, lower or title case."""
    wb = _open(file)
    ws = _sheet(wb, sheet)
    c = _column(ws, column)
    n = 0
    for r in range(2, ws.max_row + 1):
        v = ws.cell(r, c).value
        if isinstance(v, str):
            ws.cell(r, c).value = getattr(v, case)()
            n += 1
    wb.save(file)
    return f"{n} cells of {column} in {case} case"
