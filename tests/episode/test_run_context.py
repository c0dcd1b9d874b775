"""One execution core (issue #28): every agent gets a run context, the episode counts what it spent
(also when the time limit stops it), by role, and a new team is one registry entry."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from agentlab.agents.context import Models, RunContext
from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.llm.base import ChatMessage, Metered
from agentlab.record.row import EpisodeRow
from agentlab.teams import base as teams
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

#: the phone specialists reply with typed GUI calls by default (the raw sectioned replies of
#: AppAgent are the ``actions: raw`` ablation): Settings, the Vibrate switch, done
SOLVE_VIBRATE = ["click(2)", "click(2)", "done()"]


def test_two_meters_over_one_backend_count_only_their_own_calls(scripted) -> None:
    class Counting(scripted):  # type: ignore[misc,valid-type]
        tokens_in = tokens_out = 0

        def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
            self.tokens_in += 10
            self.tokens_out += 3
            return super().chat(messages, params)

    inner = Counting(["a", "b", "c"])
    models = Models(inner)
    models.get("planner").chat([ChatMessage("user", "x")])
    models.get("reviewer").chat([ChatMessage("user", "y")])
    models.get("planner").chat([ChatMessage("user", "z")])
    assert models.get("planner").spent() == (2, 20, 6) and models.get("reviewer").spent() == (1, 10, 3)
    assert models.total().as_row() == {"llm_calls": 3, "tokens_in": 30, "tokens_out": 9, "loop_cuts": 0}
    assert set(models.usage_by_role()) == {"planner", "reviewer"}
    assert isinstance(models.get("planner"), Metered)


def test_the_time_limit_keeps_appagents_steps_and_prompt_hashes(tmp_path: Path, pool, scripted) -> None:
    """Regression: AppAgent's runner used to open a second recorder on the episode folder, so an
    episode cut by the time limit reported 0 steps and lost its prompt hashes."""
    def slow(reply: str):  # type: ignore[no-untyped-def]
        def answer(messages: list[ChatMessage]) -> str:
            time.sleep(0.8)
            return reply
        return answer

    task = load_task(tasks_dir() / "clock-vibrate-off.json")
    llm = scripted([slow(r) for r in SOLVE_VIBRATE])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(time_limit_s=2.0))
    assert row["status"] == "time_limit" and row["agents"] == ["ClockAgent"]
    assert row["steps"] >= 1 and row["llm_calls"] >= 2, row
    traj = load_trajectory(tmp_path / row["trajectory"])
    assert "prompts" in traj.meta.extra and traj.meta.extra["task_id"] == task.id
    assert sum(1 for s in traj.steps if s.action is not None) == row["steps"]


def test_usage_by_role_adds_up_to_the_row(tmp_path: Path, pool, scripted) -> None:
    task = load_task(tasks_dir() / "clock-vibrate-off.json")
    row = run_task(task, pool=pool, llm=scripted(list(SOLVE_VIBRATE)), out_dir=tmp_path, options=ExecOptions())
    assert row["success"] and row["llm_calls"] == 3
    by_role = row["usage_by_role"]
    assert by_role == {"agent": {"model_id": "scripted-test-double", "llm_calls": 3, "tokens_in": 0, "tokens_out": 0}}
    for key in ("llm_calls", "tokens_in", "tokens_out"):
        assert sum(r[key] for r in by_role.values()) == row[key]


class _EchoTeam:
    """A team written for this test: it opens the task's env and writes the answer file itself."""

    def prepare(self, job: teams.Job, row: EpisodeRow) -> teams.Opening | None:
        row.agents = ["echo"]
        return teams.Opening(job.task.env, job.options.envs)

    def run(self, job: teams.Job, opened: Any, row: EpisodeRow) -> None:
        rec = TrajectoryRecorder(job.folder, task=job.task.instruction)
        ctx = job.context(rec)
        reply = ctx.llm("echo").chat([ChatMessage("user", job.task.instruction)])[0]
        (opened.root / "echo.txt").write_text(reply)
        row.status, row.steps = "done", 1

    def judged(self, job: teams.Job, verdict: Any) -> None:
        pass

    def close(self, job: teams.Job, row: EpisodeRow) -> None:
        pass


def test_a_new_team_is_one_registry_entry(tmp_path: Path, pool, scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(teams.TEAMS, "echo", teams.TeamEntry(f"{__name__}:_EchoTeam"))
    task = load_task(tasks_dir() / "csv-sales-summary.json")
    row = run_task(task, pool=pool, llm=scripted(["hello"]), out_dir=tmp_path, options=ExecOptions(team="echo"))
    assert row["error"] is None and row["status"] == "done" and row["agents"] == ["echo"]
    assert row["usage_by_role"]["echo"]["llm_calls"] == 1 and row["llm_calls"] == 1
    assert (tmp_path / "episodes" / task.id / "workspace" / "echo.txt").read_text() == "hello"
    assert row["success"] is False and row["evaluate_s"] >= 0  # judged by the kernel, like any team


def test_an_unknown_team_is_a_harness_error_naming_the_known_ones(tmp_path: Path, pool, scripted) -> None:
    task = load_task(tasks_dir() / "csv-sales-summary.json")
    with pytest.raises(Exception, match="unknown team 'nope'; known teams: single, plan, cola"):
        run_task(task, pool=pool, llm=scripted([]), out_dir=tmp_path, options=ExecOptions(team="nope"))


def test_an_agent_alone_gets_a_context_of_its_own(tmp_path: Path, pool, scripted) -> None:
    from agentlab.agents.base import build_agent, run_agent
    from agentlab.envs.workspace import Workspace, WorkspaceConfig
    from agentlab.envs.workspace_env import WorkspaceEnv

    agent = build_agent(pool.get("SheetAgent"), {"max_attempts": 1}, seed=2)
    assert agent.options.seed == 2  # type: ignore[attr-defined]
    rec = TrajectoryRecorder(tmp_path / "ep", task="t")
    ctx = RunContext(Models(scripted(["FAIL"])), rec, max_steps=3)
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="none")) as ws:
        res = run_agent(agent, WorkspaceEnv(ws), "Do nothing.", ctx)
    assert res.status == "failed" and ctx.usage().calls == 1
