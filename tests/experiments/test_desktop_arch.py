"""The desktop architectures table: who does each task per variant, and what the table says."""

from __future__ import annotations

import math

import pytest

from agentlab.run.episode import NoAgentChosen
from agentlab.errors import ConfigError
from agentlab.tasks.spec import load_tasks
from agentlab.experiments import desktop_arch
from agentlab.experiments.desktop_arch import DesktopArchConfig, Variant, default_variants, gui_agent
from agentlab.fileio import read_jsonl
from agentlab.pool import AgentPool


@pytest.fixture(scope="module")
def pool() -> AgentPool:
    return AgentPool.from_dir("data/agents")


@pytest.fixture(scope="module")
def desktop_tasks():
    return [t for t in load_tasks() if t.env == "desktop"]


def test_gui_agent_follows_the_task_application(pool, desktop_tasks):
    by_id = {t.id: t for t in desktop_tasks}
    assert gui_agent(by_id["calc-enter-total"], pool) == "CalcAgent"
    assert pool.get(gui_agent(by_id["calc-enter-total"], pool)).runner == "gui"
    writer = next(t for t in desktop_tasks if t.apps and t.apps[0] == "libreoffice-writer")
    assert gui_agent(writer, pool) == "WriterAgent"


def test_default_variants_name_pool_agents_with_the_ablation_options(pool):
    variants = default_variants()
    assert len({v.name for v in variants}) == len(variants)
    for v in variants:
        if v.agent not in (desktop_arch.GUI, desktop_arch.STORE):
            assert v.agent in pool
    opts = {v.name: v.runner_options for v in variants}
    assert opts["S2 w/o proactive replanning"] == {"replan": False}
    assert opts["PC-Agent w/o reflection"] == {"reflection": False}
    assert opts["PC-Agent w/o active perception"] == {"ocr": False}


def _fake_rows(monkeypatch, subtasks: dict[str, tuple[int, int]]):
    """TEST DOUBLE for the episode runs: each (task, agent) gets a row; the agents named in
    ``subtasks`` report (planned, done) subtasks and succeed when all are done."""
    calls: list[tuple[str, tuple[str, ...], dict]] = []

    def fake_run_pairs(pairs, *, pool, llm, out_dir, options, progress, retry_errors):
        out = {}
        for agent, tasks in pairs.items():
            calls.append((agent, tuple(t.id for t in tasks), dict(options.runner_options)))
            for t in tasks:
                planned, done = subtasks.get(agent, (None, None))
                row = {"id": t.id, "domain": t.domain, "agents": [agent], "success": planned is not None and done == planned,
                       "score": 0.0, "status": "done", "error": None, "steps": 2, "llm_calls": 4, "tokens_in": 100,
                       "tokens_out": 10, "seconds": 1.0, "trajectory": f"{agent}/episodes/{t.id}"}
                if planned is not None:
                    row.update(subtasks=planned, subtasks_done=done)
                out[(t.id, agent)] = row
        return out

    monkeypatch.setattr(desktop_arch, "run_pairs", fake_run_pairs)
    return calls


def test_run_routes_each_variant_and_the_table_reports_subtasks(monkeypatch, tmp_path, pool, desktop_tasks):
    calls = _fake_rows(monkeypatch, {"AgentS2": (3, 3), "PCAgent": (2, 1)})
    config = DesktopArchConfig(tasks=2, variants=[
        Variant(name="S2", agent="AgentS2"),
        Variant(name="PC no refl", agent="PCAgent", runner_options={"reflection": False}),
        Variant(name="gui", agent="gui"),
    ])
    table = desktop_arch.run(desktop_tasks, pool, llm=None, config=config, out_dir=tmp_path, progress=False)
    assert ("PCAgent", calls[1][1], {"reflection": False}) == calls[1]
    frame = table.frame()
    assert frame.loc["S2", "ExecutionAcc %"] == 100.0 and frame.loc["S2", "subtask success %"] == 100.0
    assert frame.loc["PC no refl", "ExecutionAcc %"] == 0.0 and frame.loc["PC no refl", "subtask success %"] == 50.0
    assert math.isnan(frame.loc["gui", "subtask success %"])  # a flat runner reports no subtasks
    assert frame.loc["S2", "llm_calls / task"] == 4.0
    rows = read_jsonl(tmp_path / "variants" / "pc_no_refl" / "results.jsonl")
    assert [r["router"] for r in rows] == ["PC no refl"] * 2
    assert all(r["trajectory"].startswith("../../runs/reflection_false/PCAgent/") for r in rows)


