"""Executed plans: a two-step plan on one shared workspace, each step by its own agent, the hub
passing step 1's result into step 2's prompt; rows carry the plan and the step outcomes."""

from __future__ import annotations

import json


from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import ExecTask
from agentlab.tasks.decisions import PlanStep, RouteResult
from agentlab.teams.hub import Hub, StepOutcome, changed_files, snapshot
from agentlab.envs.trajectory import load_trajectory

from .conftest import py

TOTAL = "import csv\nt = sum(float(r['amount']) for r in csv.DictReader(open('sales.csv')))\nopen('total.txt', 'w').write(str(t))\nprint('Total is', t)"
REPORT = "t = open('total.txt').read()\nopen('report.md', 'w').write('# Sales\\n\\nTotal: ' + t + '\\n')"


def two_step_task(**update: object) -> ExecTask:
    raw = {
        "id": "multi-sales-report", "domain": "multi_apps", "env": "workspace",
        "instruction": "Sum the amounts in sales.csv into total.txt, then write report.md saying 'Total: <sum>'.",
        "setup": [{"type": "write_text", "path": "sales.csv", "content": "region,amount\nnorth,120.5\nsouth,80\n"}],
        "outputs": ["report.md"],
        "evaluator": {"func": "contains", "result": {"type": "file_text", "path": "report.md"},
                      "expected": {"type": "literal", "value": "Total: 200.5"}},
        "plan": [{"agent": "SheetAgent", "subtask": "Sum the amounts in sales.csv into total.txt"},
                 {"agent": "WordAgent", "subtask": "Write report.md saying 'Total: <sum>'"}],
    }
    return ExecTask.model_validate({**raw, **update})


def test_gold_plan_runs_both_agents_and_the_hub_passes_step_one_on(tmp_path, pool, scripted) -> None:
    llm = scripted([py(TOTAL, "DONE"), py(REPORT, "DONE")])
    row = run_task(two_step_task(), pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    assert (row["status"], row["success"], row["error"]) == ("done", True, None)
    assert row["plan"] == [{"agent": "SheetAgent", "subtask": "Sum the amounts in sales.csv into total.txt"},
                           {"agent": "WordAgent", "subtask": "Write report.md saying 'Total: <sum>'"}]
    assert row["agents"] == ["SheetAgent", "WordAgent"] and row["plan_source"] == "gold"
    first, second = row["step_outcomes"]
    assert (first["agent"], first["status"], first["files"], first["steps"]) == ("SheetAgent", "done", ["total.txt"], 1)
    assert first["output"] == "Total is 200.5" and "wrote total.txt" in first["summary"]
    assert (second["agent"], second["files"]) == ("WordAgent", ["report.md"])
    assert (row["steps"], row["llm_calls"]) == (2, 2)
    # each agent got its own system prompt; step 2's prompt carries step 1's file and output
    assert "You are SheetAgent" in llm.prompts[0][0].content and "You are WordAgent" in llm.prompts[1][0].content
    asked_first, asked_second = llm.prompts[0][1].content, llm.prompts[1][1].content
    assert "Earlier steps" not in asked_first and "Sum the amounts in sales.csv into total.txt" in asked_first
    assert "1. SheetAgent (done): wrote total.txt; output: Total is 200.5" in asked_second
    assert "Your subtask: Write report.md" in asked_second and "total.txt" in asked_second
    # one trajectory per step; the first record of each carries the hub's role message
    ep = tmp_path / row["trajectory"]
    t2 = load_trajectory(ep / "step-2-WordAgent")
    hub_msg = t2.steps[0].info["roles"][0]
    assert hub_msg["role"] == "hub" and "SheetAgent (done)" in hub_msg["text"] and hub_msg["values"]["files"] == ["total.txt"]
    assert load_trajectory(ep / "step-1-SheetAgent").meta.extra["plan_step"] == 1
    assert second["trajectory"] == "episodes/multi-sales-report/step-2-WordAgent"
    assert json.loads((ep / "plan.json").read_text())["step_outcomes"][1]["files"] == ["report.md"]


def test_a_failed_step_does_not_stop_the_plan_and_is_reported(tmp_path, pool, scripted) -> None:
    llm = scripted(["I cannot.\nFAIL", py(REPORT, "DONE"), "total.txt is missing.\nFAIL"])
    row = run_task(two_step_task(), pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    assert [o["status"] for o in row["step_outcomes"]] == ["failed", "failed"]  # report.md cannot read total.txt
    assert row["status"] == "failed" and not row["success"] and row["error"] is None
    assert "1. SheetAgent (failed)" in llm.prompts[1][1].content and "FAIL" in llm.prompts[1][1].content


def test_a_step_cut_by_the_time_limit_keeps_its_cost(tmp_path, pool, scripted) -> None:
    slow = "import time; time.sleep(1.2)\n" + TOTAL
    llm = scripted([py(slow), py(REPORT)])  # step 1's program outlasts the task's limit; its next reply is cut off
    row = run_task(two_step_task(), pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3, time_limit_s=1.0))
    first = row["step_outcomes"][0]
    assert first["status"] == "time_limit" and (first["steps"], first["llm_calls"]) == (1, 2)
    assert row["llm_calls"] >= 2 and not row["success"]


def test_a_gui_agent_on_a_workspace_task_is_a_wrong_env_step(tmp_path, pool, scripted) -> None:
    task = two_step_task(plan=[{"agent": "CalcAgent", "subtask": "sum it"}, {"agent": "WordAgent", "subtask": "report"}])
    llm = scripted([py(TOTAL.replace("total.txt", "t.txt"), "DONE")])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    assert [o["status"] for o in row["step_outcomes"]] == ["wrong_env", "done"]
    assert row["status"] == "wrong_env" and row["error"] is None and "acts on a desktop" in row["agent_error"]


def test_single_agent_rows_are_unchanged_when_a_plan_is_not_run(tmp_path, pool, scripted) -> None:
    llm = scripted([py(TOTAL + "\n" + REPORT, "DONE")])
    row = run_task(two_step_task(), pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3), agent="CoderAgent")
    assert row["success"] and "plan" not in row and "step_outcomes" not in row and row["agents"] == ["CoderAgent"]


