"""Public benchmark task lists (OSWorld, AppAgent) mapped onto the pool's domain vocabulary.

The lists live outside the repository (``../shared/benchmarks`` by default, or
``AGENTLAB_BENCHMARKS``) and are used for evaluation and leakage filtering only, never as
training data or few-shot examples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from agentlab.errors import DataError
from agentlab.fileio import read_jsonl
from agentlab.paths import benchmarks_dir, data_dir


@dataclass(frozen=True)
class BenchmarkTask:
    """One evaluation task. ``domain`` is set for single-app tasks; ``domains`` always lists
    the gold agent domains (one for single-app, several for multi-app tasks)."""

    id: str
    instruction: str
    benchmark: str
    domain: str | None
    domains: tuple[str, ...] = field(default_factory=tuple)
    raw_domain: str = ""

    @property
    def multi(self) -> bool:
        return len(self.domains) > 1

    def as_gold(self) -> dict[str, object]:
        rec: dict[str, object] = {"id": self.id, "instruction": self.instruction}
        if self.multi:
            rec["domains"] = list(self.domains)
        else:
            rec["domain"] = self.domain
        return rec


@lru_cache(maxsize=1)
def domain_map() -> dict[str, dict[str, str | None]]:
    path = data_dir() / "benchmarks" / "domain_map.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DataError("domain map not found", where=path) from None


def _file(name: str, root: Path | None) -> Path:
    root = root or benchmarks_dir()
    path = root / name
    if not path.is_file():
        raise DataError(
            "benchmark task list not found; set AGENTLAB_BENCHMARKS to the folder holding "
            "osworld/ and appagent/",
            where=path,
        )
    return path


def load_osworld(root: Path | None = None, *, multi: bool = False, verified: bool = False) -> list[BenchmarkTask]:
    """OSWorld tasks: single-app ones (``multi=False``) or the ``multi_apps`` ones."""
    path = _file("osworld/tasks_verified.jsonl" if verified else "osworld/tasks.jsonl", root)
    dmap, amap = domain_map()["osworld"], domain_map()["osworld_apps"]
    out: list[BenchmarkTask] = []
    for rec in read_jsonl(path, tolerate_torn_tail=False):
        raw = rec["domain"]
        if (raw == "multi_apps") != multi:
            continue
        if multi:
            doms: list[str] = []
            for app in rec.get("related_apps", []):
                d = amap.get(str(app).lower())
                if d and d not in doms:
                    doms.append(d)
            if len(doms) < 2:
                continue  # not a multi-agent task once mapped to domains
            out.append(BenchmarkTask(rec["id"], rec["instruction"], "osworld-multi", None, tuple(doms), raw))
        else:
            d = dmap.get(raw)
            if d is None:
                raise DataError(f"OSWorld domain '{raw}' has no mapping in domain_map.json", where=path)
            out.append(BenchmarkTask(rec["id"], rec["instruction"], "osworld", d, (d,), raw))
    return out


def load_appagent(root: Path | None = None) -> list[BenchmarkTask]:
    """AppAgent's 45 phone tasks (nine apps)."""
    path = _file("appagent/tasks.jsonl", root)
    dmap = domain_map()["appagent"]
    out = []
    for rec in read_jsonl(path, tolerate_torn_tail=False):
        d = dmap.get(rec["domain"])
        if d is None:
            raise DataError(f"AppAgent app '{rec['domain']}' has no mapping in domain_map.json", where=path)
        out.append(BenchmarkTask(rec["id"], rec["instruction"], "appagent", d, (d,), rec["domain"]))
    return out


def all_instructions(root: Path | None = None) -> list[str]:
    """Every benchmark instruction (for leakage filtering of generated data)."""
    tasks = load_osworld(root) + load_osworld(root, multi=True) + load_appagent(root)
    return [t.instruction for t in tasks]