def test_variants_with_the_same_agent_and_options_share_episodes(monkeypatch, tmp_path, pool, desktop_tasks):
    seen: list[str] = []

    def fake_run_pairs(pairs, *, pool, llm, out_dir, options, progress, retry_errors):
        seen.append(out_dir.name)
        return {(t.id, a): {"id": t.id, "domain": t.domain, "agents": [a], "success": False, "trajectory": f"{a}/x"}
                for a, ts in pairs.items() for t in ts}

    monkeypatch.setattr(desktop_arch, "run_pairs", fake_run_pairs)
    config = DesktopArchConfig(tasks=1, variants=[Variant(name="a", agent="AgentS2"), Variant(name="b", agent="AgentS2"),
                                                   Variant(name="c", agent="AgentS2", runner_options={"replan": False})])
    desktop_arch.run(desktop_tasks, pool, llm=None, config=config, out_dir=tmp_path, progress=False)
    assert seen == ["default", "default", "replan_false"]  # a and b resume the same run folder
    seen.clear()
    config = config.model_copy(update={"common_options": {"max_retries": 1}})
    desktop_arch.run(desktop_tasks, pool, llm=None, config=config, out_dir=tmp_path, progress=False)
    assert seen == ["max_retries_1", "max_retries_1", "max_retries_1_replan_false"]  # common options reach every variant


def test_a_router_that_names_no_agent_is_a_failed_row_not_a_crash(monkeypatch, tmp_path, pool, desktop_tasks):
    _fake_rows(monkeypatch, {})

    def refuse(task):
        raise NoAgentChosen("the reply named no agent")

    monkeypatch.setattr(desktop_arch, "router_route", lambda kind, pool, tokens: refuse)
    config = DesktopArchConfig(tasks=1, variants=[Variant(name="store", agent="store")])
    table = desktop_arch.run(desktop_tasks, pool, llm=None, config=config, out_dir=tmp_path, progress=False)
    (row,) = table.rows["store"]
    assert row["status"] == "no_agent" and row["error"] is None and not row["success"]


def test_bad_configs_fail_before_anything_runs(tmp_path, pool, desktop_tasks):
    with pytest.raises(ConfigError, match="distinct"):
        desktop_arch.run(desktop_tasks, pool, None, DesktopArchConfig(variants=[Variant(name="a", agent="AgentS2")] * 2), tmp_path)
    with pytest.raises(ConfigError, match="no desktop task"):
        desktop_arch.run(desktop_tasks, pool, None, DesktopArchConfig(prefixes=["nope-"]), tmp_path)
    with pytest.raises(Exception, match="NoSuchAgent"):
        desktop_arch.run(desktop_tasks, pool, None, DesktopArchConfig(variants=[Variant(name="x", agent="NoSuchAgent")]), tmp_path)


def test_the_role_table_says_which_role_of_which_model_spent_the_calls():
    rows = [{"usage_by_role": {"manager": {"model_id": "planner-7b", "llm_calls": 2, "tokens_in": 100, "tokens_out": 10},
                               "grounder": {"model_id": "grounder-7b", "llm_calls": 1, "tokens_in": 900, "tokens_out": 4,
                                            "images": 1, "image_bytes": 5000}}},
            {"usage_by_role": {"manager": {"model_id": "planner-7b", "llm_calls": 4, "tokens_in": 300, "tokens_out": 30}}}]
    frame = desktop_arch.ArchTable(rows={"Agent S2": rows}).role_frame()
    assert list(frame["role"]) == ["grounder", "manager"] and list(frame["model"]) == ["grounder-7b", "planner-7b"]
    assert list(frame["llm_calls / task"]) == [0.5, 3.0] and list(frame["image_bytes / task"]) == [2500.0, 0.0]


