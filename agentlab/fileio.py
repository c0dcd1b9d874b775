"""Durable files: atomic writes and appends, so an interrupted run never leaves half a file.

Results (demonstrations, checkpoints, trajectories) are written to a temporary file in the
same directory and renamed over the target; a crash leaves either the old or the new
version, never a mixture.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentlab.errors import DataError


@contextmanager
def atomic_path(target: str | Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temp path beside ``target``; on success rename it over ``target``."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def atomic_write_bytes(target: str | Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def atomic_write_text(target: str | Path, text: str) -> None:
    atomic_write_bytes(target, text.encode("utf-8"))


def atomic_write_json(target: str | Path, obj: Any) -> None:
    atomic_write_text(target, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def append_jsonl(target: str | Path, record: dict[str, Any]) -> None:
    """Append one JSON line and fsync; a reader never sees a partial line except after a crash,
    and :func:`read_jsonl` ignores a torn last line."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def write_jsonl(target: str | Path, records: Iterable[dict[str, Any]]) -> None:
    atomic_write_text(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_jsonl(path: str | Path, *, tolerate_torn_tail: bool = True) -> list[dict[str, Any]]:
    """Read a JSON-lines file; malformed lines raise :class:`DataError` with ``path:line``.

    A malformed *last* line is what a crash mid-append leaves behind; it is dropped when
    ``tolerate_torn_tail`` is true so the run can resume.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", where=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[dict[str, Any]] = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if tolerate_torn_tail and i == len(lines):
                break
            raise DataError(f"line is not valid JSON ({exc.msg})", where=f"{path}:{i}") from None
        if not isinstance(obj, dict):
            raise DataError("line is not a JSON object", where=f"{path}:{i}")
        out.append(obj)
    return out
