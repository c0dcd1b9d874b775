"""Synthesized DataAgent pairs: random CSV tables of several kinds (sales, expenses, staff,
inventory, grades, timesheets, contacts), JSON lists of records, text files and logs, sometimes
in a sub-folder, and a request to convert, total, summarise, count, sort, de-duplicate, filter or
cut down one of them.

Why these start states: the data toolkit's calls name a file of the workspace, a column of its
tables and the file the result goes to, so the tables have headers of varied spellings (``amount``,
``Amount``, ``unit_price``, ``Paid By``) and numbers written as people write them ("$1,200.50",
"€85", "1,250"), and the requests name columns as people do (as written, in words, in the
plural), ask in varied ways ("How many ...?", "What's the average ...?", a remark before the
ask) and name the output file in varied ways, so an adapter learns the operation and to copy the
names, not one sentence. Values the grammar can only take from the request (the output file, a
value to filter on, the columns to keep, a word to count) are always written in it. Every
``check`` recomputes the expected result from the values the generator wrote, not with the
toolkit's code.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import CITIES, ITEMS, PEOPLE, TEAMS, pick, polite, sample
from agentlab.toolkits.base import json_or_text

FOLDERS = ("data", "exports", "reports", "shared", "inbox", "2024", "downloads", "finance", "archive", "input")
MONTHS = tuple(f"{m:02d}" for m in range(1, 13))
REGIONS = ("North", "South", "East", "West", "Central")
PRODUCTS = ("laptop", "monitor", "keyboard", "mouse", "printer", "headset", "webcam", "tablet", "router", "scanner")
CATEGORIES = ("travel", "meals", "office", "software", "training", "postage", "hardware", "rent")
DESCRIPTIONS = ("taxi to the airport", "team lunch", "printer paper", "annual licence", "conference ticket",
                "train ticket", "coffee beans", "desk chair", "hotel night", "courier fee", "cloud storage")
STATUSES = ("paid", "pending", "rejected")
SUPPLIERS = ("Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay")
SUBJECTS = ("math", "history", "biology", "art", "physics", "english", "chemistry", "music")
TERMS = ("fall", "spring", "summer")
PROJECTS = ("Apollo", "Borealis", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor")
TASKS = ("meetings", "coding", "review", "testing", "planning", "support")
COMPANIES = ("Acme", "Globex", "Initech", "Hooli", "Vandelay", "Wonka", "Soylent", "Tyrell")
CONTEXT = ("", "", "", "", "Quick one. ", "I'm preparing the monthly report. ", "My manager asked me for this. ",
           "Before the meeting tomorrow: ", "This came out of our old system. ", "For the team update, ",
           "I got this file from a colleague. ", "No rush, but ")


# -- tables ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Col:
    """A column kind: its header spellings, what it holds and how its values are made."""

    names: tuple[str, ...]
    #: ``group``: a few values repeated (regions, cities); ``num``: numbers; ``money``: amounts
    #: (currency signs, thousands separators); ``text``: one value per row
    kind: str
    make: Callable[[random.Random], Any]


def _date(rng: random.Random) -> str:
    return f"2024-{pick(rng, MONTHS)}-{rng.randint(1, 28):02d}"


def _money(lo: float, hi: float, cents: bool = True) -> Callable[[random.Random], float]:
    return lambda rng: round(rng.uniform(lo, hi), 2) if cents else float(rng.randint(int(lo), int(hi)))


def _phone(rng: random.Random) -> str:
    return pick(rng, (f"555-{rng.randint(1000, 9999)}", f"(555) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                      f"555.{rng.randint(100, 999)}.{rng.randint(1000, 9999)}"))


THEMES: dict[str, dict[str, Any]] = {
    "sales": {"files": ("sales", "orders", "sales_2024", "q3_sales", "transactions", "orders_march", "shop_sales"),
              "rows": ("sales", "orders", "transactions"),
              "cols": (Col(("date", "Date", "order_date"), "text", _date),
                       Col(("region", "Region"), "group", lambda r: pick(r, REGIONS)),
                       Col(("product", "Product"), "group", lambda r: pick(r, PRODUCTS)),
                       Col(("rep", "salesperson", "Seller"), "group", lambda r: pick(r, PEOPLE[:8])),
                       Col(("units", "Units", "qty"), "num", lambda r: r.randint(1, 40)),
                       Col(("amount", "Amount", "revenue", "Revenue"), "money", _money(15, 4800)))},
    "expenses": {"files": ("expenses", "receipts", "spending", "expenses_2024", "travel_costs", "petty_cash"),
                 "rows": ("expenses", "receipts", "entries"),
                 "cols": (Col(("date", "Date"), "text", _date),
                          Col(("category", "Category", "type"), "group", lambda r: pick(r, CATEGORIES)),
                          Col(("description", "Description", "note"), "text", lambda r: pick(r, DESCRIPTIONS)),
                          Col(("amount", "Amount", "cost", "Cost"), "money", _money(4, 1900)),
                          Col(("paid_by", "Paid By", "payer"), "group", lambda r: pick(r, PEOPLE[8:16])),
                          Col(("status", "Status"), "group", lambda r: pick(r, STATUSES)))},
    "staff": {"files": ("staff", "employees", "team", "personnel", "hr_export", "people"),
              "rows": ("employees", "people", "staff members"),
              "cols": (Col(("name", "Name", "full_name"), "unique", lambda r: pick(r, PEOPLE)),
                       Col(("department", "Department", "dept"), "group", lambda r: pick(r, TEAMS)),
                       Col(("city", "City", "office"), "group", lambda r: pick(r, CITIES[:7])),
                       Col(("salary", "Salary", "annual_salary"), "money", _money(38000, 125000, cents=False)),
                       Col(("age", "Age"), "num", lambda r: r.randint(21, 64)),
                       Col(("start_date", "Start Date", "hired"), "text", lambda r: f"{pick(r, ('2015', '2018', '2020', '2022', '2023'))}-{pick(r, MONTHS)}-01"))},
    "inventory": {"files": ("inventory", "stock", "warehouse", "products", "stock_levels", "catalog"),
                  "rows": ("items", "products", "lines"),
                  "cols": (Col(("item", "Item", "product_name"), "unique", lambda r: pick(r, ITEMS)),
                           Col(("warehouse", "Warehouse", "location"), "group", lambda r: pick(r, CITIES[7:13])),
                           Col(("quantity", "Quantity", "stock", "on_hand"), "num", lambda r: r.randint(0, 2600)),
                           Col(("unit_price", "Unit Price", "price", "Price"), "money", _money(0.5, 240)),
                           Col(("supplier", "Supplier", "vendor"), "group", lambda r: pick(r, SUPPLIERS)))},
    "grades": {"files": ("grades", "scores", "exam_results", "marks", "class_scores", "results_term2"),
               "rows": ("students", "results", "grades"),
               "cols": (Col(("student", "Student", "pupil"), "group", lambda r: pick(r, PEOPLE[:10])),
                        Col(("subject", "Subject", "course"), "group", lambda r: pick(r, SUBJECTS)),
                        Col(("score", "Score", "points", "mark"), "num",
                            lambda r: r.randint(38, 100) if r.random() < 0.7 else r.randint(76, 199) / 2),
                        Col(("term", "Term"), "group", lambda r: pick(r, TERMS)))},
    "timesheets": {"files": ("timesheet", "hours", "timesheets", "time_log", "worklog", "hours_week12"),
                   "rows": ("entries", "time entries", "rows"),
                   "cols": (Col(("employee", "Employee", "person"), "group", lambda r: pick(r, PEOPLE[10:18])),
                            Col(("project", "Project", "client"), "group", lambda r: pick(r, PROJECTS)),
                            Col(("date", "Date", "day"), "text", _date),
                            Col(("hours", "Hours", "hours_worked"), "num", lambda r: r.randint(1, 18) / 2),
                            Col(("task", "Task", "activity"), "group", lambda r: pick(r, TASKS)))},
    "contacts": {"files": ("contacts", "members", "customers", "clients", "address_book", "mailing_list"),
                 "rows": ("contacts", "people", "members"),
                 "cols": (Col(("name", "Name", "full_name"), "unique", lambda r: pick(r, PEOPLE)),
                          Col(("email", "Email", "e-mail"), "text", lambda r: ""),  # filled from the name
                          Col(("phone", "Phone", "mobile"), "text", _phone),
                          Col(("city", "City", "town"), "group", lambda r: pick(r, CITIES)),
                          Col(("company", "Company", "organisation"), "group", lambda r: pick(r, COMPANIES)))},
}
NUMERIC = frozenset({"num", "money"})


@dataclass
class Table:
    """A CSV table written into the workspace, with the values it was written from."""

    path: str
    theme: str
    header: list[str]
    kinds: list[str]
    #: the cells as written in the file
    cells: list[list[str]]
    #: the number each cell stands for (``None``: not a number column, or blank)
    nums: list[list[float | None]]
    rows_noun: str

    def numeric(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k in NUMERIC]

    def groups(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k == "group"]


def _style(rng: random.Random, kind: str) -> str:
    """How a column's numbers are written (one way per column, as a table is)."""
    if kind == "money":
        return pick(rng, ("plain", "plain2", "comma2", "dollar", "dollar", "euro", "pound", "comma0"))
    return pick(rng, ("plain", "plain", "comma0"))


