"""Durable files: atomic writes and appends, so an interrupted run never leaves half a file.

Results (demonstrations, checkpoints, trajectories) are written to a temporary file in the
same directory and renamed over the target; a crash leaves either the old or the new
version, never a mixture. The file keeps the permissions a plain write would give (an
existing file's mode, else 0666 less the umask), not the temporary file's 0600.

Append-only JSON-lines files (the self-instruct journal, manager predictions, trajectories,
figure manifests) share one crash rule: a record is one line written with one ``write`` and
fsynced, so a crash can only tear the *last* line. :func:`append_jsonl` repairs such a tail
before appending (a fragment that is a whole record gets its newline, anything else is cut
away with a warning), so the next record is never glued to a fragment; :func:`read_jsonl`
drops a torn last line and, for files damaged by older versions, recovers a record glued
behind a fragment.

A full disk (or quota) is one line, never a traceback: every write here turns ENOSPC / EDQUOT
into :class:`~agentlab.errors.DiskFullError` naming the file and what was kept (an atomic write
keeps the previous version; an append is cut back, so the earlier records stay whole).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentlab.errors import DataError, DiskFullError

log = logging.getLogger(__name__)

#: the errno values of a write refused because the disk (or the user's quota) is full
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
#: what an atomic write keeps when it fails
KEPT_PREVIOUS = "the file's previous version (if any) was kept; nothing was half-written"


def disk_full(exc: OSError, target: str | Path, kept: str) -> DiskFullError:
    """The one-line error for a write to ``target`` refused by a full disk; ``kept``: what is intact."""
    why = "no space left on the device" if exc.errno == errno.ENOSPC else "the disk quota is exceeded"
    return DiskFullError(f"cannot write: {why}; {kept}; free some space and run again "
                         "(a run continues with --resume)", where=target)


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (thread-safe)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _plain_mode(target: Path) -> int:
    """The mode a plain ``open(target, "w")`` would leave: the existing file's, else 0666 &~umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def atomic_path(target: str | Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temp path beside ``target``; on success rename it over ``target``."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent)
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise disk_full(exc, target, KEPT_PREVIOUS) from None
        raise
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, _plain_mode(target))
        os.replace(tmp_path, target)
    except OSError as exc:  # also what the caller's writing into the temp file raised
        if exc.errno in DISK_FULL:
            raise disk_full(exc, target, KEPT_PREVIOUS) from None
        raise
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


def _parses_as_record(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError):
        return False


def repair_tail(target: str | Path) -> int:
    """Make ``target`` end with a newline, as an interrupted append may not have left it.

    A last line that is a complete JSON object only lacks its newline and keeps it; anything
    else is a fragment and is cut off (logged). Returns the number of bytes removed.
    """
    target = Path(target)
    try:
        fh = open(target, "rb+")
    except FileNotFoundError:
        return 0
    with fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # find the start of the last line, reading backwards in blocks
        pos, start = size, 0
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            fh.seek(pos)
            block = fh.read(step)
            nl = block.rfind(b"\n")
            if nl >= 0:
                start = pos + nl + 1
                break
        fh.seek(start)
        tail = fh.read()
        if _parses_as_record(tail):
            fh.seek(size)
            fh.write(b"\n")
            removed = 0
        else:
            fh.truncate(start)
            removed = size - start
            log.warning("%s: removed a torn last line (%d bytes) left by an interrupted run", target, removed)
        fh.flush()
        os.fsync(fh.fileno())
        return removed


