"""Table 1: every set under every arm, episodes shared, the paper's layout, the gap split honestly.

A scripted test double (not a model) replays reference solutions, so what is checked is the
bookkeeping: which agent ran which task, which rows each arm gets, and the figures read back."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.errors import ConfigError
from agentlab.experiments import table1 as t1

from .conftest import ReplayReference


def _row(task: str, domain: str, agent: str, success: bool) -> dict[str, object]:
    return {"id": task, "domain": domain, "agents": [agent], "success": success, "steps": 1, "llm_calls": 1,
            "tokens_in": 10, "tokens_out": 2, "seconds": 1.0, "error": None}


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_the_gap_to_ground_truth_is_what_routing_lost_minus_what_it_won(cases: list[tuple[bool, bool, bool]]) -> None:
    """``gt - arm = lost - won``: with the gold agent an arm runs ground truth's very episode, so
    every difference comes from a task it sent elsewhere; execution errors are its gold-agent failures."""
    gold, gt, arm = {}, [], []
    for i, (gt_ok, routed_right, other_ok) in enumerate(cases):
        tid = f"t{i}"
        gold[tid] = "Gold"
        gt.append(_row(tid, "calc", "Gold", gt_ok))
        arm.append(_row(tid, "calc", "Gold", gt_ok) if routed_right else _row(tid, "calc", "Other", other_ok))
    table = t1.Table1(rows={"gt": gt, "agenttoken": arm}, gold=gold)
    g = table.gap("agenttoken")
    solved = table.cells()
    assert solved["gt"]["all"][0] - solved["agenttoken"]["all"][0] == g["lost"] - g["won"]
    assert g["execution"] == sum(1 for ok, right, _ in cases if right and not ok)
    assert g["tasks"] == len(cases)
    assert table.routing_accuracy("agenttoken") == pytest.approx(sum(1 for _, r, _ in cases if r) / len(cases))


def test_the_layout_puts_methods_in_rows_and_domains_in_the_papers_order_with_intervals() -> None:
    rows = {"gt": [_row("a", "writer", "W", True), _row("b", "writer", "W", False), _row("c", "os", "F", False),
                   _row("d", "clock", "C", True)],
            "generalist-s2": [_row("a", "writer", "Friday", False), _row("b", "writer", "Friday", False),
                              _row("c", "os", "Friday", False), _row("d", "clock", "AppAgent", False)]}
    table = t1.Table1(rows=rows, gold={"a": "W", "b": "W", "c": "F", "d": "C"})
    assert table.domains() == ["os", "writer", "clock"]  # the paper's domains first, then the phone apps
    lines = table.accuracy_lines()
    assert lines[0] == "| method | os | writer | clock | all |"
    assert lines[2].startswith("| **gt** | 0 [0-79] n=1 | 50 [9-91] n=2 | 100 [21-100] n=1 | 50 [15-85] n=4 |")
    for arm in rows:
        for i, r in enumerate(rows[arm]):
            r["set"] = "dev1" if i < 2 else "v2"
    assert table.set_lines()[2:] == ["| gt | 1/2 (50.0 %) | 1/2 (50.0 %) |",
                                     "| generalist-s2 | 0/2 (0.0 %) | 0/2 (0.0 %) |"]
    summary = "\n".join(table.summary_lines())
    assert "| generalist-s2 | 4 | 0 (0.0 %) |" in summary and "| 0.00 |" in summary


def test_unknown_sets_and_arms_are_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="unknown task set.*nope"):
        t1.Table1Config(sets=["nope"]).check()
    with pytest.raises(ConfigError, match="unknown arm.*best"):
        t1.arms_of(["gt", "best"])
    assert t1.arms_of(["all"]) == list(t1.ARMS)
    default = t1.arms_of(["default"])
    assert default[:7] == ["gt", "agenttoken", "hybrid", "embedding", "icl", "generalist-s2", "generalist-pc"]
    assert default[7:] == ["agenttoken:10", "agenttoken:30", "agenttoken:100", "lora:16", "prompt:16"]
    assert t1.Table1Config().arms == default
    assert t1.arms_of(["generalist-s2", "gt"]) == ["gt", "generalist-s2"]


def test_a_run_shares_episodes_writes_exec_rows_and_resumes(tmp_path: Path, pool) -> None:
    config = t1.Table1Config(sets=["dev2"], arms=["gt", "embedding", "generalist-s2"], per_set=3, envs=["workspace"],
                             max_steps=2, max_new_tokens=64)
    tasks = t1.set_tasks("dev2", config)
    assert len(tasks) == 3 and len({t.domain for t in tasks}) == 3
    llm = ReplayReference(tasks, {tasks[0].id, tasks[1].id})
    table = t1.run(config, pool, llm, tmp_path, progress=False)
    gt = table.rows["gt"]
    assert [r["id"] for r in gt] == [t.id for t in tasks] and [r["success"] for r in gt] == [True, True, False]
    assert all(r["set"] == "dev2" for r in gt)
    # every generalist row is Friday's (workspace), and it replays the same references
    assert {r["agents"][0] for r in table.rows["generalist-s2"]} == {"Friday"}
    assert (tmp_path / "dev2" / "arms" / "embedding" / "results.jsonl").is_file()
    assert (tmp_path / "dev2" / "decisions.json").is_file() and set(table.gold) == {t.id for t in tasks}
    # an arm that chose the gold agent got ground truth's very row
    for a, b in zip(gt, table.rows["embedding"], strict=True):
        if b["agents"] and b["agents"][0] == table.gold[b["id"]]:
            assert a["success"] == b["success"] and a["trajectory"] == b["trajectory"]
    calls = llm.calls
    again = t1.run(config, pool, llm, tmp_path, progress=False)  # resumed: nothing runs twice
    assert llm.calls == calls
    assert again.cells() == table.cells() == t1.Table1.load(tmp_path).cells()
    # interrupted before the arms were written: read back from the decisions and the episodes so far
    import shutil

    from agentlab.fileio import read_jsonl, write_jsonl

    shutil.rmtree(tmp_path / "dev2" / "arms")
    partial = t1.Table1.load(tmp_path)
    assert partial.partial == ["dev2"] and partial.cells() == table.cells()
    friday = tmp_path / "dev2" / "by_agent" / "Friday" / "results.jsonl"
    write_jsonl(friday, read_jsonl(friday)[:1])  # only one generalist episode had finished
    cut = t1.Table1.load(tmp_path)
    assert cut.cells()["generalist-s2"]["all"][1] == 1 and cut.cells()["gt"] == table.cells()["gt"]
    write_jsonl(friday, [r for r in read_jsonl(tmp_path / "dev2" / "by_agent" / "Friday" / "results.jsonl")])
    # arms left by an earlier, smaller invocation are older than the latest decisions: the decisions win
    import os

    (tmp_path / "dev2" / "arms" / "gt").mkdir(parents=True)
    write_jsonl(tmp_path / "dev2" / "arms" / "gt" / "results.jsonl", gt[:1])
    os.utime(tmp_path / "dev2" / "arms" / "gt" / "results.jsonl", (1, 1))
    assert t1.Table1.load(tmp_path).cells()["gt"] == cut.cells()["gt"]
    # ... but an arm the cut invocation did not decide again is kept as its own invocation wrote it
    (tmp_path / "dev2" / "arms" / "lora:16").mkdir(parents=True)
    write_jsonl(tmp_path / "dev2" / "arms" / "lora:16" / "results.jsonl", gt[:2])
    os.utime(tmp_path / "dev2" / "arms" / "lora:16" / "results.jsonl", (1, 1))
    kept = t1.Table1.load(tmp_path)
    assert kept.partial == ["dev2"] and kept.cells()["lora:16"]["all"] == (2, 2) and kept.cells()["gt"] == cut.cells()["gt"]
    shutil.rmtree(tmp_path / "dev2" / "arms")

    # a bigger cap extends the same folders: the first rows stay, only the new task runs
    grown = t1.run(config.model_copy(update={"per_set": 4}), pool, llm, tmp_path, progress=False)
    assert [r["id"] for r in grown.rows["gt"]][:3] == [t.id for t in tasks] and len(grown.rows["gt"]) == 4
    assert grown.rows["gt"][:3] == [{**r} for r in gt] and llm.calls > calls


def test_an_empty_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no Table 1 rows under"):
        t1.Table1.load(tmp_path)


def test_the_committed_record_reads_back_as_a_heatmap(tmp_path: Path) -> None:
    record = tmp_path / "table1_record.json"
    record.write_text('{"command": "python benchmarks/table1.py", "model": "m", "config": {},'
                      ' "domains": ["os", "calc"], "cells": {"gt": {"os": [1, 2], "all": [1, 3]}}}')
    rates, counts, header = t1.record_heatmap(record)
    assert rates == {"gt": {"os": 0.5, "calc": None, "all": pytest.approx(1 / 3)}}
    assert counts == {"gt": {"os": 2, "calc": 0, "all": 3}} and header["command"] == "python benchmarks/table1.py"
    record.write_text("{")
    with pytest.raises(ConfigError, match="not a Table 1 record"):
        t1.record_heatmap(record)


def test_growth_arms_parse_and_order_after_the_plain_ones() -> None:
    assert t1.parse_arm("hybrid@10") == ("hybrid", 10) and t1.parse_arm("gt") == ("gt", None)
    for bad in ("gt@5", "hybrid@0", "nope@3", "hybrid@x"):
        with pytest.raises(ConfigError, match="<router>@<k>"):
            t1.parse_arm(bad)
    assert t1.arms_of(["hybrid@10", "agenttoken@5", "gt", "hybrid@5"]) == ["gt", "agenttoken@5", "hybrid@5", "hybrid@10"]


def test_a_store_of_k_agents_only_ever_picks_an_enrolled_one(pool) -> None:
    from agentlab.run.episode import NoAgentChosen, router_route
    from agentlab.tasks.spec import load_tasks
    from agentlab.paths import data_dir

    order = t1.enrolment_order(pool)
    assert sorted(order) == sorted(d.name for d in pool) and order == t1.enrolment_order(pool)  # seeded
    base = router_route("embedding", pool)
    tasks = load_tasks(data_dir() / "tasks_dev2")[:6]
    everyone = t1.StoreOfK(base, order, "all")
    chosen = {t.id: everyone(t) for t in tasks}
    only = ["SheetAgent", "WordAgent"]
    two = t1.StoreOfK(base, only, "two")
    for t in tasks:
        picked = two(t)
        assert picked in only
        if chosen[t.id] in only:
            assert picked == chosen[t.id]  # an enrolled first choice stands
    with pytest.raises(NoAgentChosen, match="none chose no agent: none of them acts on a workspace task"):
        t1.StoreOfK(base, ["ClockAgent"], "none")(tasks[0])  # a phone agent cannot act on a workspace task


def test_a_torn_decisions_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "dev2").mkdir()
    (tmp_path / "dev2" / "decisions.json").write_text('{"decisions": {"gt": ')
    with pytest.raises(ConfigError, match="cannot read the arms' decisions") as err:
        t1.Table1.load(tmp_path)
    assert "decisions.json" in str(err.value) and "\n" not in str(err.value)


def test_fitted_size_arms_parse_order_and_refuse_what_cannot_be_fitted() -> None:
    assert t1.demos_of("agenttoken:30") == ("agenttoken", 30) and t1.demos_of("lora") == ("lora", None)
    assert t1.parse_arm("prompt:16") == ("prompt", None)
    for bad in ("gt:10", "agenttoken:0", "nope:3", "lora:x"):
        with pytest.raises(ConfigError, match="<router>:<n>"):
            t1.parse_arm(bad)
    assert t1.arms_of(["agenttoken:100", "hybrid@5", "lora:16", "agenttoken:10", "gt"]) == [
        "gt", "agenttoken:10", "agenttoken:100", "lora:16", "hybrid@5"]
    with pytest.raises(ConfigError, match="unknown arm 'best'.*<router>:<n>"):
        t1.parse_arm("best")


def test_a_fitted_router_is_kept_in_the_run_folder_and_loaded_by_the_next_invocation(pool, tmp_path: Path, monkeypatch,
                                                                                     caplog) -> None:
    import logging

    import numpy as np

    first = t1.fitted_route("embedding", pool, 2, keep=tmp_path)
    assert (tmp_path / "embedding-2-seed0" / t1.FITTED).is_file()
    from agentlab.metaagent.baselines.embedding import EmbeddingRouter

    def no_fit(self, train):  # the second invocation must not fit again
        raise AssertionError("fitted again")
    monkeypatch.setattr(EmbeddingRouter, "fit", no_fit)
    again = t1.fitted_route("embedding", pool, 2, keep=tmp_path)
    assert np.array_equal(again.router.examples, first.router.examples)
    for f in (tmp_path / "embedding-2-seed0" / "state").iterdir():
        f.write_text("torn")  # a state that does not load: one warning, a fresh fit
    monkeypatch.undo()
    with caplog.at_level(logging.WARNING, logger="agentlab.experiments.table1"):
        refit = t1.fitted_route("embedding", pool, 2, keep=tmp_path)
    assert np.array_equal(refit.router.examples, first.router.examples)
    assert "does not load" in caplog.text and "fitting it again" in caplog.text
    # a kept fit made from other demonstrations (an agent enrolled since) is not loaded: fitted again
    marker = tmp_path / "embedding-2-seed0" / t1.FITTED
    marker.write_text(marker.read_text().replace('"demonstrations": "', '"demonstrations": "0'))
    monkeypatch.setattr(EmbeddingRouter, "fit", no_fit)
    with pytest.raises(AssertionError, match="fitted again"):
        t1.fitted_route("embedding", pool, 2, keep=tmp_path)


def test_a_fitted_route_is_trained_on_the_size_it_names(pool) -> None:
    """The embedding router fitted on 1 seed per agent is a different router from one fitted on 10:
    its centroids come from fewer demonstrations, and it still routes only to agents that can act."""
    from agentlab.paths import data_dir
    from agentlab.run.episode import RouterRoute
    from agentlab.tasks.spec import load_tasks

    small, big = t1.fitted_route("embedding", pool, 1), t1.fitted_route("embedding", pool, 10)
    assert isinstance(small, RouterRoute) and small.kind == "embedding:1"
    assert len(small.router.examples) == len(pool) < len(big.router.examples)  # one demonstration per agent
    tasks = load_tasks(data_dir() / "tasks_dev2")[:8]
    for task in tasks:
        assert small(task) in small.acting("workspace") and big(task) in big.acting("workspace")


def test_the_record_gives_figure_3_and_5_curves(tmp_path: Path) -> None:
    import json

    record = tmp_path / "r.json"
    record.write_text(json.dumps({"command": "c", "model": "m", "config": {}, "domains": ["os"], "cells": {
        "gt": {"os": [2, 4], "all": [2, 4]}, "agenttoken:30": {"all": [1, 4]}, "agenttoken:10": {"all": [0, 4]},
        "hybrid@5": {"all": [1, 4]}, "hybrid@10": {"all": [3, 4]}}}))
    assert t1.record_curves(record, "demos") == {"agenttoken": ([10.0, 30.0], [0.0, 0.25])}
    assert t1.record_curves(record, "store") == {"hybrid": ([5.0, 10.0], [0.25, 0.75])}
    with pytest.raises(ConfigError, match="axis must be"):
        t1.record_curves(record, "time")


def test_the_sized_arms_table_puts_each_beside_its_plain_router() -> None:
    rows = {"gt": [_row("a", "os", "G", True), _row("b", "os", "G", False)],
            "agenttoken": [_row("a", "os", "G", True), _row("b", "os", "X", False)],
            "agenttoken:10": [_row("a", "os", "X", False), _row("b", "os", "X", False)],
            "hybrid@5": [_row("a", "os", "G", True), _row("b", "os", "G", False)]}
    table = t1.Table1(rows=rows, gold={"a": "G", "b": "G"})
    lines = table.size_lines()
    assert lines[0] == "| arm | what it is | solved | 95 % interval | routed to gold % |"
    assert lines[2].startswith("| agenttoken:10 | 10 demonstrations per agent | 0/2 (0.0 %) |") and lines[2].endswith("| 0.0 |")
    assert lines[3].startswith("| agenttoken | as shipped / default data | 1/2 (50.0 %) |")
    assert lines[4].startswith("| hybrid@5 | store of 5 agents | 1/2 (50.0 %) |") and len(lines) == 5
    assert t1.Table1(rows={"gt": rows["gt"]}, gold={}).size_lines() == []


def test_the_ratio_to_ground_truth_is_on_the_arms_own_tasks() -> None:
    """An arm run on one set only is compared with ground truth on that set, not on every set."""
    gt = [{**_row("a", "os", "G", True), "set": "s1"}, {**_row("b", "os", "G", False), "set": "s1"},
          {**_row("c", "os", "G", True), "set": "s2"}, {**_row("d", "os", "G", True), "set": "s2"}]
    arm = [{**_row("a", "os", "G", True), "set": "s1"}, {**_row("b", "os", "G", False), "set": "s1"}]
    table = t1.Table1(rows={"gt": gt, "icl": arm}, gold={t: "G" for t in "abcd"})
    line = next(ln for ln in table.summary_lines() if ln.startswith("| icl |"))
    assert "| 1.00 |" in line  # 1/2 against ground truth's 1/2 on s1 (not its 3/4 overall: 0.67)


def test_rows_match_across_folders_except_timings_and_where_the_folder_is(tmp_path: Path) -> None:
    """The Ray-against-serial check: timings and the folder's own path do not count; another reply
    shows in tokens even where both failed; a row in one folder only is counted, not compared."""
    a_root, b_root = tmp_path / "serial", tmp_path / "ray"

    def rows(root: Path, tokens: int, seconds: float) -> dict[str, list[dict[str, object]]]:
        out = []
        for task in "abc":
            r = {**_row(task, "calc", "SheetAgent", task == "a"), "set": "dev2", "seconds": seconds,
                 "trajectory": str(root / "dev2" / "by_agent" / "SheetAgent" / "episodes" / task),
                 "error": f"see {root}/dev2/log" if task == "c" else None}
            if task == "b":
                r["tokens_out"] = tokens
            out.append(r)
        return {"gt": out}

    a = t1.Table1(rows=rows(a_root, 2, 1.0), gold={})
    same = t1.match_rows(a, a_root, t1.Table1(rows=rows(b_root, 2, 9.5), gold={}), b_root)
    assert (same.compared, same.same, same.differing, same.unmatched) == (3, 3, [], 0)
    assert same.lines("`serial`") == ["3 of 3 (arm, set, task) rows identical to `serial`, timings and the run "
                                      "folder's own path aside; 0 row(s) in only one of the two folders."]
    other = rows(b_root, 7, 1.0)
    other["embedding"] = [dict(other["gt"][0])]
    diff = t1.match_rows(a, a_root, t1.Table1(rows=other, gold={}), b_root)
    assert diff.compared == 3 and diff.differing == [("gt", "dev2", "b", ["tokens_out"])] and diff.unmatched == 1
    assert any("| gt | dev2 | b | tokens_out |" in line for line in diff.lines("x"))
