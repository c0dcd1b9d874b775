"""How well a workspace's resulting files reflect the request: the score best-of-K keeps a candidate by.

A tool specialist with ``best_of=K`` runs K candidate replies on scratch copies of its workspace
and keeps the one scoring highest here (:mod:`agentlab.agents.best_of`). The score reads only
the request's own words (:func:`~agentlab.toolkits.slots.request_values`: quoted phrases,
numbers, cell references, file names, words) and two folders: the workspace at the episode's
start and a candidate's result. It never reads a task's evaluator, expected values or reference
solution, and is never given a task: selection by the benchmark's own judgement would be
grading with the answer key, and the lift measured over K = 1 would be the key's, not the agent's.

What counts (in score units):

* each call that failed (or a reply that gives up): -:data:`ERROR`; a candidate that errs loses
  to any that does not;
* each file that opened before (its toolkit's ``describe``; a JSON file also parses) and no
  longer does, or a new file of a kind that opened before that does not: -:data:`BROKEN`;
* nothing changed since the start: -:data:`UNCHANGED`;
* each value the request names whose occurrences in the changed files went up: +its weight
  (:data:`EXACT` for a quoted phrase, a number, a file name or a URL; :data:`WORD` for a plain
  word or pair of words); went down (a row deleted, a name replaced): half that; a cell reference
  counts when that cell of a changed spreadsheet changed.

The folders must be private copies (:meth:`~agentlab.safepath.SafeFolder.private_copy`): files
are listed without following links, but ``describe`` and the readers open them by path.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.safepath import SafeFolder
from agentlab.tasks.requests import split_asks
from agentlab.toolkits.base import Toolkit
from agentlab.toolkits.slots import mentioned, request_values

ERROR = 10.0
BROKEN = 5.0
UNCHANGED = 1.0
EXACT = 1.0
WORD = 0.5
#: a named value that went away scores this share of its weight (it may be what was asked, or collateral)
GONE = 0.5
#: files read in full at most (a bigger one is compared by its description alone)
MAX_READ = 4 * 1024 * 1024
_SHEETS = (".xlsx", ".xlsm")
_QUOTES = (("'", "'"), ('"', '"'), ("‘", "’"), ("“", "”"))


@dataclass(frozen=True)
class FileView:
    """One file as the checker compares it: its bytes' digest, its text, whether it opens."""

    digest: str
    text: str
    opens: bool


@dataclass(frozen=True)
class Named:
    """A value the request names, and what it is worth when the result reflects it."""

    value: str
    kind: str  #: ``cell``, ``number``, ``exact`` or ``word``
    weight: float


def named_values(instruction: str) -> list[Named]:
    """The values ``instruction`` names, each once (case-insensitive), the most exact kind first."""
    said = request_values(instruction)
    out: dict[str, Named] = {}

    def add(value: str, kind: str, weight: float) -> None:
        if value and value.casefold() not in out:
            out[value.casefold()] = Named(value, kind, weight)

    for c in said.cells:
        add(c, "cell", EXACT)
    for n in said.numbers:
        add(n, "number", EXACT)
    for v in [*said.mentioned_files, *said.urls]:
        add(v, "exact", EXACT)
    for p in said.phrases:
        quoted = any(f"{a}{p}{b}" in instruction for a, b in _QUOTES)
        add(p, "exact" if quoted else "word", EXACT if quoted else WORD)
    return list(out.values())


def snapshot(folder: Path, kit: Toolkit) -> dict[str, FileView]:
    """Every regular file of ``folder`` (its ``.agentlab`` scratch left out, links not followed)."""
    out = {}
    for e in SafeFolder(folder).walk(lambda rel: rel.split("/", 1)[0].startswith(".agentlab")):
        if e.kind == "file":
            out[e.rel] = _view(folder, e.rel, kit)
    return out


