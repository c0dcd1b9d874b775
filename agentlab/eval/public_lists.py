"""The public benchmark task lists: an input the project fetches, never a part of it.

OSWorld's and AppAgent's instructions are used to evaluate routing and to keep generated data
away from test tasks (leakage filtering), never to train. They are not in the repository and a
user's clone has nothing beside it, so ``agentlab benchmarks fetch`` downloads them from their
public repositories at pinned commits and derives the five files the package reads:

- ``osworld/tasks.jsonl``          369 OSWorld tasks (upstream commit ``5f6497a``, 2025-02-15),
- ``osworld/tasks_verified.jsonl`` the same ids after the 2025 "Verified" revision,
- ``appagent/tasks.jsonl``         AppAgent's 45 phone tasks (``assets/testset.md``),
- ``osworld/LICENSE``, ``appagent/LICENSE`` the upstream licences, unchanged.

Each downloaded file and each derived list is checked against the sha256 in
``public_lists.sha256`` (beside this module), so a moved tag, a mirror or a changed upstream
can never change a routing figure silently. The lists keep six fields of a task (id, domain,
instruction, related apps, the evaluator's *name* and the setup step types): no evaluator
arguments, expected values or task files.

Where the lists live: ``AGENTLAB_BENCHMARKS`` when set, else ``external/benchmarks`` inside the
checkout (git-ignored). Without them every section that needs them is skipped with one line
naming ``agentlab benchmarks fetch`` (:func:`skip`), and the leakage filters say which lists they
checked (:func:`leakage_sources`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from agentlab.errors import DataError
from agentlab.fileio import atomic_write_bytes, atomic_write_json
from agentlab.paths import benchmarks_dir

log = logging.getLogger(__name__)

PINS = Path(__file__).with_name("public_lists.sha256")
#: where raw files are read from: ``<base>/<owner>/<repo>/<commit>/<path>``
DEFAULT_MIRROR = "https://raw.githubusercontent.com"
MIRROR_ENV = "AGENTLAB_BENCHMARKS_MIRROR"
FETCH = "agentlab benchmarks fetch"
#: the record ``fetch`` leaves beside the lists (what came from where, and when)
SOURCE_FILE = "SOURCE.json"
#: downloaded upstream files, kept (hash-checked) so an interrupted fetch resumes
DOWNLOADS = ".downloads"


@dataclass(frozen=True)
class Source:
    """One upstream repository at one commit. ``repos`` are tried in order (the first is the
    project's own repository; later ones are forks that hold the same commit)."""

    name: str
    repos: tuple[str, ...]
    commit: str
    what: str


SOURCES: dict[str, Source] = {s.name: s for s in (
    Source("osworld", ("xlang-ai/OSWorld", "richartkeil/OSWorld-Sec-Eval"),
           "5f6497afda80807c4739c08f28dbe64242b814b0", "OSWorld task files, upstream commit of 2025-02-15"),
    Source("osworld_verified", ("ljxpython/OSWorldUse", "samuellin01/OSWorld-ForkParallel"),
           "f6cee715783b2b2c6f38d460a6dbab90495d238a",
           "OSWorld-Verified task files (a snapshot of upstream as of about April 2026; upstream has no commit for it)"),
    Source("appagent", ("TencentQQGYLab/AppAgent", "mnotgod96/AppAgent"),
           "2c1900422caf6f9e94e96d5dd984b530e5a5fbf8", "AppAgent's published test set (assets/testset.md)"),
)}


@dataclass(frozen=True)
class PublicList:
    """One file the package reads, the source it is derived from, and who reads it."""

    path: str
    source: str
    used_by: tuple[str, ...]


LISTS: tuple[PublicList, ...] = (
    PublicList("osworld/tasks.jsonl", "osworld", (
        "routing tables on the 313 single-app tasks (benchmarks/routing.py, notebook 04, agentlab.experiments.*)",
        "the benchmark overview (notebook 01) and the benchmark routing of notebook 03",
        "manager mode on OSWorld multi_apps tasks (notebook 04, benchmarks/manager_mode.py)",
        "the leakage filters of self-instruct and task synthesis")),
    PublicList("osworld/tasks_verified.jsonl", "osworld_verified", (
        "load_osworld(verified=True): the 2025 revision, for comparing with leaderboards (no default study reads it)",)),
    PublicList("osworld/LICENSE", "osworld", ("the licence of the OSWorld lists (Apache-2.0)",)),
    PublicList("appagent/tasks.jsonl", "appagent", (
        "routing tables on the 313 single-app tasks (45 phone tasks)", "the leakage filters")),
    PublicList("appagent/LICENSE", "appagent", ("the licence of the AppAgent list (MIT)",)),
)
#: the lists every routing study and leakage filter needs (the licences and the Verified
#: revision are fetched too, but nothing is skipped without them)
TASK_LISTS = ("osworld/tasks.jsonl", "appagent/tasks.jsonl")


class FetchError(DataError):
    """A download failed or did not match its pinned hash."""


@lru_cache(maxsize=1)
def pins() -> dict[str, str]:
    """``"source:<name>/<path>"`` and ``"list:<path>"`` -> sha256, from the committed pin file."""
    out: dict[str, str] = {}
    for line in PINS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            digest, key = line.split(None, 1)
            out[key.strip()] = digest
    return out


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def root() -> Path:
    """Where the lists are read from and fetched to (``AGENTLAB_BENCHMARKS`` or ``external/benchmarks``)."""
    return benchmarks_dir()


def missing(names: Iterable[str] = TASK_LISTS, where: Path | None = None) -> list[str]:
    """The lists of ``names`` that are not in ``where`` (default :func:`root`)."""
    base = where or root()
    return [n for n in names if not (base / n).is_file()]


def available(names: Iterable[str] = TASK_LISTS, where: Path | None = None) -> bool:
    return not missing(names, where)


def skip_line(section: str, names: Iterable[str] = TASK_LISTS) -> str:
    """The one line a skipped section prints: what, why, and the command that fills it."""
    gone = missing(names)
    return (f"skipped: {section} -- needs the public benchmark task lists ({', '.join(gone) or ', '.join(names)}) "
            f"in {root()}; fill it with `{FETCH}` (or set AGENTLAB_BENCHMARKS)")


def absent_reason(names: Iterable[str] = TASK_LISTS) -> str:
    """Why a test that reads ``names`` is skipped (for ``pytest.mark.skipif(not available(), reason=…)``)."""
    return f"needs the public benchmark task lists ({', '.join(names)}): `{FETCH}` or AGENTLAB_BENCHMARKS"


#: set by the notebook runner: where skipped sections are recorded so ``agentlab run`` repeats them
SKIPS_ENV = "AGENTLAB_SKIPS_FILE"


def skip(section: str, names: Iterable[str] = TASK_LISTS) -> bool:
    """``True`` (and one printed line) when ``section`` cannot run because lists are missing.

    Notebooks write ``if public_lists.skip("…"): …``; the line goes to the cell's output, to the
    log, and (under ``agentlab run``) to the file the runner reads back after the notebook."""
    names = tuple(names)
    if available(names):
        return False
    line = skip_line(section, names)
    print(line)  # the notebook's output is where a reader looks for it
    log.info(line)
    record = os.environ.get(SKIPS_ENV)
    if record:
        with open(record, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    return True


# ---------------------------------------------------------------------------------------------
# Reading lists (with a hash check) and saying what the leakage filters checked


_checked: dict[Path, bool] = {}


def verify_on_read(path: Path, name: str) -> None:
    """Warn once per file when a list differs from its pinned hash (a routing figure measured on
    it is then not comparable with the committed ones)."""
    if path in _checked:
        return
    expected = pins().get(f"list:{name}")
    ok = expected is None or sha256(path.read_bytes()) == expected
    _checked[path] = ok
    if not ok:
        log.warning("%s differs from the pinned list (sha256); figures measured on it are not comparable "
                     "with the committed ones (`%s` restores it)", path, FETCH)


def leakage_sources() -> tuple[list[str], list[str]]:
    """(lists present, lists missing) among :data:`TASK_LISTS`, for a leakage filter's one line."""
    gone = missing()
    return [n for n in TASK_LISTS if n not in gone], gone


# ---------------------------------------------------------------------------------------------
# Fetching


Getter = Callable[[str], bytes]


def _http_get(timeout: float) -> Getter:
    def get(url: str) -> bytes:
        req = urllib.request.Request(url, headers={"User-Agent": "agentlab-benchmarks-fetch"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read()
    return get


def _unreachable(url: str, exc: BaseException) -> FetchError:
    reason = getattr(exc, "reason", None) or exc
    return FetchError(f"cannot download {url} ({reason}); offline, copy the lists from a machine that has them and "
                      f"set AGENTLAB_BENCHMARKS to their folder (or `{FETCH} --from DIR`, or {MIRROR_ENV} for a mirror)")


class Downloader:
    """Downloads a source's files, checks each against its pin, and keeps verified copies in
    ``<dest>/.downloads`` so an interrupted fetch resumes where it stopped."""

    def __init__(self, dest: Path, mirror: str, get: Getter, workers: int = 8) -> None:
        self.dest, self.mirror, self.get, self.workers = dest, mirror.rstrip("/"), get, workers
        self.fetched = 0
        self.reused = 0

    def url(self, source: Source, repo: str, path: str) -> str:
        return f"{self.mirror}/{repo}/{source.commit}/{path}"

    def file(self, source: Source, path: str) -> bytes:
        key = f"source:{source.name}/{path}"
        expected = pins().get(key)
        if expected is None:
            raise FetchError(f"{path} of {source.name} has no pinned sha256 (agentlab/eval/public_lists.sha256)")
        cached = self.dest / DOWNLOADS / source.name / path
        if cached.is_file() and sha256(cached.read_bytes()) == expected:
            self.reused += 1
            return cached.read_bytes()
        problems: list[str] = []
        for repo in source.repos:
            url = self.url(source, repo, path)
            try:
                data = self.get(url)
            except urllib.error.HTTPError as exc:  # the server answered: try the next repository
                problems.append(f"{url}: HTTP {exc.code} {exc.reason}")
                continue
            except (urllib.error.URLError, OSError, ValueError) as exc:  # no answer at all: offline
                raise _unreachable(url, exc) from None
            got = sha256(data)
            if got != expected:
                problems.append(f"{url}: sha256 {got} does not match the pinned {expected}; the upstream file "
                                "changed or the mirror serves another one, so it was not used")
                continue
            atomic_write_bytes(cached, data)
            self.fetched += 1
            return data
        raise FetchError("; ".join(problems))

    def many(self, source: Source, paths: list[str]) -> dict[str, bytes]:
        from tqdm.auto import tqdm

        with ThreadPoolExecutor(self.workers) as pool:
            results = list(tqdm(pool.map(lambda p: self.file(source, p), paths), total=len(paths),
                                desc=f"{source.name} files", leave=False))
        return dict(zip(paths, results, strict=True))


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    """One JSON object per line, sorted by (domain, id), UTF-8 as written (the lists' format)."""
    rows = sorted(rows, key=lambda r: (str(r["domain"]), str(r["id"])))
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def derive_osworld(dl: Downloader, source: Source) -> bytes:
    """Six fields of every task named by ``test_all.json`` (the evaluator's arguments are not kept)."""
    index = json.loads(dl.file(source, "evaluation_examples/test_all.json"))
    paths = [f"evaluation_examples/examples/{dom}/{tid}.json" for dom, ids in index.items() for tid in ids]
    files = dl.many(source, paths)
    rows = []
    for dom, ids in index.items():
        for tid in ids:
            task = json.loads(files[f"evaluation_examples/examples/{dom}/{tid}.json"])
            evaluator = task.get("evaluator") or {}
            rows.append({"id": tid, "domain": dom, "instruction": task["instruction"],
                         "related_apps": task["related_apps"], "evaluator_func": evaluator.get("func"),
                         "config_types": [step["type"] for step in task.get("config", [])]})
    return _jsonl(rows)


def parse_appagent_table(markdown: str) -> list[dict[str, object]]:
    """The test set's table: one row per app, five task cells; ids ``<app-slug>-<column>``."""
    rows: list[dict[str, object]] = []
    for line in markdown.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "App" or set(cells[0]) <= set("-: "):
            continue
        app = cells[0]
        slug = re.sub(r"[^a-z0-9]+", "_", app.lower()).strip("_")
        for n, text in enumerate(cells[1:], start=1):
            rows.append({"id": f"{slug}-{n}", "domain": slug, "instruction": text, "related_apps": [app],
                         "evaluator_func": None, "config_types": []})
    return rows


def derive_appagent(dl: Downloader, source: Source) -> bytes:
    return _jsonl(parse_appagent_table(dl.file(source, "assets/testset.md").decode("utf-8")))


#: how each list is made from its source
DERIVE: dict[str, Callable[[Downloader, Source], bytes]] = {
    "osworld/tasks.jsonl": derive_osworld,
    "osworld/tasks_verified.jsonl": derive_osworld,
    "appagent/tasks.jsonl": derive_appagent,
    "osworld/LICENSE": lambda dl, s: dl.file(s, "LICENSE"),
    "appagent/LICENSE": lambda dl, s: dl.file(s, "LICENSE"),
}


@dataclass
class FetchReport:
    dest: Path
    written: list[str]
    kept: list[str]
    downloaded: int
    reused: int


def _check_list(name: str, data: bytes, where: str) -> None:
    expected = pins()[f"list:{name}"]
    got = sha256(data)
    if got != expected:
        raise FetchError(f"{name} made from {where} has sha256 {got}, not the pinned {expected}; nothing was written")


def fetch(dest: Path | None = None, *, mirror: str | None = None, copy_from: Path | None = None,
          get: Getter | None = None, timeout: float = 30.0, names: Iterable[str] | None = None) -> FetchReport:
    """Write every list (or ``names``) to ``dest``, each checked against its pin, atomically.

    ``copy_from`` takes the lists from a folder instead (a copy provided beside the checkout, or
    made on a machine with network), with the same checks. A list already in ``dest`` with the
    pinned hash is kept as it is."""
    dest = dest or root()
    wanted = [lst for lst in LISTS if names is None or lst.path in set(names)]
    if not wanted:
        raise DataError(f"no such list; the lists are: {', '.join(lst.path for lst in LISTS)}")
    mirror = mirror or os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR
    dl = Downloader(dest, mirror, get or _http_get(timeout))
    written: list[str] = []
    kept: list[str] = []
    origin: dict[str, dict[str, object]] = {}
    for lst in wanted:
        target = dest / lst.path
        if target.is_file() and sha256(target.read_bytes()) == pins()[f"list:{lst.path}"]:
            kept.append(lst.path)
            continue
        source = SOURCES[lst.source]
        if copy_from is not None:
            src = Path(copy_from) / lst.path
            if not src.is_file():
                raise FetchError(f"{lst.path} is not in {copy_from}", where=src)
            data, origin[lst.path] = src.read_bytes(), {"copied_from": str(src.resolve())}
            _check_list(lst.path, data, str(src))
        else:
            data = DERIVE[lst.path](dl, source)
            _check_list(lst.path, data, f"{source.repos[0]}@{source.commit[:7]}")
            origin[lst.path] = {"repos": list(source.repos), "commit": source.commit, "mirror": mirror}
        atomic_write_bytes(target, data)
        record = _read_source(dest)  # after each list, so a later failure keeps where this one came from
        record[lst.path] = {**origin[lst.path], "sha256": pins()[f"list:{lst.path}"],
                            "fetched": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        atomic_write_json(dest / SOURCE_FILE, record)
        written.append(lst.path)
        log.info("wrote %s (%d bytes, sha256 ok)", target, len(data))
    if dl.fetched or dl.reused:
        shutil.rmtree(dest / DOWNLOADS, ignore_errors=True)  # everything it held is in the lists now
    return FetchReport(dest, written, kept, dl.fetched, dl.reused)


def _read_source(dest: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((dest / SOURCE_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


# ---------------------------------------------------------------------------------------------
# Status


@dataclass(frozen=True)
class ListStatus:
    path: str
    present: bool
    pinned: bool  # the file's sha256 equals the pin
    lines: int
    origin: str
    used_by: tuple[str, ...]

    @property
    def state(self) -> str:
        return "missing" if not self.present else ("ok" if self.pinned else "MODIFIED (sha256 differs from the pin)")


def status(where: Path | None = None) -> list[ListStatus]:
    """What is in the lists folder, where each came from, and what reads it."""
    base = where or root()
    record = _read_source(base)
    out = []
    for lst in LISTS:
        path = base / lst.path
        present = path.is_file()
        data = path.read_bytes() if present else b""
        how = record.get(lst.path) or {}
        if "copied_from" in how:
            origin = f"copied from {how['copied_from']} ({how.get('fetched', '?')})"
        elif "repos" in how:
            origin = f"{FETCH}: {how['repos'][0]}@{str(how['commit'])[:7]} ({how.get('fetched', '?')})"  # type: ignore[index]
        elif present:
            origin = "provided by hand (not fetched by agentlab)"
        else:
            origin = f"not fetched: `{FETCH}`"
        out.append(ListStatus(lst.path, present, present and sha256(data) == pins()[f"list:{lst.path}"],
                              data.count(b"\n") if lst.path.endswith(".jsonl") else 0, origin, lst.used_by))
    return out