def _write_number(x: float, style: str) -> str:
    whole = float(x).is_integer()
    if style == "plain":
        return str(int(x)) if whole else f"{x:g}"
    if style == "plain2":
        return f"{x:.2f}"
    if style == "comma0":
        return f"{int(x):,}" if whole else f"{x:,.2f}"
    sign = {"dollar": "$", "euro": "€", "pound": "£"}.get(style, "")
    return f"{sign}{x:,.2f}" if not whole or style == "comma2" else f"{sign}{int(x):,}"


def _fresh_name(root: Path, stems: tuple[str, ...], rng: random.Random, suffix: str, folder: str = "") -> str:
    free = [s for s in stems if not any(p.stem == s for p in root.rglob("*"))]
    name = f"{pick(rng, free or [f'{s}_2' for s in stems])}{suffix}"
    return f"{folder}/{name}" if folder else name


def _table(rng: random.Random, root: Path, theme: str | None = None, *, n_rows: tuple[int, int] = (5, 12),
           folder: str | None = None, suffix: str = ".csv", blanks: int | None = None) -> Table:
    """A random table of ``theme`` (random if ``None``) at a random place in ``root``; with
    ``blanks``, some cells of that column left empty."""
    theme = theme or pick(rng, list(THEMES))
    spec = THEMES[theme]
    cols: list[Col] = list(spec["cols"])
    keep = [c for c in cols if rng.random() < 0.8 or c.kind in ("group", "unique") or c.kind in NUMERIC]
    if theme == "contacts":
        keep = [c for c in cols if c.names[0] in ("name", "email") or rng.random() < 0.8]
    header = [pick(rng, c.names) for c in keep]
    if rng.random() < 0.4:  # one casing for the whole header, as exports do
        header = [h.lower() if rng.random() < 0.5 else h for h in header]
    kinds = [c.kind for c in keep]
    styles = [_style(rng, c.kind) for c in keep]
    n = rng.randint(*n_rows)
    uniques = {i: sample(rng, PEOPLE if c.names[0] in ("name", "full_name") else ITEMS, min(n, 20))
               for i, c in enumerate(keep) if c.kind == "unique"}
    n = min([n, *(len(u) for u in uniques.values())])
    cells: list[list[str]] = []
    nums: list[list[float | None]] = []
    for r in range(n):
        row: list[str] = []
        row_nums: list[float | None] = []
        for i, c in enumerate(keep):
            v = uniques[i][r] if i in uniques else c.make(rng)
            if c.names[0] == "email":
                person = next((row[j] for j, k in enumerate(keep[:i]) if k.kind == "unique"), pick(rng, PEOPLE))
                v = f"{person.lower()}@{pick(rng, ('example.com', 'mail.org', 'acme.io'))}"
            if c.kind in NUMERIC:
                row.append(_write_number(float(v), styles[i]))
                row_nums.append(float(v))
            else:
                row.append(str(v))
                row_nums.append(None)
        cells.append(row)
        nums.append(row_nums)
    if blanks is not None:
        for r in sample(rng, range(n), rng.randint(1, max(1, n // 3))):
            cells[r][blanks] = ""
            nums[r][blanks] = None
    where = folder if folder is not None else (pick(rng, FOLDERS) if rng.random() < 0.3 else "")
    path = _fresh_name(root, spec["files"], rng, suffix, where)
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    with open(root / path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
        w.writerow(header)
        for row in cells:
            w.writerow(row)
            if rng.random() < 0.03:
                fh.write("\n")  # a stray blank line, as hand-edited files have
    return Table(path, theme, header, kinds, cells, nums, pick(rng, spec["rows"]))


SENTENCES = ("The garden opens in spring and closes at the end of October.",
             "Our team meets every Monday to plan the week.", "Nobody expected the results to be this good.",
             "Please bring your own laptop to the workshop.", "The old bridge was rebuilt in 1998.",
             "Most visitors arrive by train from the city.", "We sold more tickets than last year.",
             "The library is quiet in the early morning.", "A short walk leads to the lake.",
             "Coffee is served in the hall after the talk.", "The report is due on the first of the month.",
             "Every room has a window facing the sea.", "She wrote the first draft in two weeks.",
             "The committee will decide by Friday.", "Rain is expected for most of the weekend.",
             "It took three tries to get the recipe right.", "Our new office is close to the station.",
             "The museum is free on Sundays.", "He learned to play the piano at forty.",
             "The market sells fresh bread every morning.", "Two of the speakers cancelled at short notice.",
             "This chapter explains how the survey was run.", "The numbers were checked twice.")
TEXT_FILES = ("essay", "chapter1", "notes", "letter", "speech", "story", "draft", "article", "summary", "intro",
              "cover_letter", "blog_post")

#: log messages and the word a request may count them by (no message says a level's name)
MESSAGES: tuple[tuple[str, str], ...] = (
    ("Request timeout after 30s", "timeout"), ("Gateway timeout on /api/orders", "timeout"),
    ("User login succeeded", "login"), ("User login failed for bob", "login"),
    ("Disk usage at 91%", "disk"), ("Disk almost full on /var", "disk"),
    ("Cache cleared", "cache"), ("Cache miss for key session_42", "cache"),
    ("Backup completed", "backup"), ("Backup skipped: nothing changed", "backup"),
    ("Payment declined for order 1182", "payment"), ("Payment received for order 1190", "payment"),
    ("Upload finished in 4.2s", "upload"), ("Upload rejected: file too large", "upload"),
    ("Database connection lost", "database"), ("Database connection restored", "database"),
    ("Memory usage high", "memory"), ("Service started on port 8080", "service"),
    ("Service stopped", "service"), ("Scheduled job finished", "job"), ("Job queue is empty", "job"))
LOGS = ("server", "app", "system", "web", "cron", "access", "worker", "api", "sync", "deploy")
LEVELS_SAID = {"ERROR": ("errors", "ERROR", "error"), "WARN": ("warnings", "WARN", "warning"),
               "INFO": ("INFO", "info"), "DEBUG": ("DEBUG", "debug")}


def _distractors(rng: random.Random, root: Path, avoid: str = "") -> None:
    """A few other files, as a real folder has (another table, a readme)."""
    for _ in range(rng.randint(0, 2)):
        r = rng.random()
        if r < 0.5:
            _table(rng, root, pick(rng, [t for t in THEMES if t != avoid] or list(THEMES)), n_rows=(3, 6))
        elif r < 0.8:
            name = _fresh_name(root, ("README", "todo", "info", "readme_first"), rng, pick(rng, (".md", ".txt")))
            (root / name).write_text(pick(rng, SENTENCES) + "\n", encoding="utf-8")
        else:
            name = _fresh_name(root, ("config", "settings", "meta"), rng, ".json")
            (root / name).write_text(json.dumps({"version": rng.randint(1, 9), "owner": pick(rng, PEOPLE)}) + "\n",
                                     encoding="utf-8")


# -- wording --------------------------------------------------------------------------------------
def _words_of(header: str) -> str:
    """A header as words: ``unit_price`` is "unit price", ``Paid By`` "paid by"."""
    return " ".join(re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", header).lower()))


def _plural(words: str) -> str:
    """A noun's plural where adding an s makes one (``salary``, ``qty`` and ``on hand`` stay)."""
    if words.endswith(("s", "y", "x", "ch", "sh", "ed", "hand", "stock", "qty")):
        return words
    return words + "s"


def _say_col(rng: random.Random, header: str, plural_ok: bool = False) -> str:
    """How a request names a column: as written, in words, or (numbers) in the plural."""
    r = rng.random()
    if r < 0.3 or "-" in header:
        return header
    if r < 0.55 and plural_ok:
        return _plural(_words_of(header))
    return _words_of(header)


def _say_file(rng: random.Random, path: str) -> str:
    """How a request points at a file: its path, or its name (and folder) when it is in one."""
    p = Path(path)
    if p.parent == Path("."):
        return path
    return pick(rng, (path, path, p.name, f"{p.name} in the {p.parent.as_posix()} folder",
                      f"{p.name} (in {p.parent.as_posix()}/)"))


def _out(rng: random.Random, stems: tuple[str, ...], suffix: str, root: Path, folder: str = "") -> str:
    """A new output file (sometimes beside the input in its folder)."""
    where = folder if folder and rng.random() < 0.4 else ""
    return _fresh_name(root, stems, rng, suffix, where)


def _save(rng: random.Random, out: str, number: bool = False) -> str:
    """How a request says where a result goes."""
    if number:
        return pick(rng, (f"Put the number in {out}.", f"Write it to {out}.", f"Save just the number in {out}.",
                          f"Write the answer into {out}.", f"I'd like the result in {out}.", f"Store it in {out}, please.",
                          f"The number alone should go into {out}.", f"Put the answer in a file called {out}."))
    return pick(rng, (f"Save it as {out}.", f"Write the result to {out}.", f"Call the new file {out}.",
                      f"Put it in {out}.", f"The output should be {out}.", f"Save the result in a new file, {out}."))


def _finish(rng: random.Random, sentence: str) -> str:
    """A request with a polite opening on its first sentence (unless a question) and sometimes a
    remark before it."""
    parts = re.split(r"(?<=[.?!])\s+", sentence, maxsplit=1)
    first = parts[0] if parts[0].endswith("?") else polite(rng, parts[0])
    body = " ".join([first, *parts[1:]])
    ctx = pick(rng, CONTEXT)
    if ctx.endswith(", ") or ctx == "No rush, but ":
        if not re.match(r"I\b", body):
            body = body[0].lower() + body[1:]
    return ctx + body


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t" if path.suffix == ".tsv" else ",") if any(c.strip() for c in r)]
    return (rows[0], rows[1:]) if rows else ([], [])


def _number_in(path: Path) -> float | None:
    """The number a result file holds (``None``: none, or more than a number)."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8").strip()
    try:
        return float(text)
    except ValueError:
        return None


# -- csv_to_json ----------------------------------------------------------------------------------
def csv_to_json(rng: random.Random, root: Path) -> Draft:
    t = _table(rng, root, suffix=".tsv" if rng.random() < 0.12 else ".csv")
    _distractors(rng, root, t.theme)
    stem = Path(t.path).stem
    out = _out(rng, (stem, f"{stem}_records", f"{stem}_export", "data", "records", "export"), ".json", root,
               Path(t.path).parent.as_posix() if "/" in t.path else "")
    f = _say_file(rng, t.path)
    s = pick(rng, (f"Turn {f} into a JSON file called {out}.", f"Convert {f} to JSON and save it as {out}.",
                   f"I need {f} as a list of JSON records in {out}.",
                   f"Our web app only reads JSON. Could you export {f} to {out}?",
                   f"Make a JSON version of {f} named {out}.", f"Convert the table in {f} into JSON ({out}).",
                   f"Write the rows of {f} out as JSON objects, one per row, to {out}.",
                   f"Can you give me {f} in JSON format? {_save(rng, out)}"))
    numeric = [all(t.nums[r][i] is not None for r in range(len(t.cells))) and t.kinds[i] in NUMERIC
               for i in range(len(t.header))]

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            return f"{out} is not JSON"
        if not isinstance(data, list) or len(data) != len(t.cells):
            return f"{out} does not hold {len(t.cells)} records"
        for rec, row, nums in zip(data, t.cells, t.nums):
            if not isinstance(rec, dict) or list(rec) != t.header:
                return f"record keys {list(rec) if isinstance(rec, dict) else rec!r}"
            for i, h in enumerate(t.header):
                v = rec[h]
                if numeric[i]:
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or abs(v - (nums[i] or 0.0)) > 1e-9:
                        return f"{h}: {v!r} for {row[i]!r}"
                elif v != row[i]:
                    return f"{h}: {v!r}, not {row[i]!r}"
        return None

    return Draft(_finish(rng, s), (("csv_to_json", (t.path, out)),), check, "data.csv_to_json")


# -- json_to_csv ----------------------------------------------------------------------------------
def json_to_csv(rng: random.Random, root: Path) -> Draft:
    t = _table(rng, root, n_rows=(3, 8), folder="")
    (root / t.path).unlink()  # the table is only the source of the records
    records: list[dict[str, Any]] = []
    for row, nums in zip(t.cells, t.nums):
        rec: dict[str, Any] = {}
        for i, h in enumerate(t.header):
            if t.kinds[i] in NUMERIC:
                x = nums[i] or 0.0
                rec[h] = int(x) if x.is_integer() else x
            else:
                rec[h] = row[i]
        records.append(rec)
    optional = [h for h, k in zip(t.header, t.kinds) if k in ("text", "group")]
    if optional and rng.random() < 0.35:  # a record without a key, as JSON from an API has
        drop = pick(rng, optional)
        for rec in sample(rng, records, rng.randint(1, max(1, len(records) // 3))):
            del rec[drop]
    folder = pick(rng, FOLDERS) if rng.random() < 0.25 else ""
    src = _fresh_name(root, THEMES[t.theme]["files"], rng, ".json", folder)
    wrapper = rng.random()
    data: Any = records
    if wrapper < 0.25:
        data = {t.rows_noun.replace(" ", "_"): records}
    elif wrapper < 0.35:
        data = {"count": len(records), "items": records}
    (root / src).parent.mkdir(parents=True, exist_ok=True)
    (root / src).write_text(json.dumps(data, indent=pick(rng, (2, 4, None)), ensure_ascii=False) + "\n", encoding="utf-8")
    _distractors(rng, root, t.theme)
    stem = Path(src).stem
    out = _out(rng, (stem, f"{stem}_table", f"{stem}_flat", "table", "export"), ".csv", root, folder)
    f = _say_file(rng, src)
    s = pick(rng, (f"Convert {f} to a CSV table {out}.", f"Turn the records in {f} into a CSV file named {out}.",
                   f"I want to open {f} in Excel. Save it as {out}.", f"Make a CSV out of {f} and call it {out}.",
                   f"Could you write the JSON list in {f} as a table? {_save(rng, out)}",
                   f"Export the {t.rows_noun} in {f} to {out} as CSV.", f"Change {f} from JSON to CSV ({out})."))
    header: list[str] = []
    for rec in records:
        header += [k for k in rec if k not in header]

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        got_header, rows = _read_csv(p)
        if got_header != header:
            return f"header {got_header}, not {header}"
        if len(rows) != len(records):
            return f"{len(rows)} rows, not {len(records)}"
        for row, rec in zip(rows, records):
            for h, cell in zip(header, row):
                want = rec.get(h)
                if want is None:
                    if cell != "":
                        return f"{h}: {cell!r} for a missing value"
                elif isinstance(want, (int, float)):
                    try:
                        if abs(float(cell) - want) > 1e-9:
                            return f"{h}: {cell!r}, not {want!r}"
                    except ValueError:
                        return f"{h}: {cell!r}, not {want!r}"
                elif cell != want:
                    return f"{h}: {cell!r}, not {want!r}"
        return None

    return Draft(_finish(rng, s), (("json_to_csv", (src, out)),), check, "data.json_to_csv")


# -- total_by -------------------------------------------------------------------------------------
def total_by(rng: random.Random, root: Path) -> Draft:
    t = _table(rng, root, pick(rng, [n for n in THEMES if n != "contacts"]), n_rows=(6, 14))
    _distractors(rng, root, t.theme)
    g, v = pick(rng, t.groups()), pick(rng, t.numeric())
    group, value = t.header[g], t.header[v]
    gs, vs = _say_col(rng, group), _say_col(rng, value, plural_ok=True)
    stem = Path(t.path).stem
    gw = _words_of(group).replace(" ", "_")
    out = _out(rng, (f"{gw}_totals", f"totals_by_{gw}", f"{stem}_by_{gw}", f"{_words_of(value).replace(' ', '_')}_per_{gw}",
                     "summary", "totals"), ".csv", root, Path(t.path).parent.as_posix() if "/" in t.path else "")
    f = _say_file(rng, t.path)
    biggest = pick(rng, ("", "", ", biggest first", " (largest total at the top)", ", highest first"))
    s = pick(rng, (f"Total the {vs} per {gs} in {f} and write the totals to {out}{biggest}.",
                   f"Add up the {vs} for each {gs} from {f} into {out}{biggest}.",
                   f"What's the total {vs} for each {gs}? The data is in {f}. Put the summary in {out}.",
                   f"Sum {vs} grouped by {gs} in {f} and save the result as {out}.",
                   f"Could you make {out} with the {vs} of {f} totalled per {gs}?",
                   f"I need a {gs} summary of {f}: the total {vs} of each {gs}{biggest}. {_save(rng, out)}",
                   f"Group {f} by {gs} and add up {vs}. {_save(rng, out)}",
                   f"For each {gs} in {f}, what is the total {vs}? Write the totals per {gs} to {out}."))
    totals: dict[str, float] = {}
    for row, nums in zip(t.cells, t.nums):
        totals[row[g]] = totals.get(row[g], 0.0) + (nums[v] or 0.0)

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        header, rows = _read_csv(p)
        if len(header) != 2 or header[0].casefold() != group.casefold():
            return f"header {header}"
        got: dict[str, float] = {}
        for row in rows:
            try:
                got[row[0]] = float(row[1].replace(",", ""))
            except (ValueError, IndexError):
                return f"row {row}"
        if set(got) != set(totals):
            return f"groups {sorted(got)}, not {sorted(totals)}"
        wrong = [k for k in totals if abs(got[k] - totals[k]) > 0.006]
        if wrong:
            return f"{wrong[0]}: {got[wrong[0]]}, not {totals[wrong[0]]:.2f}"
        amounts = [got[row[0]] for row in rows]
        return None if amounts == sorted(amounts, reverse=True) else "not biggest first"

    return Draft(_finish(rng, s), (("total_by", (t.path, group, value, out)),), check, "data.total_by")


# -- column_stat ----------------------------------------------------------------------------------
STAT_WORDS = {"sum": ("total", "sum of the"), "mean": ("average", "mean"), "min": ("lowest", "smallest", "minimum"),
              "max": ("highest", "largest", "maximum", "biggest")}


def column_stat(rng: random.Random, root: Path) -> Draft:
    stat = pick(rng, ("sum", "mean", "mean", "min", "max", "count"))
    theme = pick(rng, [n for n in THEMES if n != "contacts"] + (["contacts"] if stat == "count" else []))
    if stat == "count":
        t = _table(rng, root, theme)
        i = pick(rng, [j for j, k in enumerate(t.kinds) if k != "unique"])
        blank = rng.sample(range(len(t.cells)), rng.randint(1, max(1, len(t.cells) // 3)))
        for r in blank:  # the count is of the filled-in cells
            t.cells[r][i], t.nums[r][i] = "", None
        _rewrite(root, t)
    else:
        t = _table(rng, root, theme)
        i = pick(rng, t.numeric())
    _distractors(rng, root, t.theme)
    col = t.header[i]
    cs = _say_col(rng, col, plural_ok=stat != "count")
    f = _say_file(rng, t.path)
    cw = _words_of(col).replace(" ", "_")
    if stat == "count":
        out = _out(rng, (f"{cw}_count", "count", "answer", "result", f"how_many_{cw}"), pick(rng, (".txt", ".txt", ".md")), root)
        ask = pick(rng, (f"How many {t.rows_noun} in {f} have a value in the {cs} column?",
                         f"How many values does the {col} column of {f} have?",
                         f"Count the filled-in {_words_of(col)} cells of {f}.",
                         f"Count how many rows of {f} have something in the {cs} column.",
                         f"Some {_words_of(col)} values are missing in {f}. How many are filled in?"))
        want = float(sum(1 for row in t.cells if row[i].strip()))
    else:
        word = pick(rng, STAT_WORDS[stat])
        out = _out(rng, (f"{word.split()[0]}_{cw}", f"{cw}_{stat}", f"{stat}_{cw}", "answer", "result", stat),
                   pick(rng, (".txt", ".txt", ".txt", ".md")), root)
        filled = [x for x in (n[i] for n in t.nums) if x is not None]
        want = {"sum": sum(filled), "mean": sum(filled) / len(filled), "min": min(filled), "max": max(filled)}[stat]
        ask = pick(rng, (f"What's the {word} {cs} in {f}?", f"What is the {word} {cs} of the {t.rows_noun} in {f}?",
                         f"Find the {word} {cs} in {f}.", f"I need the {word} of the {col} column in {f}.",
                         f"Work out the {word} {cs} across all {t.rows_noun} in {f}.",
                         f"Can you tell me the {word} {cs} in {f}?"))
        if stat == "sum":
            ask = pick(rng, (ask, f"Add up the {cs} column of {f}.", f"What do the {_plural(_words_of(col))} in {f} add up to?",
                             f"Sum the {cs} in {f}."))
    s = f"{ask} {_save(rng, out, number=True)}"
    exact = stat == "count"

    def check(r: Path) -> str | None:
        got = _number_in(r / out)
        if got is None:
            return f"no number in {out}"
        if (got != want) if exact else abs(got - want) > 0.006:
            return f"{got:g}, not {want:.4g}"
        return None

    return Draft(_finish(rng, s), (("column_stat", (t.path, col, stat, out)),), check, "data.column_stat")


def _rewrite(root: Path, t: Table) -> None:
    with open(root / t.path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t" if t.path.endswith(".tsv") else ",", lineterminator="\n")
        w.writerow(t.header)
        w.writerows(t.cells)


# -- count_words ----------------------------------------------------------------------------------
def count_words(rng: random.Random, root: Path) -> Draft:
    folder = pick(rng, FOLDERS) if rng.random() < 0.25 else ""
    src = _fresh_name(root, TEXT_FILES, rng, pick(rng, (".txt", ".txt", ".txt", ".md")), folder)
    paras = [" ".join(sample(rng, SENTENCES, rng.randint(1, 4))) for _ in range(rng.randint(1, 5))]
    text = ("\n\n" if rng.random() < 0.7 else "\n").join(paras) + "\n"
    (root / src).parent.mkdir(parents=True, exist_ok=True)
    (root / src).write_text(text, encoding="utf-8")
    _distractors(rng, root)
    want = len(text.split())
    stem = Path(src).stem
    out = _out(rng, ("words", "word_count", f"{stem}_words", f"{stem}_wordcount", "count", "length"), ".txt", root)
    f = _say_file(rng, src)
    s = pick(rng, (f"How many words are in {f}? {_save(rng, out, True)}",
                   f"Count the words of {f} and write the number to {out}.",
                   f"I need the word count of {f} saved in {out}.",
                   f"My {stem.replace('_', ' ')} ({f}) has a word limit. How many words is it? {_save(rng, out, True)}",
                   f"How long is {f} in words? {_save(rng, out, True)}",
                   f"What's the word count of {f}? {_save(rng, out, True)}",
                   f"Could you count how many words {f} has and put the count in {out}?"))

    def check(r: Path) -> str | None:
        got = _number_in(r / out)
        return None if got == want else f"{got} words, not {want}"

    return Draft(_finish(rng, s), (("count_words", (src, out)),), check, "data.count_words")


# -- count_lines ----------------------------------------------------------------------------------
def _log(rng: random.Random, root: Path) -> tuple[str, list[str], list[str], list[str]]:
    """A log file: its path, lines, each line's level and keyword."""
    warn = pick(rng, ("WARN", "WARNING"))
    levels = ["INFO", "INFO", "INFO", warn, "ERROR"] + (["DEBUG"] if rng.random() < 0.4 else [])
    style = pick(rng, ("plain", "bracket", "kv"))
    n = rng.randint(8, 22)
    lines, lv, kws = [], [], []
    for k in range(n):
        level = pick(rng, levels)
        msg, kw = pick(rng, MESSAGES)
        stamp = f"2024-{pick(rng, MONTHS)}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{k % 60:02d}"
        lines.append({"plain": f"{stamp} {level} {msg}", "bracket": f"[{stamp}] [{level}] {msg}",
                      "kv": f"time={stamp.replace(' ', 'T')} level={level.lower()} msg=\"{msg}\""}[style])
        lv.append("WARN" if level == "WARNING" else level)
        kws.append(kw)
    folder = pick(rng, ("logs", "log", "var/log", "")) if rng.random() < 0.5 else ""
    path = _fresh_name(root, LOGS, rng, ".log", folder)
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, lines, lv, kws


def count_lines(rng: random.Random, root: Path) -> Draft:
    r = rng.random()
    f_out = ("count", "answer", "result", "lines", "total")
    if r < 0.2:  # every line of a list
        folder = pick(rng, FOLDERS) if rng.random() < 0.2 else ""
        kind, noun = pick(rng, (("guests", "names"), ("todo", "tasks"), ("emails", "addresses"), ("cities", "cities"),
                                 ("shopping", "items"), ("signups", "people")))
        src = _fresh_name(root, (kind, f"{kind}_list", f"{kind}_2024"), rng, ".txt", folder)
        pool = {"names": PEOPLE, "tasks": tuple(f"{w} the {x}" for w in ("clean", "fix", "check") for x in ("printer", "garden", "report")),
                "addresses": tuple(f"{p.lower()}@example.com" for p in PEOPLE), "cities": CITIES, "items": ITEMS,
                "people": PEOPLE}[noun]
        lines = sample(rng, pool, rng.randint(4, min(15, len(pool))))
        (root / src).parent.mkdir(parents=True, exist_ok=True)
        (root / src).write_text("\n".join(lines) + "\n", encoding="utf-8")
        value, want = "*", len(lines)
        out = _out(rng, (f"{noun}_count", f"number_of_{noun}", *f_out), ".txt", root)
        f = _say_file(rng, src)
        s = pick(rng, (f"How many lines does {f} have? {_save(rng, out, True)}",
                       f"Count the lines of {f} and write the number to {out}.",
                       f"{f} has one of our {noun} per line. How many {noun} are there? {_save(rng, out, True)}",
                       f"How many {noun} are listed in {f} (one per line)? {_save(rng, out, True)}",
                       f"Count every non-empty line in {f}; put the count in {out}."))
    else:
        src, lines, lv, kws = _log(rng, root)
        f = _say_file(rng, src)
        if r < 0.65:
            level = pick(rng, sorted(set(lv) - {"INFO"} if len(set(lv) - {"INFO"}) else set(lv)))
            said = pick(rng, LEVELS_SAID[level])
            value = said
            want = sum(1 for x in lv if x == level)
            out = _out(rng, (f"{said.lower()}_count", f"{said.lower()}s" if not said.endswith("s") else said.lower(),
                             f"{Path(src).stem}_{said.lower()}", *f_out), ".txt", root)
            if said.endswith("s"):
                s = pick(rng, (f"How many {said} are in {f}? {_save(rng, out, True)}",
                               f"Count the {said} in {f} and write the number to {out}.",
                               f"How many {said} did {f} log? {_save(rng, out, True)}",
                               f"The service has been flaky. How many {said} does {f} show? {_save(rng, out, True)}"))
            else:
                s = pick(rng, (f"Count the lines of {f} that mention {said} and write the number to {out}.",
                               f"How many {said} lines are in {f}? {_save(rng, out, True)}",
                               f"How many lines in {f} say {said}? {_save(rng, out, True)}",
                               f"Count the {said} entries in {f}; the count goes in {out}."))
        else:
            kw = pick(rng, sorted(set(kws)))
            want = sum(1 for ln in lines if kw in ln.casefold())
            said = pick(rng, (kw, kw, f"'{kw}'", _plural(kw)))
            value = said.strip("'")
            out = _out(rng, (f"{kw}_count", f"{kw}s", f"{kw}_lines", *f_out), ".txt", root)
            s = pick(rng, (f"How many lines of {f} mention {said}? {_save(rng, out, True)}",
                           f"Count the lines in {f} that contain {said} and write the count to {out}.",
                           f"How often does {kw} come up in {f}? Count the lines and put the number in {out}."
                           if said == kw else f"Count how many lines of {f} are about {said}; put the number in {out}.",
                           f"I'm looking into {kw} problems. How many lines of {f} are about {said}? {_save(rng, out, True)}"))
    _distractors(rng, root)

    def check(r: Path) -> str | None:
        got = _number_in(r / out)
        return None if got == want else f"{got} lines, not {want}"

    return Draft(_finish(rng, s), (("count_lines", (src, value, out)),), check, "data.count_lines")


# -- sort_csv -------------------------------------------------------------------------------------
def sort_csv(rng: random.Random, root: Path) -> Draft:
    t = _table(rng, root, n_rows=(5, 12))
    _distractors(rng, root, t.theme)
    varied = [j for j, k in enumerate(t.kinds) if k in ("unique", "group", "num", "money") and len({row[j] for row in t.cells}) > 1]
    i = pick(rng, [j for j in varied if t.kinds[j] in NUMERIC] * 2 + varied)
    col = t.header[i]
    is_num = t.kinds[i] in NUMERIC
    desc = rng.random() < (0.6 if is_num else 0.25)

    def key(row_index: int) -> Any:
        return t.nums[row_index][i] if is_num else t.cells[row_index][i].casefold()

    keys = [key(k) for k in range(len(t.cells))]
    if keys == sorted(keys, reverse=desc):  # already in order: shuffle so the request has work to do
        order = list(range(len(t.cells)))
        while [keys[k] for k in order] == sorted(keys, reverse=desc):
            rng.shuffle(order)
        t.cells, t.nums = [t.cells[k] for k in order], [t.nums[k] for k in order]
        _rewrite(root, t)
    cs = _say_col(rng, col, plural_ok=False)
    f = _say_file(rng, t.path)
    if is_num:
        way = (pick(rng, (", largest first", " from highest to lowest", " in descending order", ", biggest at the top",
                          " so the highest is on top")) if desc else
               pick(rng, ("", " from lowest to highest", ", smallest first", " in ascending order")))
    else:
        way = (pick(rng, (" from Z to A", " in reverse alphabetical order", ", descending")) if desc else
               pick(rng, ("", " alphabetically", " from A to Z")))
    s = pick(rng, (f"Sort {f} by {cs}{way}.", f"Order the rows of {f} by {cs}{way}.",
                   f"Could you put {f} in order of {cs}{way}?", f"Please sort the table in {f} by the {col} column{way}.",
                   f"Rearrange {f} by {cs}{way}, keeping the header on top.",
                   f"The rows of {f} are all over the place. Sort them by {cs}{way}."))
    rows_before = sorted(map(tuple, t.cells))

    def check(r: Path) -> str | None:
        header, rows = _read_csv(r / t.path)
        if header != t.header:
            return f"header {header}"
        if sorted(map(tuple, rows)) != rows_before:
            return "rows changed"
        if is_num:
            index = {tuple(c): n[i] or 0.0 for c, n in zip(t.cells, t.nums)}
            got: list[Any] = [index[tuple(row)] for row in rows]
        else:
            got = [row[i].casefold() for row in rows]
        return None if got == sorted(got, reverse=desc) else f"not sorted by {col}"

    return Draft(_finish(rng, s), (("sort_csv", (t.path, col, desc)),), check, "data.sort_csv")


# -- remove_duplicate_rows -----------------------------------------------------------------------
def remove_duplicate_rows(rng: random.Random, root: Path) -> Draft:
    if rng.random() < 0.55:
        t = _table(rng, root, n_rows=(4, 9))
        lines = [",".join(f'"{c}"' if "," in c else c for c in row) for row in t.cells]
        head = ",".join(t.header)
        src, what = t.path, pick(rng, ("rows", "rows", "lines", "entries", t.rows_noun))
        theme = t.theme
    else:
        kind, noun = pick(rng, (("emails", "addresses"), ("guests", "names"), ("cities", "cities"), ("items", "items"),
                                ("subscribers", "addresses")))
        pool = {"addresses": tuple(f"{p.lower()}@{d}" for p in PEOPLE for d in ("example.com", "mail.org")),
                "names": PEOPLE, "cities": CITIES, "items": ITEMS}[noun]
        lines = sample(rng, pool, rng.randint(4, 10))
        head, what, theme = "", pick(rng, ("lines", noun, "entries")), ""
        folder = pick(rng, FOLDERS) if rng.random() < 0.25 else ""
        src = _fresh_name(root, (kind, f"{kind}_list", f"{kind}_raw", f"{kind}_2024"), rng, ".txt", folder)
    for _ in range(rng.randint(1, 4)):  # repeats, later in the file
        k = rng.randrange(len(lines))
        lines.insert(rng.randint(k + 1, len(lines)), lines[k])
    (root / src).parent.mkdir(parents=True, exist_ok=True)
    (root / src).write_text("\n".join(([head] if head else []) + lines) + "\n", encoding="utf-8")
    _distractors(rng, root, theme)
    f = _say_file(rng, src)
    s = pick(rng, (f"{f} has some {what} twice. Remove the duplicates.", f"Remove the duplicate {what} from {f}.",
                   f"Some {what} in {f} are repeated. Keep each one once.", f"Deduplicate {f}.",
                   f"Drop the repeated {what} of {f}, keeping the first of each.",
                   f"I pasted things into {f} more than once; could you get rid of the duplicate {what}?",
                   f"Make sure every {what.rstrip('s') if what.endswith('s') and what != 'addresses' else what} "
                   f"appears only once in {f}."))
    want = ([head] if head else []) + list(dict.fromkeys(lines))

    def check(r: Path) -> str | None:
        got = [ln for ln in (r / src).read_text(encoding="utf-8").splitlines() if ln.strip()]
        if got == want:
            return None
        return f"{len(got)} lines, not {len(want)}" if len(got) != len(want) else "lines out of order"

    return Draft(_finish(rng, s), (("remove_duplicate_rows", (src,)),), check, "data.remove_duplicate_rows")


# -- filter_rows ----------------------------------------------------------------------------------
def filter_rows(rng: random.Random, root: Path) -> Draft:
    any_value = rng.random() < 0.15
    t = _table(rng, root, n_rows=(6, 14))
    if any_value:
        i = pick(rng, [j for j, k in enumerate(t.kinds) if k != "unique"])
        for r in rng.sample(range(len(t.cells)), rng.randint(1, max(1, len(t.cells) // 3))):
            t.cells[r][i], t.nums[r][i] = "", None
        _rewrite(root, t)
        value, said = "*", ""
    else:
        i = pick(rng, t.groups())
        said = pick(rng, [row[i] for row in t.cells])
        value = said.lower() if rng.random() < 0.3 else said
    _distractors(rng, root, t.theme)
    col = t.header[i]
    cs = _say_col(rng, col)
    f = _say_file(rng, t.path)
    stem = Path(t.path).stem
    tag = re.sub(r"\W+", "_", value.lower()) if value != "*" else f"with_{_words_of(col).replace(' ', '_')}"
    out = _out(rng, (f"{tag}_{stem}", f"{stem}_{tag}", f"{tag}_only", tag, f"filtered_{stem}", "filtered"), ".csv", root,
               Path(t.path).parent.as_posix() if "/" in t.path else "")
    if value == "*":
        s = pick(rng, (f"Write the rows of {f} that have a {cs} (not blank) to {out}.",
                       f"Some {t.rows_noun} in {f} have no {cs}. Copy the ones that do have one into {out}.",
                       f"Keep the rows of {f} with a filled-in {cs} column and save them as {out}."))
    else:
        s = pick(rng, (f"Copy the rows of {f} whose {cs} is {value} into {out}.",
                       f"Put every row of {f} where the {cs} is {value} into {out}.",
                       f"I only want the rows with {cs} {value} from {f}. {_save(rng, out)}",
                       f"Make a new file {out} with just the {t.rows_noun} in {f} whose {cs} is {value}.",
                       f"Filter {f} to the rows where {cs} = {value} and write them to {out}.",
                       f"Which {t.rows_noun} in {f} have {value} as their {cs}? Save those rows to {out}."))
    want = value.casefold()
    kept = [row for row in t.cells if (row[i].strip() != "" if value == "*" else row[i].casefold() == want)]

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        header, rows = _read_csv(p)
        if header != t.header:
            return f"header {header}"
        return None if rows == kept else f"{len(rows)} rows, not {len(kept)}"

    return Draft(_finish(rng, s), (("filter_rows", (t.path, col, value, out)),), check, "data.filter_rows")


# -- keep_columns ---------------------------------------------------------------------------------
def keep_columns(rng: random.Random, root: Path) -> Draft:
    t = _table(rng, root, n_rows=(4, 10))
    _distractors(rng, root, t.theme)
    k = rng.randint(1, min(3, len(t.header) - 1))
    idx = sample(rng, range(len(t.header)), k)
    if rng.random() < 0.5:
        idx.sort()
    cols = [t.header[j] for j in idx]
    single = len(cols) == 1 and re.fullmatch(r"[A-Za-z][\w-]*", cols[0]) is not None and rng.random() < 0.7
    arg = cols[0] if single else ", ".join(cols)
    named = cols[0] if single else pick(rng, (f"'{arg}'", f'"{arg}"'))
    stem = Path(t.path).stem
    out = _out(rng, (f"{stem}_short", f"{stem}_slim", f"{stem}_{'_'.join(_words_of(c).replace(' ', '_') for c in cols)}",
                     "slim", "subset", "selected_columns"), ".csv", root,
               Path(t.path).parent.as_posix() if "/" in t.path else "")
    f = _say_file(rng, t.path)
    if single:
        s = pick(rng, (f"I only need the {named} column of {f}. {_save(rng, out)}",
                       f"Extract the {named} column of {f} into {out}.",
                       f"Copy just the {named} column from {f} into a new file {out}."))
    else:
        s = pick(rng, (f"Keep only the columns {named} of {f} and save them as {out}.",
                       f"From {f}, keep just {named} and write them to {out}.",
                       f"I only need the {named} columns of {f}, saved as {out}.",
                       f"Make {out} with only the columns {named} from {f}, in that order.",
                       f"{f} has too many columns. Write {named} to {out} and leave out the rest."))
    want = [[row[j] for j in idx] for row in t.cells]

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        header, rows = _read_csv(p)
        if header != cols:
            return f"header {header}, not {cols}"
        return None if rows == want else "wrong cells"

    return Draft(_finish(rng, s), (("keep_columns", (t.path, arg, out)),), check, "data.keep_columns")


# -- set_json_value -------------------------------------------------------------------------------
#: JSON files of a project or a tool, with keys and the values a request may set them to
PROJECT_JSON = {
    "package.json": {"version": ("1.0.1", "1.2.0", "2.0.0", "0.9.3"), "license": ("MIT", "ISC", "Apache-2.0"),
                     "private": ("true", "false"), "description": ("A small web shop", "Team dashboard")},
    "config.json": {"port": ("8080", "3000", "5000"), "debug": ("true", "false"), "timeout": ("30", "60", "90"),
                    "region": ("eu-west", "us-east")},
    "manifest.json": {"name": ("Notes", "Field Log"), "version": ("1.1", "2.0", "3.4.1"),
                      "theme_color": ("#336699", "#222222")},
}
_SET_WORDS = {"version": ("bump the version", "set the version", "change the version"),
              "port": ("move the port", "set the port", "change the port")}


def set_json_value(rng: random.Random, root: Path) -> Draft:
    name = pick(rng, sorted(PROJECT_JSON))
    keys = PROJECT_JSON[name]
    data: dict[str, Any] = {"name": "project"} if name == "package.json" else {}
    for k, values in keys.items():
        if rng.random() < 0.8:
            data[k] = json_or_text(pick(rng, values))
    key = pick(rng, sorted(keys))
    value = pick(rng, [v for v in keys[key] if json_or_text(v) != data.get(key)])
    (root / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    _distractors(rng, root)
    ask = pick(rng, _SET_WORDS.get(key, (f"set {key}", f"change {key}", f"update {key}")))
    s = pick(rng, (f"{ask.capitalize()} in {name} to {value}.", f"In {name}, {ask} to {value}.",
                   f"Can you {ask} in {name} to {value}?", f"{name} should have {key} {value}; please update it.",
                   f"We're releasing: {ask} in {name} to {value}." if key == "version" else f"Make {key} {value} in {name}."))

    def check(r: Path) -> str | None:
        got = json.loads((r / name).read_text(encoding="utf-8"))
        return None if got.get(key) == json_or_text(value) else f"{key} is {got.get(key)!r}"

    return Draft(_finish(rng, s), (("set_json_value", (name, key, value)),), check, "data.set_json_value")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    csv_to_json, json_to_csv, total_by, column_stat, count_words, count_lines, sort_csv, remove_duplicate_rows,
    filter_rows, keep_columns, set_json_value)}