@dataclass(frozen=True)
class Diff:
    """What changed between two folders, as the checker reads it: the changed files' text before
    (``was``) and after (``now``), each file's path heading its text, and the changed spreadsheets."""

    before: Path
    after: Path
    start: dict[str, FileView]
    end: dict[str, FileView]
    changed: list[str]
    was: str
    now: str
    sheets: list[str]
    #: every file of the start, its path heading its text
    held: str = ""

    @classmethod
    def of(cls, before: Path, after: Path, kit: Toolkit) -> Diff:
        start, end = snapshot(before, kit), snapshot(after, kit)
        changed = sorted(rel for rel in start.keys() | end.keys() if _digest(start, rel) != _digest(end, rel))
        was = "\n".join(f"{rel}\n{start[rel].text}" for rel in changed if rel in start)
        now = "\n".join(f"{rel}\n{end[rel].text}" for rel in changed if rel in end)
        sheets = [rel for rel in changed if Path(rel).suffix.lower() in (*_SHEETS, ".csv")]
        held = "\n".join(f"{rel}\n{v.text}" for rel, v in start.items())
        return cls(before, after, start, end, changed, was, now, sheets, held)

    def reflects(self, v: Named) -> str | None:
        """How the result reflects the named value ``v`` (``"changed"``, ``"appeared"``, ``"gone"``),
        or ``None`` when it does not."""
        if v.kind == "cell":
            if self.sheets and any(_cells(self.before / rel, v.value) != _cells(self.after / rel, v.value)
                                   for rel in self.sheets):
                return "changed"
            return None
        c0, c1 = _count(v, self.was), _count(v, self.now)
        return "appeared" if c1 > c0 else "gone" if c1 < c0 else None

    def is_new(self, v: Named) -> bool:
        """Whether the result must show ``v`` for the request to be met: a value the start did not
        hold anywhere (a new name, a new number, a new file), or a cell (a place that changes).
        A value the start already held may say *where* to act ("the profile is in
        .config/chromium/Default", "set 'enabled' to false") as well as what to remove, so its
        count says nothing certain."""
        if v.kind == "cell":
            return True
        rel = v.value.strip("/").removeprefix("./")
        if re.fullmatch(r"\.\w+", rel):  # a bare extension ("keeping the .xlsx format") names a kind, not a file
            return False
        if rel in self.start or any(k.startswith(rel + "/") for k in self.start):
            return False
        return _count(v, self.held) == 0


def request_score(instruction: str, before: Path, after: Path, kit: Toolkit,
                  call_results: list[dict[str, Any]]) -> tuple[float, str]:
    """(score, why): how well ``after`` reflects ``instruction`` compared with ``before``, given
    what each call of the candidate returned (``{"ok": bool, "error": ...}`` per call)."""
    d = Diff.of(before, after, kit)
    start, end, changed = d.start, d.end, d.changed
    score, why = 0.0, []
    failed = [r for r in call_results if not r.get("ok")]
    if failed:
        score -= ERROR * len(failed)
        why.append(f"call error: {str(failed[0].get('error', ''))[:120]}")
    if not changed:
        score -= UNCHANGED
        why.append("nothing changed")
    opened_kinds = {Path(rel).suffix.lower() for rel, v in start.items() if v.opens}
    broken = [rel for rel in changed if rel in end and not end[rel].opens
              and (start[rel].opens if rel in start else Path(rel).suffix.lower() in opened_kinds)]
    if broken:
        score -= BROKEN * len(broken)
        why.append(f"no longer opens: {', '.join(broken)}")
    hits = []
    for v in named_values(instruction):
        how = d.reflects(v)
        if how is None:
            continue
        score += v.weight * (GONE if how == "gone" else 1.0)
        hits.append(f"{v.value} changed" if how == "changed" else f"{v.value!r} {how}")
    if changed:
        why.append("changed " + ", ".join(changed[:4]) + (" ..." if len(changed) > 4 else ""))
    why.append("reflects " + ", ".join(hits[:6]) + (" ..." if len(hits) > 6 else "") if hits else "reflects nothing named")
    return round(score, 4), "; ".join(why)


def unmet_asks(instruction: str, before: Path, after: Path, kit: Toolkit) -> list[str]:
    """The asks of ``instruction`` (:func:`~agentlab.tasks.requests.split_asks`) that the
    result does not reflect yet, in order: an ask naming an exact value (a quoted phrase, a
    number, a cell, a new file name, a URL) of which none appeared, went away or changed.

    Why: a small specialist told to finish a two-part request writes the first part's call and
    then ``done()`` (issue #38: all 27 multi-operation tasks of the second development set). This
    reads the request and the two folders only, as :func:`request_score` does, never a task's
    evaluator. Only values the start did not hold are checked (:meth:`Diff.is_new`): an ask that
    names none (``make it greyscale``, ``delete the 'Old wiki' bookmark``) cannot be checked this
    way and is never reported, nor is a number of degrees or times (no file states it); a false
    "met" only leaves the model's own ``done()`` standing.

    A settings toolkit's ask may name no value at all ("I always want it fullscreen", "and switch
    on format on save"): when it names settings of the toolkit's catalogue by their words
    (:func:`~agentlab.toolkits.slots.mentioned`) and no line naming any of them changed anywhere in
    the workspace, it is unmet too."""
    d = Diff.of(before, after, kit)
    ended = "\n".join(f"{rel}\n{v.text}" for rel, v in d.end.items()) if kit.catalogue else ""
    out = []
    for piece in split_asks(instruction):
        exact = [v for v in named_values(piece) if v.kind != "word" and d.is_new(v) and not _turn(v, piece)]
        if exact:
            if not any(d.reflects(v) for v in exact):
                out.append(piece)
        elif kit.catalogue and _settings_untouched(d.held, ended, mentioned(list(kit.catalogue), piece)):
            out.append(piece)
    return out