def test_manager_mode_executes_the_planners_plan_or_reports_no_plan(tmp_path, pool, scripted) -> None:
    plan = [PlanStep("CoderAgent", "Sum the amounts into total.txt"), PlanStep("WordAgent", "Write report.md")]
    llm = scripted([py(TOTAL, "DONE"), py(REPORT, "DONE")])
    opts = ExecOptions(max_steps=3, mode="manager", router="agenttoken")
    row = run_task(two_step_task(plan=None), pool=pool, llm=llm, out_dir=tmp_path / "a", options=opts,
                   planner=lambda t: RouteResult(agent="CoderAgent", ranking=[], plan=plan, raw="###CoderAgent: ...###"))
    assert row["success"] and row["plan_source"] == "manager" and row["agents"] == ["CoderAgent", "WordAgent"]
    failed = run_task(two_step_task(plan=None), pool=pool, llm=scripted([]), out_dir=tmp_path / "b", options=opts,
                      planner=lambda t: RouteResult(agent=None, ranking=[], error="no line of the form ###AgentName: subtask###"))
    assert (failed["status"], failed["error"], failed["success"]) == ("no_plan", None, False)
    assert "no line of the form" in failed["plan_error"] and failed["plan"] == [] and failed["step_outcomes"] == []


def test_snapshot_finds_added_changed_and_removed_files(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("1")
    (tmp_path / "b.txt").write_text("2")
    (tmp_path / "__pycache__").mkdir()
    before = snapshot(tmp_path)
    (tmp_path / "a.txt").write_text("3")  # same size, new content
    (tmp_path / "b.txt").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.csv").write_text("x")
    (tmp_path / "__pycache__" / "m.pyc").write_text("x")
    assert changed_files(before, snapshot(tmp_path)) == (["a.txt", "sub/c.csv"], ["b.txt"])


def test_hub_context_lists_only_earlier_steps() -> None:
    hub = Hub("task", [PlanStep("A", "x"), PlanStep("B", "y"), PlanStep("C", "z")])
    assert hub.context_for(0) == ""
    hub.record(StepOutcome(index=0, agent="A", subtask="x", status="done", files=["o.csv"], summary="wrote o.csv"))
    hub.record(StepOutcome(index=1, agent="B", subtask="y", status="max_steps", summary="changed no file"))
    assert hub.context_for(1).splitlines()[1:] == ["1. A (done): wrote o.csv"]
    assert hub.context_for(2).splitlines()[1:] == ["1. A (done): wrote o.csv", "2. B (max_steps): changed no file"]
    assert hub.values_for(2)["files"] == ["o.csv"]


def test_a_specialist_step_is_asked_its_subtask_without_the_whole_task(tmp_path, pool, scripted) -> None:
    """A slot-filling specialist (tools runner) gets the hub's context and its subtask; a code agent
    also gets the whole task for reference (the other parts' values would compete for its slots)."""
    task = two_step_task(plan=[{"agent": "CoderAgent", "subtask": "Sum the amounts in sales.csv into total.txt"},
                               {"agent": "WordAgent", "subtask": "Write report.md saying 'Total: <sum>'"}])
    llm = scripted([py(TOTAL, "DONE"), py(REPORT, "DONE")])
    run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    coder, word = llm.prompts[0][1].content, llm.prompts[1][1].content
    assert "The whole task, for reference" in coder and "Sum the amounts in sales.csv" in coder
    assert "The whole task, for reference" not in word and "Sum the amounts in sales.csv into total.txt, then" not in word
    assert "Your subtask: Write report.md" in word and "1. CoderAgent (done): wrote total.txt" in word