def test_the_grounding_ablation_rows_are_agent_s2_with_each_grounding(pool):
    rows = desktop_arch.grounding_variants()
    assert {v.agent for v in rows} == {"AgentS2"} and "AgentS2" in pool
    assert sorted(v.runner_options["grounding"] for v in rows) == ["elements", "worker"]
    names = {v.name for v in default_variants()}
    assert not names & {v.name for v in rows}  # opt-in: the default table is unchanged


def test_pc_agent_rows_carry_recovery_and_manager_success_read_from_their_trajectories(monkeypatch, tmp_path, pool, desktop_tasks):
    """The PC-Agent rows get the paper's recovery and manager figures from the episodes they ran;
    other runners' rows do not, and the table shows "-" for them."""
    from agentlab.envs.trajectory import TrajectoryRecorder

    two_apps = next(t for t in desktop_tasks if t.id == "pc-attendees-to-roster")
    one_app = next(t for t in desktop_tasks if t.id == "calc-enter-total")

    def fake_run_pairs(pairs, *, pool, llm, out_dir, options, progress, retry_errors):
        out = {}
        for agent, tasks in pairs.items():
            for t in tasks:
                rel = f"{agent}/episodes/{t.id}"
                rec = TrajectoryRecorder(out_dir / rel, task=t.instruction, env="desktop", agent=agent)
                plan = ["Read the names in attendees.docx (Writer)", "Type them into roster.xlsx in Calc"]
                rec.record(None, None, info={"subtask": 1, "roles": [
                    {"role": "manager", "text": "1. ...", "plan": plan},
                    {"role": "reflection", "verdict": "no effect" if t is two_apps else "as intended"}]})
                rec.record(None, None, info={"subtask": 1, "roles": [{"role": "reflection", "verdict": "as intended"}]})
                rec.finish("done")
                met = [1.0, 0.0, 0.0] if t is two_apps else [0.0]
                out[(t.id, agent)] = {"id": t.id, "domain": t.domain, "agents": [agent], "success": False,
                                      "status": "done", "trajectory": rel,
                                      "verdict": {"score": 0.0, "checks": [{"score": m} for m in met]}}
        return out

    monkeypatch.setattr(desktop_arch, "run_pairs", fake_run_pairs)
    monkeypatch.setattr(desktop_arch, "choose_tasks", lambda tasks, config: [two_apps, one_app])
    config = DesktopArchConfig(variants=[Variant(name="PC-Agent", agent="PCAgent"), Variant(name="S2", agent="AgentS2")])
    table = desktop_arch.run(desktop_tasks, pool, llm=None, config=config, out_dir=tmp_path, progress=False)
    pc = {r["id"]: r for r in table.rows["PC-Agent"]}
    assert (pc["pc-attendees-to-roster"]["recovered"], pc["pc-attendees-to-roster"]["manager_ok"]) == (True, True)
    assert (pc["calc-enter-total"]["recovered"], pc["calc-enter-total"]["manager_ok"]) == (False, None)
    assert all("recovered" not in r for r in table.rows["S2"])
    frame = table.frame()
    assert frame.loc["PC-Agent", "recovery %"] == 50.0 and frame.loc["PC-Agent", "manager SR %"] == 100.0
    assert math.isnan(frame.loc["S2", "recovery %"]) and math.isnan(frame.loc["S2", "manager SR %"])
    assert frame.loc["S2", "Reward"] == 0.17  # AppAgent's Reward: one check of three, then none of one
