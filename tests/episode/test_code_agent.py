"""The code agent on real workspaces holding real task files, driven by scripted replies."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from agentlab.agents.base import Solo
from agentlab.agents.base import AGENTS, Agent, agent_class
from agentlab.agents.code import CodeAgent
from agentlab.envs.workspace import Workspace, WorkspaceConfig, bwrap_available
from agentlab.envs.workspace_env import WorkspaceEnv
from agentlab.errors import ConfigError
from agentlab.tasks.spec import ExecTask
from agentlab.pool import AgentPool
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory


def py(code: str, end: str = "") -> str:
    return f"Here is the program.\n```python\n{code.rstrip()}\n```\n{end}".rstrip()


def episode(tmp_path: Path, task: ExecTask, pool: AgentPool, llm, *, max_steps: int = 5, sandbox: str = "none"):  # type: ignore[no-untyped-def]
    ws = Workspace(tmp_path / "ws", WorkspaceConfig(sandbox=sandbox))  # type: ignore[arg-type]
    task.prepare(ws.root)  # type: ignore[arg-type]
    doc = pool.get("SheetAgent")
    agent = Solo(CodeAgent(doc, doc.runner_options), llm)
    rec = TrajectoryRecorder(tmp_path / "ep", task=task.instruction)
    res = agent.run(WorkspaceEnv(ws), task.instruction, rec, max_steps)
    rec.finish(res.status, error=res.error)  # as the episode runner does
    return res, ws, load_trajectory(tmp_path / "ep")


def test_registry_names_the_runners() -> None:
    assert set(AGENTS) >= {"code", "appagent", "gui"}
    assert agent_class("code") is CodeAgent and agent_class("code").env_kind == "workspace"
    assert (agent_class("appagent").env_kind, agent_class("gui").env_kind) == ("phone", "desktop")
    with pytest.raises(ConfigError, match="unknown runner 'nope'; known runners: code"):
        agent_class("nope")


def test_success_on_a_real_task(tmp_path, task, pool, scripted, solution) -> None:
    llm = scripted(["Let me look first.\n```bash\ncat sales.csv\n```", py(solution, "DONE")])
    res, ws, traj = episode(tmp_path, task, pool, llm)
    assert isinstance(CodeAgent(pool.get("SheetAgent"), {}), Agent)
    assert (res.status, res.steps, res.llm_calls, res.error) == ("done", 2, 2, None)
    assert task.evaluate(ws.root).success
    system, first = llm.prompts[0][0].content, llm.prompts[0][1].content
    assert "You are SheetAgent" in system and "openpyxl" in system and "DONE" in system
    assert task.instruction in first and "sales.csv" in first
    assert "exit code 0" in llm.prompts[1][-1].content and "north,120.5" in llm.prompts[1][-1].content
    # every step is recorded with the model messages it was sent and its reply
    assert [s.action["type"] for s in traj.steps] == ["run_program", "run_program"] and traj.steps[-1].done
    assert traj.steps[0].info["messages"][0]["role"] == "system"
    assert traj.steps[1].info["messages"][-1] == {"role": "assistant", "content": py(solution, "DONE")}
    assert traj.meta.extra["runner"] == "code" and "code/system" in traj.meta.extra["prompts"]


def test_failing_program_then_a_fixed_one(tmp_path, task, pool, scripted, solution) -> None:
    broken = solution.replace("sales.csv", "sale.csv")
    llm = scripted([py(broken), py(solution, "DONE")])
    res, ws, _ = episode(tmp_path, task, pool, llm)
    shown = llm.prompts[1][-1].content
    assert "exit code 1" in shown and "FileNotFoundError" in shown and "sale.csv" in shown
    assert res.status == "done" and res.steps == 2 and task.evaluate(ws.root).success


def test_step_budget_runs_out(tmp_path, task, pool, scripted) -> None:
    llm = scripted([py("print(1)"), py("print(2)"), py("print(3)")])
    res, ws, traj = episode(tmp_path, task, pool, llm, max_steps=2)
    assert (res.status, res.steps, res.llm_calls) == ("max_steps", 2, 2) and len(llm.replies) == 1
    assert not task.evaluate(ws.root).success and traj.steps[-1].done and traj.steps[-1].action is None


def test_fail_ends_the_episode(tmp_path, task, pool, scripted) -> None:
    llm = scripted(["I cannot open spreadsheets.\nFAIL"])
    res, _, traj = episode(tmp_path, task, pool, llm)
    assert (res.status, res.steps) == ("failed", 1) and "FAIL" in (res.error or "")
    assert traj.steps[-1].action == {"type": "fail"} and traj.steps[-1].done


def test_done_with_a_failing_program_does_not_end(tmp_path, task, pool, scripted, solution) -> None:
    llm = scripted([py("raise SystemExit(3)", "DONE"), py(solution, "DONE")])
    res, ws, traj = episode(tmp_path, task, pool, llm)
    shown = llm.prompts[1][-1].content
    assert "its program failed, so the task goes on" in shown and "exit code 3" in shown
    assert res.status == "done" and res.steps == 2 and task.evaluate(ws.root).success
    assert [s.done for s in traj.steps] == [False, True]


def test_two_blocks_are_corrected(tmp_path, task, pool, scripted, solution) -> None:
    llm = scripted(["```python\nprint(1)\n```\nand\n```bash\nls\n```", py(solution, "DONE")])
    res, ws, traj = episode(tmp_path, task, pool, llm)
    correction = llm.prompts[1][-1].content
    assert "2 fenced blocks" in correction and "at most ONE program" in correction
    assert llm.prompts[1][-2].role == "assistant"  # the conversation went on with the correction
    assert res.status == "done" and res.steps == 1 and res.llm_calls == 2 and task.evaluate(ws.root).success
    assert "2 fenced blocks" in (traj.steps[0].error or "") and traj.steps[0].action is None


def test_unusable_replies_fail_the_episode(tmp_path, task, pool, scripted) -> None:
    llm = scripted(["hmm", "still thinking", "no idea"])
    res, _, _ = episode(tmp_path, task, pool, llm)
    assert res.status == "failed" and res.steps == 0 and res.llm_calls == 3
    assert "3 unusable replies in a row" in (res.error or "")


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap missing or cannot create namespaces here")
def test_writes_outside_the_workspace_are_blocked(tmp_path, task, pool, scripted, solution) -> None:
    target = Path(__file__).resolve().parent / f"pwned-{uuid.uuid4().hex}.txt"  # outside /tmp and the workspace
    try:
        llm = scripted([py(f"open({str(target)!r}, 'w').write('x')"), py(solution, "DONE")])
        res, ws, _ = episode(tmp_path, task, pool, llm, sandbox="bwrap")
        shown = llm.prompts[1][-1].content
        # the repository is not even there inside the sandbox (tests/envs/test_workspace.py)
        assert "exit code 1" in shown and "No such file or directory" in shown
        assert not target.exists()
        assert res.status == "done" and task.evaluate(ws.root).success
    finally:
        target.unlink(missing_ok=True)


def test_runner_options_are_checked(pool, scripted) -> None:
    doc = pool.get("SheetAgent")
    with pytest.raises(ConfigError, match="runner_options.colour"):
        CodeAgent(doc, {"colour": "red"})
    plain = CodeAgent(pool.get("Friday"), pool.get("Friday").runner_options)
    assert "Installed libraries" not in plain.system_prompt()


def test_fail_ends_even_when_its_program_fails(tmp_path, task, pool, scripted) -> None:
    llm = scripted([py("raise SystemExit(2)", "FAIL")])
    res, _, traj = episode(tmp_path, task, pool, llm)
    assert (res.status, res.steps, len(llm.prompts)) == ("failed", 1, 1) and traj.steps[-1].done


def test_the_same_failing_program_twice_ends_the_episode(tmp_path, task, pool, scripted, solution) -> None:
    """A repeat of a failing program, word for word, stops the episode (a row that says so) instead
    of burning the remaining steps; a different program after a failure, or a repeated one that
    succeeds, goes on."""
    llm = scripted([py("raise SystemExit(2)"), py("raise SystemExit(2)"), py(solution, "DONE")])
    res, ws, traj = episode(tmp_path, task, pool, llm, max_steps=5)
    assert (res.status, res.steps) == ("failed", 2) and "same failing program" in (res.error or "")
    assert len(llm.replies) == 1 and traj.steps[-1].done  # the third reply was never asked for
    llm = scripted([py("raise SystemExit(2)"), py("raise SystemExit(3)"), py(solution, "DONE")])
    res, ws, _ = episode(tmp_path / "b", task, pool, llm, max_steps=5)
    assert (res.status, res.steps) == ("done", 3) and task.evaluate(ws.root).success
    llm = scripted([py("print(1)"), py("print(1)"), py(solution, "DONE")])
    res, _, _ = episode(tmp_path / "c", task, pool, llm, max_steps=5)
    assert (res.status, res.steps) == ("done", 3)
