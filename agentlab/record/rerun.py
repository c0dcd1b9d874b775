"""Reruns: carry out again the episodes whose rows failed (or ended in a harness error), keeping
the rows they replace in the run's history.

``agentlab exec --resume --rerun failed`` (``errors``; ``failed,errors``; ``--retry-errors`` is
``--rerun errors``). Why this layout: every reader of a run (``agentlab report``, ``view``, the
studies, ``--resume`` itself) reads ``results.jsonl`` as one row per (task, seed); keeping it so
keeps them all working. A replaced row moves to ``history.jsonl`` beside it, and its episode
folder to ``history/<its episode path>/attempt-<n>/``; the new row carries ``attempt: n + 1``
(a row without ``attempt`` is attempt 1). Order, so that a crash anywhere loses nothing:

1. each episode folder is renamed into ``history/`` (a rename is atomic);
2. each row is appended to ``history.jsonl`` (fsynced; skipped when that attempt is already there);
3. ``results.jsonl`` is rewritten without those rows (atomically: the old file or the new).

A crash before 3 leaves the rows in ``results.jsonl`` and repeating the command repeats nothing
twice; a crash after 3 leaves them out of ``results.jsonl``, so a plain ``--resume`` carries out
exactly the reruns that did not finish.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agentlab.errors import ConfigError
from agentlab.fileio import append_jsonl, read_jsonl
from agentlab.record.row import EpisodeRow

log = logging.getLogger(__name__)

HISTORY_FILE = "history.jsonl"
HISTORY_DIR = "history"
#: what ``--rerun`` may name: rows that failed (judged, success false) and harness-error rows
KINDS = ("failed", "errors")

Key = tuple[Any, Any]


def parse_rerun(text: str | None, *, retry_errors: bool = False) -> frozenset[str]:
    """``"failed"``, ``"errors"`` or ``"failed,errors"`` (``--retry-errors`` adds ``errors``); one line otherwise."""
    kinds = {"errors"} if retry_errors else set()
    for item in (text or "").split(",") if text is not None else []:
        item = item.strip()
        if item not in KINDS:
            raise ConfigError(f"--rerun: {item!r} is not one of {', '.join(KINDS)} (several: --rerun failed,errors)")
        kinds.add(item)
    return frozenset(kinds)


def outcome(row: Mapping[str, Any]) -> str:
    """``"error"`` (a harness error), ``"succeeds"`` or ``"fails"``."""
    if row.get("error"):
        return "error"
    return "succeeds" if row.get("success") is True else "fails"


def wanted(row: Mapping[str, Any], kinds: frozenset[str]) -> bool:
    """Whether ``--rerun kinds`` runs this row's episode again."""
    what = outcome(row)
    return (what == "fails" and "failed" in kinds) or (what == "error" and "errors" in kinds)


def key(row: Mapping[str, Any]) -> Key:
    return row.get("id"), row.get("seed")


def attempt(row: Mapping[str, Any]) -> int:
    a = row.get("attempt")
    return a if isinstance(a, int) and not isinstance(a, bool) and a > 0 else 1


def history_path(out_dir: Path) -> Path:
    return out_dir / HISTORY_FILE


def read_history(out_dir: Path) -> list[dict[str, Any]]:
    path = history_path(out_dir)
    return read_jsonl(path) if path.is_file() else []


def last_attempts(history: Iterable[Mapping[str, Any]]) -> dict[Key, int]:
    """(id, seed) -> the highest attempt number in the history."""
    out: dict[Key, int] = {}
    for row in history:
        out[key(row)] = max(out.get(key(row), 0), attempt(row))
    return out


def retire(out_dir: Path, rows: Iterable[tuple[dict[str, Any], Path | None]]) -> None:
    """Move replaced rows (each with its episode folder, or None) into the run's history: steps 1
    and 2 of the module docstring; the caller then rewrites ``results.jsonl`` without them."""
    seen = {(*key(r), attempt(r)) for r in read_history(out_dir)}
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for row, folder in rows:
        n = attempt(row)
        kept = EpisodeRow.load(row)
        if folder is not None:
            dest = out_dir / HISTORY_DIR / folder.relative_to(out_dir) / f"attempt-{n}"
            if folder.is_dir() and not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(folder, dest)
            if dest.is_dir():
                kept.trajectory = dest.relative_to(out_dir).as_posix()
        if (*key(row), n) in seen:
            continue
        kept.attempt, kept.replaced = n, when
        append_jsonl(history_path(out_dir), kept.to_json())
        seen.add((*key(row), n))


@dataclass(frozen=True)
class RerunChange:
    """One rerun episode: its outcome before (the replaced row) and now."""

    id: str
    seed: int | None
    attempt: int
    before: str
    after: str

    @property
    def label(self) -> str:
        return _label(_change(self.before, self.after), 1)


def changes(rows: Iterable[Mapping[str, Any]], history: Iterable[Mapping[str, Any]]) -> list[RerunChange]:
    """Every row of ``rows`` that is a rerun (attempt > 1) against the attempt it replaced."""
    prior: dict[tuple[Any, Any, int], Mapping[str, Any]] = {(*key(r), attempt(r)): r for r in history}
    out = []
    for row in rows:
        n = attempt(row)
        before = prior.get((*key(row), n - 1)) if n > 1 else None
        if before is not None:
            seed = row.get("seed")
            out.append(RerunChange(str(row.get("id")), seed if isinstance(seed, int) else None, n,
                                   outcome(before), outcome(row)))
    return out


_WORDS = {"succeeds": ("succeeds", "succeed"), "fails": ("fails", "fail"),
          "error": ("a harness error", "harness errors")}


def _change(before: str, after: str) -> tuple[str, str]:
    return ("still" if before == after else "now"), after


def _label(change: tuple[str, str], n: int) -> str:
    when, after = change
    return f"{when} {_WORDS[after][0 if n == 1 else 1]}"


def summary(found: list[RerunChange], *, pending: int = 0) -> str:
    """``"3 rerun: 1 now succeeds, 2 still fail"`` (``pending``: reruns not carried out yet)."""
    groups = Counter(_change(c.before, c.after) for c in found)
    order = sorted(groups, key=lambda k: (list(_WORDS).index(k[1]), k[0]))
    text = f"{len(found)} rerun" + (f": {', '.join(f'{groups[k]} {_label(k, groups[k])}' for k in order)}" if found else "")
    return text + (f"; {pending} still to run (--resume carries them out)" if pending else "")
