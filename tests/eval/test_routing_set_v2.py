"""The project's own routing set: coverage of the pool, valid gold agents, no leakage, a strict loader."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agentlab.errors import DataError
from agentlab.eval.benchmarks import all_instructions, load_project_set
from agentlab.paths import data_dir
from agentlab.pool import ALL_DOMAINS
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())

#: the domain of each platform's general agents (they may serve any task of their platform)
GENERAL = {"desktop": "general", "mobile": "mobile"}


@pytest.fixture(scope="module")
def tasks():  # type: ignore[no-untyped-def]
    return load_project_set()


def test_set_covers_every_pool_domain_with_unique_ids(tasks, pool) -> None:  # type: ignore[no-untyped-def]
    assert len(tasks) >= 100
    ids = [t.id for t in tasks]
    assert len(set(ids)) == len(ids)
    per_domain = Counter(t.domain for t in tasks)
    pool_domains = {a.domain for a in pool}
    assert pool_domains <= set(ALL_DOMAINS)
    assert {d: per_domain[d] for d in pool_domains if per_domain[d] < 4} == {}
    assert set(per_domain) <= pool_domains
    # both interfaces are represented, so the CLI/GUI confusion is measurable
    assert Counter(t.interface for t in tasks).keys() == {"CLI", "GUI"}


def test_gold_agents_exist_serve_the_domain_and_share_the_interface(tasks, pool) -> None:  # type: ignore[no-untyped-def]
    problems = []
    for t in tasks:
        for name in t.gold_agents:
            if name not in pool:
                problems.append(f"{t.id}: {name} is not in the pool")
                continue
            doc = pool.get(name)
            if doc.domain != t.domain and doc.domain != GENERAL[doc.platform]:
                problems.append(f"{t.id}: {name} ({doc.domain}) does not serve {t.domain}")
            if t.domain in GENERAL.values() and doc.platform != next(p for p, d in GENERAL.items() if d == t.domain):
                problems.append(f"{t.id}: {name} is a {doc.platform} agent")
            if doc.interface != t.interface:
                problems.append(f"{t.id}: {name} is {doc.interface}, the task says {t.interface}")
    assert problems == []


def test_domains_with_a_cli_and_a_gui_agent_have_gold_tasks_for_both(tasks, pool) -> None:  # type: ignore[no-untyped-def]
    """Where the pool offers both interfaces for one application, the set must tell them apart."""
    ifaces_in_pool: dict[str, set[str]] = {}
    for a in pool:
        ifaces_in_pool.setdefault(a.domain, set()).add(a.interface)
    ifaces_in_set: dict[str, set[str]] = {}
    for t in tasks:
        ifaces_in_set.setdefault(t.domain, set()).add(t.interface)
    both = [d for d, s in ifaces_in_pool.items() if s == {"CLI", "GUI"}]
    assert "calc" in both and "os" in both
    # the set was written (134 tasks, the committed routing figures) before the browser, mail and
    # media-player profile specialists joined (issue #38): their domains have GUI gold tasks only
    joined_later = {"chrome", "thunderbird", "vlc"}
    assert {d: ifaces_in_set.get(d) for d in both if ifaces_in_set.get(d) != {"CLI", "GUI"}
            and d not in joined_later} == {}


@needs_lists
def test_no_instruction_leaks_from_the_benchmarks_or_the_demonstrations(tasks, pool, scorer) -> None:  # type: ignore[no-untyped-def]
    """Below self-instruct's leakage bound against the public benchmark lists, the documents'
    demonstrations and the rest of the set (the same MiniLM BERTScore as the filter)."""
    from agentlab.selfinstruct.config import Thresholds
    from agentlab.selfinstruct.fastscore import FastBertScore
    from agentlab.selfinstruct.leakage import LeakageFilter

    tau = Thresholds.load(data_dir() / "demos" / "thresholds.json").leakage_tau
    fast = FastBertScore(scorer)
    texts = [t.instruction for t in tasks]
    demos = [d.text for a in pool for d in a.demonstrations]
    for name, refs in (("benchmarks", all_instructions()), ("demonstrations", demos)):
        check = LeakageFilter(fast, refs, tau).check(texts)
        leaked = [f"{texts[i]!r} ~ {check.nearest[i]!r} ({check.max_score[i]:.3f})" for i in range(len(texts)) if check.leaked[i]]
        assert leaked == [], f"too close to the {name} (leakage_tau {tau})"
    within = fast.matrix(texts, texts)
    for i in range(len(texts)):
        within[i, i] = 0.0
    assert float(within.max()) < tau, "two tasks of the set are near-copies of each other"


def test_as_gold_carries_agents_and_interface(tasks) -> None:  # type: ignore[no-untyped-def]
    calc_cli = next(t for t in tasks if t.domain == "calc" and t.interface == "CLI")
    gold = calc_cli.as_gold()
    assert gold["domain"] == "calc" and gold["gold_agents"] == ["SheetAgent"] and gold["interface"] == "CLI"
    assert calc_cli.benchmark == "project-v2" and not calc_cli.multi


def _write(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


GOOD = {"id": "a", "instruction": "Sort the sheet", "domain": "calc", "gold_agents": ["SheetAgent"], "interface": "CLI"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"domain": "excel"}, "'domain' 'excel' is not a pool domain"),
        ({"gold_agents": []}, "'gold_agents' must be a non-empty list"),
        ({"gold_agents": "SheetAgent"}, "'gold_agents' must be a non-empty list"),
        ({"interface": "TUI"}, "'interface' must be one of CLI, GUI"),
        ({"instruction": "  "}, "needs an 'instruction'"),
    ],
)
def test_loader_names_the_line_and_the_problem(tmp_path, bad, message) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path / "set.jsonl", [GOOD, {**GOOD, "id": "b", **bad}])
    with pytest.raises(DataError, match=message) as err:
        load_project_set(path)
    assert err.value.where == f"{path}:2"


def test_loader_refuses_duplicate_ids_and_empty_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match="id 'a' appears twice"):
        load_project_set(_write(tmp_path / "dup.jsonl", [GOOD, GOOD]))
    with pytest.raises(DataError, match="holds no tasks"):
        load_project_set(_write(tmp_path / "empty.jsonl", []))
    assert [t.gold_agents for t in load_project_set(_write(tmp_path / "ok.jsonl", [GOOD]))] == [("SheetAgent",)]
