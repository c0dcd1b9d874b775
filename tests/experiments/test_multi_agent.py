"""The Table 2 analog: plan items, the SubtaskAcc calibration, and measure() over methods, plans
only (the real AgentToken router for the clause baseline) and executed (scripted agents)."""

from __future__ import annotations

import pytest

from agentlab.experiments.multi_agent import (calibrate_threshold, items_from_tasks, load_plan_items, markdown_table,
                                              measure)
from agentlab.paths import data_dir

from ..episode.conftest import ScriptedBackend, py
from ..episode.test_executed_plans import REPORT, TOTAL, two_step_task

ITEMS = data_dir() / "benchmarks" / "two_agent_plans.jsonl"


def test_plan_items_and_calibration(pool, scorer) -> None:
    items = load_plan_items(ITEMS, pool)
    assert len(items) == 16 and all(len(it.gold_domains) == 2 and it.gold_plan for it in items)
    assert items[0].gold_domains == ("calc", "writer")
    cal = calibrate_threshold(items, scorer)
    assert min(cal.other) < cal.threshold <= max(cal.matching) and cal.balanced_accuracy > 0.8
    mid = sorted(cal.matching)[len(cal.matching) // 2]
    assert mid > sorted(cal.other)[len(cal.other) // 2]  # the clause of its own instruction scores higher
    assert any("threshold" in line for line in cal.describe())


def test_plan_only_gold_and_clauses(pool, backend, scorer) -> None:
    items = load_plan_items(ITEMS, pool)[:2]
    table = measure(["gold", "clauses", "single"], items, pool=pool, llm=backend, plan_only=True, scorer=scorer,
                    calibration_items=load_plan_items(ITEMS, pool))
    gold, clauses, single = table.rows
    assert (gold["agent_match"], gold["subtask_acc"]) == (1.0, 1.0) and gold["execution_acc"] is None
    assert 0.0 <= clauses["agent_match"] <= 1.0 and clauses["no_plan"] == 0
    assert [len(p) for p in table.results[1].plans] == [2, 2] or clauses["agent_match"] < 1.0
    assert "executed only" in single["skipped"]
    text = "\n".join(table.markdown())
    assert "| gold | 2 | 100.0 | 100.0 | — |" in text and "| single | skipped" in text


def test_executed_gold_plan_and_generalist(tmp_path, pool, scorer) -> None:
    task = two_step_task()
    items = items_from_tasks([task], pool)
    assert items[0].gold_domains == ("calc", "writer")
    llm = ScriptedBackend([py(TOTAL, "DONE"), py(REPORT, "DONE"), py(TOTAL + "\n" + REPORT, "DONE")])
    table = measure(["gold", "single"], items, pool=pool, llm=llm, out=tmp_path, scorer=scorer)
    gold, single = table.rows
    assert (gold["agent_match"], gold["execution_acc"], gold["llm_calls"]) == (1.0, 1.0, 2.0)
    assert (single["agent_match"], single["execution_acc"]) == (0.0, 1.0)  # CoderAgent alone: right result, wrong team
    assert (tmp_path / "gold" / "results.jsonl").exists() and (tmp_path / "single" / "results.jsonl").exists()
    assert markdown_table(table.rows)[0].startswith("| method | tasks | AgentMatch %")
    low, high = gold["execution_ci"]  # 1 of 1: Wilson's interval still reaches down
    assert 0.0 < low < 0.5 and high == pytest.approx(1.0)
    assert "| 100.0 [" in "\n".join(markdown_table(table.rows))  # ExecutionAcc with its Wilson interval


def test_team_rows_report_what_the_reviewer_triggered(pool) -> None:
    from agentlab.experiments.multi_agent import MethodResult, table_row

    items = items_from_tasks([two_step_task()], pool) * 2
    rows = [{"id": items[0].id, "success": False, "reviews": 3, "retries": 1, "reassignments": 1, "backtracks": 0, "questions": 0},
            {"id": items[0].id, "success": False, "reviews": 5, "retries": 2, "reassignments": 0, "backtracks": 1}]
    cola = table_row(MethodResult("cola", [[], []], rows=rows), items, pool, None, 0.5)
    assert cola["team"] == {"reviews": 8, "action_reviews": 0, "actions_rejected": 0, "retries": 3, "reassignments": 1,
                            "backtracks": 1, "questions": 0}
    gold = table_row(MethodResult("gold", [[], []], rows=[{"id": items[0].id, "success": True}] * 2), items, pool, None, 0.5)
    assert "team" not in gold  # a row without a reviewer counts nothing
    text = "\n".join(markdown_table([gold, cola]))
    assert "cola over 2 task(s): the reviewer judged 8 step(s), which led to 3 retries, 1 reassignment(s), 1 backtrack(s)" in text


def test_table2_says_what_each_role_spent(pool) -> None:
    from agentlab.experiments.multi_agent import MethodResult, table_row

    items = items_from_tasks([two_step_task()], pool) * 2
    use = {"planner": {"model_id": "planner-7b", "llm_calls": 1, "tokens_in": 300, "tokens_out": 40},
           "agent": {"model_id": "vl-7b", "llm_calls": 4, "tokens_in": 2000, "tokens_out": 80, "images": 4, "image_bytes": 10}}
    rows = [{"id": items[0].id, "success": True, "usage_by_role": use}, {"id": items[0].id, "success": False}]
    cola = table_row(MethodResult("cola", [[], []], rows=rows), items, pool, None, 0.5)
    assert cola["roles"]["planner"] == {"model": "planner-7b", "llm_calls": 0.5, "tokens_in": 150.0, "tokens_out": 20.0,
                                        "image_bytes": 0.0}
    text = "\n".join(markdown_table([cola]))
    assert "cola per role and task: agent (vl-7b): 2.0 calls, 1000/40 tokens; planner (planner-7b): 0.5 calls" in text


def test_a_resumed_table2_keeps_the_finished_rows_and_runs_no_model(tmp_path, pool, scorer) -> None:
    """``resume``: the method's folder is kept and its finished task is not run again (the scripted
    model has no reply left: a second run would fail); without it the folder is replaced."""
    items = items_from_tasks([two_step_task()], pool)
    measure(["gold"], items, pool=pool, llm=ScriptedBackend([py(TOTAL, "DONE"), py(REPORT, "DONE")]), out=tmp_path,
            scorer=scorer)
    before = (tmp_path / "gold" / "results.jsonl").read_text()
    again = measure(["gold"], items, pool=pool, llm=ScriptedBackend([]), out=tmp_path, scorer=scorer, resume=True)
    assert again.rows[0]["execution_acc"] == 1.0 and (tmp_path / "gold" / "results.jsonl").read_text() == before
    with pytest.raises(AssertionError, match="ran out of replies"):  # replaced: run again, asking the model
        measure(["gold"], items, pool=pool, llm=ScriptedBackend([]), out=tmp_path, scorer=scorer)
