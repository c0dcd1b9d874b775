"""Both AppAgent phases end to end: the REAL embedded SmolLM2-135M driving the real AndroidEnv
(adbutils) against the fake adb server. The model is weak; what is checked is the loop:
it terminates within its bounds, every LLM reply ends up either as an executed action or as
a recorded error quoting it, and the trajectory and docs on disk are consistent."""

from __future__ import annotations

import pytest

from agentlab.agents import AppAgent, AppAgentConfig, DocStore
from agentlab.envs import AndroidEnv
from agentlab.envs.trajectory import load_trajectory

pytestmark = pytest.mark.slow


def _check_trajectory(path, max_calls: int) -> None:  # type: ignore[no-untyped-def]
    t = load_trajectory(path)
    assert t.meta.model_id.startswith("SmolLM2") and t.meta.status in {"done", "failed", "max_steps"}
    assert t.steps and t.steps[-1].done
    for s in t.steps[:-1]:
        # Each record is an executed action with the text it came from, or an error with the reply.
        assert (s.action is not None and s.action_text) or s.error, s
    assert t.meta.extra["llm_calls"] <= max_calls


def test_explore_then_deploy_with_embedded_model(backend, fake_adb, tmp_path) -> None:
    cfg = dict(app="clock", docs_dir=tmp_path / "docs", max_retries=0, max_new_tokens=40)
    explorer = AppAgent(backend, AppAgentConfig(max_rounds=1, **cfg))
    res = explorer.explore(AndroidEnv(adb_port=fake_adb.port, settle=0), "turn off vibration", tmp_path / "run" / "explore")
    # <= (1 round) x (1 act attempt + 1 reflect attempt); retries are covered by the scripted tests
    assert res.status in {"done", "failed", "max_steps"} and res.llm_calls <= 2 and res.steps <= 1
    _check_trajectory(tmp_path / "run" / "explore", 2)
    store = DocStore("clock", tmp_path / "docs")
    assert set(res.extra["documented"]) == set(store.documented())

    deployer = AppAgent(backend, AppAgentConfig(max_steps=2, **cfg))
    res = deployer.deploy(AndroidEnv(adb_port=fake_adb.port, settle=0), "turn off vibration", tmp_path / "run" / "deploy")
    assert res.status in {"done", "failed", "max_steps"} and res.steps <= 2 and res.llm_calls <= 2
    _check_trajectory(tmp_path / "run" / "deploy", 2)
    executed = [s for s in load_trajectory(tmp_path / "run" / "deploy").steps if s.action and s.action["type"] != "exit"]
    taps = [c for c in fake_adb.device.commands if c.startswith("input")]
    assert len(taps) >= len(executed)  # every executed action reached the device
