"""Agent S2 in LibreOffice Calc under Xvfb: the structural expert writes cells into the open
document over UNO, and a whole task runs through ``run_task`` from a pool document with
``runner: s2`` (scripted replies; the task's evaluator reads the saved file)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.agents.s2.actions import SetCells
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import MODEL_ROLES
from agentlab.agents.s2.cells import SYSTEM_PYTHON
from agentlab.agents.s2.config import S2Config
from agentlab.agents.s2.grounding import Mixture
from agentlab.agents.s2.screen import Screen
from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop_task import open_desktop_task
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.xdisplay import xvfb_available
from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.pool import AgentPool
from agentlab.envs.trajectory import load_trajectory

pytestmark = [pytest.mark.xvfb, pytest.mark.slow, pytest.mark.timeout(600)]


def _needs_calc_and_uno() -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if not shutil.which("soffice"):
        missing_system("LibreOffice is not installed (apt-get install libreoffice-calc libreoffice-gtk3)")
    if not Path(SYSTEM_PYTHON).exists() or subprocess.run([SYSTEM_PYTHON, "-c", "import uno"],
                                                          capture_output=True).returncode != 0:
        missing_system(f"{SYSTEM_PYTHON} cannot import uno (apt-get install python3-uno)")


def _budget(path: Path) -> tuple:
    ws = openpyxl.load_workbook(path)["Budget"]
    return ws["A4"].value, ws["B4"].value, ws["B3"].value


def test_the_structural_expert_writes_cells_into_the_open_calc_document(tmp_path, s2) -> None:
    _needs_calc_and_uno()
    opened = open_desktop_task(load_task(tasks_dir() / "calc-enter-total.json"), tmp_path,
                               TaskEnvOptions(app_start_timeout_s=240))
    try:
        env = opened.env
        assert env.uno_url  # type: ignore[attr-defined]
        cfg = S2Config()
        mixture = Mixture(cfg, env, RoleAsker(s2.Backend([]), cfg, system="s2/system", correction="s2/feedback", model_roles=MODEL_ROLES))
        grounded = mixture.ground(SetCells((("A4", "Total"), ("B4", 60))), Screen(env.observe()))
        assert grounded.expert == "structural" and grounded.actions == []
        done = mixture.carry_out(grounded)
        assert done.write is not None and (done.write.route, done.write.sheet) == ("uno", "Budget")
        assert done.info["saved"] is True and done.write.document.endswith("/budget.xlsx")
        opened.collect()  # LibreOffice stops; the file is what it saved
        assert _budget(opened.root / "budget.xlsx") == ("Total", 60, 50)
    finally:
        opened.close()


def test_run_task_carries_a_calc_task_out_with_an_s2_document(tmp_path, s2) -> None:
    _needs_calc_and_uno()
    agents = tmp_path / "agents"
    agents.mkdir()
    doc = (Path(__file__).parents[3] / "data" / "agents" / "desktop" / "CalcAgent.md").read_text()
    doc = doc.replace("name: CalcAgent", "name: AgentS2").replace("runner_options:\n  file_agent: SheetAgent\n", "")
    doc = doc.replace("runner: gui", "runner: s2\nrunner_options:\n  ocr: false")
    (agents / "AgentS2.md").write_text(doc)
    pool = AgentPool.from_dir(agents)
    assert pool.get("AgentS2").runner == "s2"
    llm = s2.Backend([s2.plan("Enter Total in A4 and 60 in B4 and save"),
                      s2.act('set_cells({"A4": "Total", "B4": 60})', "the cells can be written directly"),
                      s2.act("done()"), "DONE"])
    task = load_task(tasks_dir() / "calc-enter-total.json")
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "run", agent="AgentS2",
                   options=ExecOptions(max_steps=5, envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    assert (row["success"], row["status"], row["agents"]) == (True, "done", ["AgentS2"])
    assert (row["steps"], row["llm_calls"], row["subtasks"], row["subtasks_done"]) == (1, 4, 1, 1)
    assert "set_cells(" in llm.prompts[1][-1].content and "desktop computer" in llm.prompts[0][0].content
    traj = load_trajectory(tmp_path / "run" / row["trajectory"])
    grounding = [r for s in traj.steps for r in s.info.get("roles", []) if r["role"] == "grounding"]
    assert len(grounding) == 1 and grounding[0]["expert"] == "structural" and "A4='Total'" in grounding[0]["target"]
    assert traj.meta.extra["runner"] == "s2" and traj.meta.extra["s2_config"]["ocr"] is False