def append_jsonl(target: str | Path, record: dict[str, Any]) -> None:
    """Append one JSON line and fsync. A torn last line left by a crash is repaired first
    (:func:`repair_tail`), so every complete record stays readable. On a full disk the file is
    cut back to its size before the append (a truncation needs no space) and
    :class:`DiskFullError` says so: the earlier records stay whole."""
    target = Path(target)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    size: int | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise DataError("is a folder; expected a JSON-lines file", where=target)
        repair_tail(target)
        size = target.stat().st_size if target.exists() else 0
        with open(target, "ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise
        if size is not None:
            try:
                os.truncate(target, size)
            except OSError:
                log.warning("%s: could not cut a partly written record back", target)
        raise disk_full(exc, target, "the earlier records were kept whole and this one was not added") from None


def write_jsonl(target: str | Path, records: Iterable[dict[str, Any]]) -> None:
    atomic_write_text(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def _salvage(line: str) -> list[dict[str, Any]]:
    """Records in a whole line where an older append glued a record behind a torn fragment:
    the outermost JSON object that ends the line (``{"id": 1, "ag{"id": 2}`` -> record 2), and
    the part before it too when that is a complete record that only lost its newline."""
    dec = json.JSONDecoder()
    line = line.rstrip()
    p = line.find("{", 1)
    while p > 0:
        try:
            obj, end = dec.raw_decode(line, p)
        except ValueError:
            obj, end = None, -1
        if isinstance(obj, dict) and end == len(line):
            out: list[dict[str, Any]] = []
            try:
                head, head_end = dec.raw_decode(line, 0)
                if isinstance(head, dict) and head_end == p:
                    out.append(head)
            except ValueError:
                pass
            return out + [obj]
        p = line.find("{", p + 1)
    return []


def read_jsonl(path: str | Path, *, tolerate_torn_tail: bool = True) -> list[dict[str, Any]]:
    """Read a JSON-lines file; malformed lines raise :class:`DataError` with ``path:line``.

    With ``tolerate_torn_tail`` (files this program appends to), a malformed *last* line is
    what a crash mid-append leaves behind and is dropped, and a record glued behind a torn
    fragment by an older version is recovered (both logged). Input files given by a user
    (``tolerate_torn_tail=False``) must be whole.
    """
    path = Path(path)
    if path.is_dir():
        raise DataError("is a folder; expected a JSON-lines file", where=path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError("file not found", where=path) from None
    except PermissionError:
        raise DataError("file is not readable (permission denied)", where=path) from None
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(lines, start=1):
        last = i == len(lines)
        torn = last and not data.endswith(b"\n")  # a crash mid-append: never salvaged, dropped
        obj, problem = None, None
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # e.g. a fragment cut inside a multi-byte character
            line = raw.decode("utf-8", errors="replace")
            problem = f"line is not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        if problem is None:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                problem = f"line is not valid JSON ({exc.msg})"
        if problem is not None:
            salvaged = _salvage(line) if tolerate_torn_tail and not torn else []
            if salvaged:
                log.warning("%s:%d: recovered %d record(s) glued to a torn line", path, i, len(salvaged))
                out.extend(salvaged)
                continue
            if tolerate_torn_tail and last:
                log.warning("%s:%d: dropping a torn last line", path, i)
                break
            raise DataError(problem, where=f"{path}:{i}")
        if not isinstance(obj, dict):
            raise DataError("line is not a JSON object", where=f"{path}:{i}")
        out.append(obj)
    return out


def remove_inside(path: str | Path, container: str | Path) -> bool:
    """Remove ``path`` (a folder tree or a file) only when it lies strictly inside ``container``.

    Why: a name taken from input (a task id such as ``..``) must never make a clean-up reach the
    container itself or anything outside it. The check resolves ``path``'s parent, not ``path``
    itself, so a symbolic link is removed as a link and never followed. Returns whether
    anything was removed; a ``path`` outside ``container`` raises :class:`DataError`.
    """
    path, container = Path(path), Path(container).resolve()
    where = path.parent.resolve() / path.name
    if path.name in ("", ".", "..") or (where != container and container not in where.parents) or where == container:
        raise DataError(f"refusing to remove {path}: it is not inside {container}")
    if where.is_symlink() or where.is_file():
        where.unlink()
        return True
    if where.is_dir():
        import shutil

        shutil.rmtree(where)
        return True
    return False


def mode_like_plain_write(path: str | Path) -> None:
    """Give ``path`` (and, for a folder, everything under it) the modes a plain write leaves:
    files 0666 and folders 0777, less the umask. Why: libraries that save through private
    temporary files (safetensors, tokenizers) leave 0600 files in a shared cache."""
    path = Path(path)
    umask = _umask()
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        if p.is_symlink():
            continue
        os.chmod(p, (0o777 if p.is_dir() else 0o666) & ~umask)
