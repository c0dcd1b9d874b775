"""ExecutionAcc per arm: routing decides the agent, episodes are shared between arms that agree,
rows per arm in the exec format, resumable. A scripted test double replays reference solutions."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.errors import ConfigError, DataError
from agentlab.tasks.spec import ExecTask, load_tasks
from agentlab.experiments.execution_acc import ExecAccConfig, pick_tasks, run
from agentlab.fileio import read_jsonl
from agentlab.llm.base import LLMBackend

from .conftest import ReplayReference


@pytest.fixture(scope="module")
def tasks() -> list[ExecTask]:
    return load_tasks()


def test_pick_tasks_spans_domains_first(tasks) -> None:
    some = pick_tasks(tasks, 5, ["workspace"])
    assert len(some) == 5 and len({t.domain for t in some}) == 5 and all(t.env == "workspace" for t in some)
    everything = pick_tasks(tasks, None, ["workspace", "desktop"])
    # the multi-agent tasks (a gold plan) are Table 2's, never Table 1's
    assert sorted(t.id for t in everything) == sorted(t.id for t in tasks if t.env in ("workspace", "desktop") and not t.plan)
    assert any(t.plan for t in tasks) and not any(t.plan for t in everything)


@given(st.integers(min_value=1, max_value=80))
def test_pick_tasks_is_a_prefix_of_the_full_order(tasks, n) -> None:
    full = pick_tasks(tasks, None)  # the task files are read once (the module's fixture): no deadline flakes
    assert [t.id for t in pick_tasks(tasks, n)] == [t.id for t in full[:n]]


def test_arms_share_episodes_and_write_exec_rows(tmp_path: Path, tasks, pool) -> None:
    chosen = pick_tasks(tasks, 4, ["workspace"])
    solve = {chosen[0].id, chosen[1].id}
    llm = ReplayReference(chosen, solve)
    wrong = {chosen[0].id: "CalcAgent"}  # a GUI agent for a workspace task: the router's mistake

    def mostly_gold(task):
        from agentlab.run.episode import gt_agent

        if task.id == chosen[3].id:
            raise DataError("no agent fits", where=task.id)
        return wrong.get(task.id) or gt_agent(task, pool)

    config = ExecAccConfig(arms=["gt", "mine", "generalist"], tasks=4, envs=["workspace"], max_steps=2, generalist="CoderAgent")
    res = run(tasks, pool, llm, config, tmp_path, progress=False, routes={"mine": mostly_gold})
    gt, mine, gen = res.rows["gt"], res.rows["mine"], res.rows["generalist"]
    assert [r["id"] for r in gt] == [t.id for t in chosen] and all(r["router"] == "gt" for r in gt)
    assert sum(r["success"] for r in gt) == 2
    # mine agrees with gt on tasks 1 and 2: the same episode rows, relabelled
    assert [r["success"] for r in mine] == [False, True, False, False]
    assert mine[0]["status"] == "wrong_env" and mine[3]["error"].endswith("no agent fits") and mine[3]["agents"] == []
    for a, b in zip(gt[1:3], mine[1:3], strict=True):
        assert {k: v for k, v in a.items() if k != "router"} == {k: v for k, v in b.items() if k != "router"}
    assert sum(r["success"] for r in gen) == 2 and {r["agents"][0] for r in gen} == {"CoderAgent"}
    frame = res.summary_frame()
    assert frame.loc["gt", "ExecutionAcc %"] == 50.0 and frame.loc["mine", "ExecutionAcc %"] == 25.0
    assert frame.loc["gt", "routed to gold agent %"] == 100.0 and frame.loc["mine", "routed to gold agent %"] == 50.0
    assert frame.loc["mine", "harness errors"] == 1 and frame.loc["mine", "wrong env"] == 1
    acc = res.accuracy_frame()
    assert acc.loc["all", "gt"] == 50.0 and list(acc.columns) == ["gt", "mine", "generalist"]
    # arm rows on disk; each trajectory path leads to the shared episode
    on_disk = read_jsonl(tmp_path / "arms" / "mine" / "results.jsonl")
    assert [r["id"] for r in on_disk] == [t.id for t in chosen]
    assert (tmp_path / "arms" / "mine" / on_disk[1]["trajectory"] / "traj.jsonl").is_file()
    # distinct (task, agent) episodes ran once each; a rerun resumes and asks the model nothing
    calls = llm.calls
    again = run(tasks, pool, llm, config, tmp_path, progress=False, routes={"mine": mostly_gold})
    assert llm.calls == calls and again.summary_frame().equals(frame)


def test_no_arms_or_no_tasks_is_one_clear_error(tmp_path, tasks, pool) -> None:
    with pytest.raises(ConfigError, match="no arms"):
        run(tasks, pool, ReplayReference([], set()), ExecAccConfig(arms=[]), tmp_path)
    with pytest.raises(ConfigError, match="no task of envs"):
        run(tasks, pool, ReplayReference([], set()), ExecAccConfig(envs=["nowhere"]), tmp_path)


def test_heatmap_inputs_match_the_rows() -> None:
    from agentlab.experiments.execution_acc import ExecAcc

    row = {"agents": ["A"], "steps": 1, "llm_calls": 1, "tokens_in": 0, "tokens_out": 0, "seconds": 1.0}
    res = ExecAcc(rows={"gt": [dict(row, id="a", domain="x", success=True), dict(row, id="b", domain="x", success=False),
                               dict(row, id="c", domain="y", success=True)]}, gold={"a": "A", "b": "A", "c": "B"})
    rates, counts = res.heatmap()
    assert rates == {"gt": {"x": 0.5, "y": 1.0, "overall": 2 / 3}} and counts == {"gt": {"x": 2, "y": 1, "overall": 3}}
    assert res.summary_frame().loc["gt", "routed to gold agent %"] == 66.7


def test_docs_ablation_runs_the_gold_phone_agent_with_and_without_docs(tmp_path, tasks, pool) -> None:
    from agentlab.experiments.execution_acc import docs_ablation

    class Finisher(LLMBackend):  # TEST DOUBLE: ends every episode at once
        model_id = "scripted-finish"

        def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
            return ["Observation: a screen\nThought: nothing to do\nAction: FINISH\nSummary: stopped"]

        def complete(self, prompt, params=None):  # type: ignore[no-untyped-def]
            raise AssertionError

    res = docs_ablation(tasks, pool, Finisher(), ExecAccConfig(tasks=2, max_steps=2), tmp_path)
    assert list(res.rows) == ["with docs", "without docs"] and set(res.documented) == {"ClockAgent"}
    for arm, use_docs in (("with docs", True), ("without docs", False)):
        rows = res.rows[arm]
        assert len(rows) == 2
        assert all(r["agents"] == ["ClockAgent"] and r["runner_options"] == {"use_docs": use_docs} for r in rows)
        assert all(r["error"] is None and r["success"] is False for r in rows)  # FINISH at once solves nothing
    assert res.summary_frame().loc["with docs", "tasks"] == 2
