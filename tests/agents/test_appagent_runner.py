"""Runner ``appagent``: the AppAgent deploy loop behind the Agent protocol (fake adb, scripted model)."""

from __future__ import annotations

import pytest

from agentlab.agents.base import Solo
from agentlab.agents.base import Agent, agent_class
from agentlab.envs import AndroidEnv
from agentlab.errors import ConfigError
from agentlab.pool import AgentPool
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory


def test_appagent_runner_deploys_on_the_phone(fake_adb, scripted, tmp_path) -> None:
    doc = AgentPool.from_dir(None).get("ClockAgent")
    assert doc.runner == "appagent"
    cls = agent_class(doc.runner)
    llm = scripted(["Action: tap(2)\nSummary: opened settings", "Action: tap(2)\nSummary: vibration off",
                    "Action: FINISH\nSummary: done"])
    assert cls(doc, {}).config.actions == "typed"  # a phone specialist's default: typed GUI calls (and the app's skills)
    runner = Solo(cls(doc, {"docs_dir": str(tmp_path / "docs"), "actions": "raw"}), llm)  # AppAgent's own replies: the ablation
    assert isinstance(runner.agent, Agent) and runner.agent.config.app == "clock"
    rec = TrajectoryRecorder(tmp_path / "ep", task="turn off vibration")
    res = runner.run(AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01), "turn off vibration", rec, 5)
    assert (res.status, res.steps, res.llm_calls) == ("done", 2, 3)
    assert fake_adb.device.app.vibrate is False
    assert load_trajectory(tmp_path / "ep").meta.status == "done"
    with pytest.raises(ConfigError, match="runner_options.max_steps"):
        Solo(cls(doc, {"max_steps": 0}), llm)