def _settings_untouched(held: str, ended: str, keys: list[str]) -> bool:
    """Whether ``keys`` (catalogue settings an ask names) were named and every line naming one of
    them reads the same at the end (``ended``: every file's text) as at the start (``held``), in
    every file (a vlcrc's ``#fullscreen=0`` becoming ``fullscreen=1``, a settings.json's
    ``"editor.formatOnSave": true`` appearing)."""
    if not keys:
        return False

    def lines(text: str, key: str) -> list[str]:
        last = re.escape(key.rsplit(".", 1)[-1])
        return [ln.strip() for ln in text.splitlines() if re.search(rf"(?<![\w-]){last}(?![\w-])", ln, re.IGNORECASE)]

    return all(sorted(lines(held, k)) == sorted(lines(ended, k)) for k in keys)


def _turn(v: Named, text: str) -> bool:
    """Whether the number ``v`` is an amount of turning or repeating ("90 degrees", "3 times"):
    a change no file states, so its absence says nothing."""
    return v.kind == "number" and re.search(rf"(?<![\d.]){re.escape(v.value)}\s*(?:°|deg|degrees?\b|times\b)",
                                            text, re.IGNORECASE) is not None


def _digest(files: dict[str, FileView], rel: str) -> str | None:
    return files[rel].digest if rel in files else None


def _view(folder: Path, rel: str, kit: Toolkit) -> FileView:
    path = folder / rel
    data = path.read_bytes()  # a private copy holds no file over its size limit
    digest = hashlib.sha256(data).hexdigest()
    described, opens = "", True
    if kit.describe is not None:
        try:
            described = kit.describe(path).replace(str(folder), ".")
        except Exception:  # a file the toolkit cannot read, whatever the library raised
            opens = False
    if opens and path.suffix.lower() == ".json" and data:
        try:
            json.loads(data)
        except ValueError:
            opens = False
    # the whole text, and the description beside it: what a text does not hold (a font size, an
    # image's size) a description shows
    content = _content(path, data) if len(data) <= MAX_READ else ""
    return FileView(digest, f"{content}\n{described}".strip(), opens)


def _content(path: Path, data: bytes) -> str:
    """All of a file's text (a description shows only its start): every cell, paragraph or shape
    text of an Office file, the text of a text file; '' when it cannot be read so."""
    suffix = path.suffix.lower()
    try:
        if suffix in _SHEETS:
            import openpyxl

            wb = openpyxl.load_workbook(path)
            return "\n".join(f"sheet {ws.title}\n" + "\n".join(" | ".join("" if v is None else str(v) for v in row)
                                                               for row in ws.iter_rows(values_only=True))
                             for ws in wb.worksheets)
        if suffix == ".docx":
            import docx

            doc = docx.Document(str(path))
            cells = [c.text for t in doc.tables for r in t.rows for c in r.cells]
            return "\n".join([p.text for p in doc.paragraphs] + cells)
        if suffix == ".pptx":
            import pptx

            prs = pptx.Presentation(str(path))
            return "\n".join(sh.text_frame.text for s in prs.slides for sh in s.shapes if sh.has_text_frame)
        return data.decode("utf-8")
    except Exception:  # unreadable this way: the description stands in
        return ""


def _cells(path: Path, ref: str) -> list[str]:
    """The value at ``ref`` (``B4``) in every sheet of a spreadsheet (a CSV: its one table); [] when
    the file is not there or does not open."""
    if not path.is_file():
        return []
    try:
        if path.suffix.lower() == ".csv":
            m = re.fullmatch(r"([A-Z]{1,2})(\d+)", ref.upper())
            if m is None:
                return []
            col = sum((ord(ch) - 64) * 26 ** i for i, ch in enumerate(reversed(m.group(1)))) - 1
            rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
            row = int(m.group(2)) - 1
            return [rows[row][col] if row < len(rows) and col < len(rows[row]) else ""]
        import openpyxl

        wb = openpyxl.load_workbook(path)
        return [repr(ws[ref.upper()].value) for ws in wb.worksheets]
    except Exception:  # an unreadable file has no cells to compare
        return []


_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?!\d|\.\d)")


def _count(v: Named, text: str) -> int:
    """Occurrences of ``v`` in ``text``: a number by value (``41`` is ``41.0``, not ``141``), any
    other value as a whole word or phrase, case-insensitive."""
    if v.kind == "number":
        try:
            want = abs(float(v.value))
        except ValueError:
            return 0
        return sum(1 for m in _NUMBER.finditer(text) if float(m.group()) == want)
    return len(re.findall(rf"(?<!\w){re.escape(v.value)}(?!\w)", text, re.IGNORECASE))
