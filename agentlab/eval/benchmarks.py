"""Routing task lists: the public benchmarks (OSWorld, AppAgent) and the project's own set.

The public lists are an input, not a part of the project: ``agentlab benchmarks fetch`` writes
them to ``external/benchmarks`` (or ``AGENTLAB_BENCHMARKS``; :mod:`agentlab.eval.public_lists`),
and they are used for evaluation and leakage filtering only, never as training data or
few-shot examples. Their labels are mapped onto the pool's domain vocabulary.

The project's own set (``data/benchmarks/routing_set_v2.jsonl``) was written for this
workbench so that a routing gain can be checked on a second, independent list. Besides the
domain it names the gold *agents* (SheetAgent or CalcAgent, not just "calc") and the gold
interface, so routing can be scored at the agent level (:func:`agentlab.eval.metrics.agent_accuracy`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from agentlab.errors import DataError
from agentlab.fileio import read_jsonl
from agentlab.paths import benchmarks_dir, data_dir
from agentlab.pool.document import ALL_DOMAINS, DOMAINS, FIELD_CHOICES

PROJECT_SET = "routing_set_v2.jsonl"


@dataclass(frozen=True)
class BenchmarkTask:
    """One evaluation task. ``domain`` is set for single-app tasks; ``domains`` always lists
    the gold agent domains (one for single-app, several for multi-app tasks).

    ``gold_agents`` (pool names, any of which is a correct route) and ``interface`` (``CLI`` or
    ``GUI``, the gold agents' interface) are known only for the project's own set; the public
    benchmarks label applications, not agents, and leave them empty."""

    id: str
    instruction: str
    benchmark: str
    domain: str | None
    domains: tuple[str, ...] = field(default_factory=tuple)
    raw_domain: str = ""
    gold_agents: tuple[str, ...] = field(default_factory=tuple)
    interface: str | None = None
    #: the device the task runs on (``desktop`` or ``mobile``): OSWorld's are desktop tasks,
    #: AppAgent's phone tasks; the project set's follow from their domain (it names no device apart)
    platform: str | None = None

    @property
    def multi(self) -> bool:
        return len(self.domains) > 1

    def as_gold(self) -> dict[str, object]:
        rec: dict[str, object] = {"id": self.id, "instruction": self.instruction}
        if self.multi:
            rec["domains"] = list(self.domains)
        else:
            rec["domain"] = self.domain
        if self.gold_agents:
            rec["gold_agents"] = list(self.gold_agents)
        if self.interface:
            rec["interface"] = self.interface
        return rec


@lru_cache(maxsize=1)
def domain_map() -> dict[str, dict[str, str | None]]:
    path = data_dir() / "benchmarks" / "domain_map.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DataError("domain map not found", where=path) from None


def _file(name: str, root: Path | None) -> Path:
    from agentlab.eval.public_lists import FETCH, verify_on_read

    root = root or benchmarks_dir()
    path = root / name
    if not path.is_file():
        raise DataError(f"benchmark task list not found; fetch the lists with `{FETCH}` (or set AGENTLAB_BENCHMARKS "
                        "to a folder holding osworld/ and appagent/)", where=path)
    verify_on_read(path, name)
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
            out.append(BenchmarkTask(rec["id"], rec["instruction"], "osworld-multi", None, tuple(doms), raw,
                                     platform="desktop"))
        else:
            d = dmap.get(raw)
            if d is None:
                raise DataError(f"OSWorld domain '{raw}' has no mapping in domain_map.json", where=path)
            out.append(BenchmarkTask(rec["id"], rec["instruction"], "osworld", d, (d,), raw, platform="desktop"))
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
        out.append(BenchmarkTask(rec["id"], rec["instruction"], "appagent", d, (d,), rec["domain"], platform="mobile"))
    return out


def _project_task(rec: dict[str, object], where: str) -> BenchmarkTask:
    """One line of the project set, checked field by field."""
    tid, text, dom = rec.get("id"), rec.get("instruction"), rec.get("domain")
    agents, iface = rec.get("gold_agents"), rec.get("interface")
    if not isinstance(tid, str) or not tid:
        problem = "needs an 'id' (a non-empty string)"
    elif not isinstance(text, str) or not text.strip():
        problem = "needs an 'instruction' (a non-empty string)"
    elif dom not in ALL_DOMAINS:
        problem = f"'domain' {dom!r} is not a pool domain ({', '.join(ALL_DOMAINS)})"
    elif not isinstance(agents, list) or not agents or not all(isinstance(a, str) and a for a in agents):
        problem = "'gold_agents' must be a non-empty list of agent names"
    elif iface not in FIELD_CHOICES["interface"]:
        problem = f"'interface' must be one of {', '.join(FIELD_CHOICES['interface'])}, not {iface!r}"
    else:
        domain = str(dom)
        platform = next(p for p, doms in DOMAINS.items() if domain in doms)
        return BenchmarkTask(tid, text, "project-v2", domain, (domain,), domain, tuple(agents), str(iface), platform)
    raise DataError(f"routing task {problem}", where=where)


def load_project_set(path: Path | None = None) -> list[BenchmarkTask]:
    """The project's own routing set: single-app tasks with gold domain, agents and interface.

    Written for this workbench (not taken from the public benchmarks, not used in training);
    default ``data/benchmarks/routing_set_v2.jsonl``. Ids must be unique.
    """
    path = path or data_dir() / "benchmarks" / PROJECT_SET
    out: list[BenchmarkTask] = []
    seen: set[str] = set()
    for i, rec in enumerate(read_jsonl(path, tolerate_torn_tail=False), start=1):
        task = _project_task(rec, f"{path}:{i}")
        if task.id in seen:
            raise DataError(f"routing task id '{task.id}' appears twice; ids must be unique", where=f"{path}:{i}")
        seen.add(task.id)
        out.append(task)
    if not out:
        raise DataError("the routing task file holds no tasks", where=path)
    return out


def all_instructions(root: Path | None = None) -> list[str]:
    """Every benchmark instruction (for leakage filtering of generated data)."""
    tasks = load_osworld(root) + load_osworld(root, multi=True) + load_appagent(root)
    return [t.instruction for t in tasks]
