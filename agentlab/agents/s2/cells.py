"""The structural expert's writes: spreadsheet cells set directly, not typed through the GUI.

Agent S2's structural grounding answers ``set_cells({"A4": "Total", "B4": 60})`` without
clicking: when the file is open in LibreOffice Calc (the desktop task opener started it with a
UNO pipe, ``env.uno_url``) the cells are written into the open document over UNO and the
document is saved (so the screen and the file agree); a file that is not open is written with
openpyxl. UNO is importable only by the system python (Debian's ``python3-uno``), so the UNO
write runs :mod:`agentlab.agents.s2.uno_cells` as a ``/usr/bin/python3`` subprocess (~0.4 s).
"""

from __future__ import annotations

import json
import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentlab.errors import InvalidActionError

log = logging.getLogger(__name__)

SYSTEM_PYTHON = "/usr/bin/python3"
UNO_SCRIPT = Path(__file__).with_name("uno_cells.py")
Cell = tuple[str, "str | int | float"]


@dataclass(frozen=True)
class CellWrite:
    """What a structural write did."""

    route: Literal["uno", "openpyxl"]
    document: str  #: the document URL (UNO) or file path (openpyxl)
    sheet: str
    cells: tuple[Cell, ...]
    saved: bool


def write_open_document(uno_url: str, cells: tuple[Cell, ...], *, sheet: str = "", file: Path | None = None,
                        save: bool = True, timeout_s: float = 30.0) -> CellWrite | None:
    """Write into the document LibreOffice has open (``file``'s, else the current one); None
    when that file is not open there. Other problems are an :class:`InvalidActionError`."""
    if not Path(SYSTEM_PYTHON).exists():
        raise InvalidActionError(f"{SYSTEM_PYTHON} (with python3-uno) is needed to write into LibreOffice")
    req = {"url": uno_url, "file": file.resolve().as_uri() if file is not None else "", "sheet": sheet,
           "cells": [list(c) for c in cells], "save": save}
    try:
        out = subprocess.run([SYSTEM_PYTHON, str(UNO_SCRIPT)], input=json.dumps(req), capture_output=True,
                             text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise InvalidActionError(f"LibreOffice did not answer a cell write within {timeout_s:.0f}s") from None
    try:
        answer = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise InvalidActionError(f"the UNO cell writer failed: {' '.join(out.stderr.split())[-300:]}") from None
    if answer.get("ok"):
        return CellWrite("uno", str(answer["doc"]), str(answer["sheet"]), cells, save)
    if answer.get("reason") == "not_open" and file is not None:
        return None
    raise InvalidActionError(f"cannot write cells into LibreOffice: {answer.get('message')}")


def write_closed_file(path: Path, cells: tuple[Cell, ...], *, sheet: str = "") -> CellWrite:
    """Write cells into an .xlsx file with openpyxl (the file must exist and not be open)."""
    import openpyxl

    if not path.is_file():
        raise InvalidActionError(f"no spreadsheet file {path}")
    try:
        wb = openpyxl.load_workbook(path)
    except Exception as exc:  # openpyxl raises many kinds for a file it cannot read
        raise InvalidActionError(f"openpyxl cannot open {path.name}: {exc}") from None
    if sheet and sheet not in wb.sheetnames:
        raise InvalidActionError(f"{path.name} has no sheet {sheet!r}; sheets: {', '.join(wb.sheetnames)}")
    ws = wb[sheet] if sheet else wb.active
    for ref, value in cells:
        ws[ref] = value
    wb.save(path)
    return CellWrite("openpyxl", str(path), ws.title, cells, True)


def write_cells(cells: tuple[Cell, ...], *, uno_url: str | None, sheet: str = "", file: str = "",
                files_dir: Path | None = None, save: bool = True) -> CellWrite:
    """UNO when the spreadsheet is open in LibreOffice, openpyxl for a named file that is not."""
    path = None
    if file:
        path = Path(file).expanduser()
        if not path.is_absolute() and files_dir is not None:
            path = files_dir / path
    if uno_url:
        done = write_open_document(uno_url, cells, sheet=sheet, file=path, save=save)
        if done is not None:
            return done
    if path is None:
        raise InvalidActionError("no spreadsheet is open in LibreOffice here; name the file: "
                                 'set_cells({...}, file="budget.xlsx")')
    return write_closed_file(path, cells, sheet=sheet)
