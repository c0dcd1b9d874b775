"""The AppAgent loop runs unchanged behind an OpenAI-compatible endpoint (issue 5: "it must work
unchanged with a strong model behind an OpenAI-compatible endpoint").

The endpoint is a real HTTP server on loopback speaking ``POST /v1/chat/completions``; the agent
reaches it through ``load_backend`` and the official ``openai`` client. Its replies play a capable
model: a small policy that reads the screen listing the agent sent and answers in the agent's
format (tap the element labelled "Settings", then the vibration switch, then finish), so the test
fails if the prompt stops carrying the labelled elements or the reply format drifts.
"""

from __future__ import annotations

import re

import pytest

from agentlab.agents import AppAgent, AppAgentConfig
from agentlab.envs import AndroidEnv
from agentlab.llm import LLMConfig, load_backend
from agentlab.envs.trajectory import load_trajectory


def _element(prompt: str, pattern: str) -> int | None:
    """Number of the first listed element ``[n] Class "label"`` whose line matches ``pattern``."""
    for line in prompt.splitlines():
        m = re.match(r"\s*\[(\d+)\]\s+(.*)", line)
        if m and re.search(pattern, m.group(2), re.I):
            return int(m.group(1))
    return None


def _capable_model(body: dict, k: int) -> str:
    """Answer like a capable model would, from the screen listing in the agent's last message."""
    prompt = body["messages"][-1]["content"]
    vib = _element(prompt, r"vibrat")
    settings = _element(prompt, r'"Settings"')
    if "vibration is off" in prompt.lower():
        return "Observation: the switch is off\nThought: the task is done\nAction: FINISH\nSummary: vibration is off"
    if vib is not None:
        return f"Observation: settings page\nThought: flip the switch\nAction: tap({vib})\nSummary: opened settings, vibration is off"
    if settings is not None:
        return f"Observation: home screen\nThought: open settings\nAction: tap({settings})\nSummary: opened settings"
    return "Observation: unknown\nThought: go back\nAction: back()\nSummary: went back"


def test_deploy_through_openai_compatible_endpoint(fake_adb, chat_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    endpoint = chat_server(_capable_model)
    backend = load_backend(LLMConfig(kind="openai", base_url=endpoint, model="strong-model"))
    agent = AppAgent(backend, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", max_new_tokens=200))
    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    res = agent.deploy(env, "turn off vibration", tmp_path / "run" / "ep")

    assert res.status == "done", res
    assert fake_adb.device.app.vibrate is False  # the phone's state changed, read from the fake app
    reqs = chat_server.requests
    assert len(reqs) == 3 and all(r["path"] == "/v1/chat/completions" for r in reqs)
    assert all(r["model"] == "strong-model" and r["max_tokens"] == 200 for r in reqs)
    assert reqs[0]["messages"][0]["role"] == "system" and "turn off vibration" in reqs[0]["messages"][-1]["content"]
    assert "opened settings" in reqs[1]["messages"][-1]["content"]  # the running summary is fed back
    t = load_trajectory(tmp_path / "run" / "ep")
    assert t.meta.model_id == "strong-model" and [a.call_name for a in t.actions()] == ["tap", "tap", "exit"]


def test_unreachable_endpoint_is_one_line_and_keeps_the_trajectory(fake_adb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from agentlab.errors import AgentlabError

    backend = load_backend(LLMConfig(kind="openai", base_url="http://127.0.0.1:9/v1", model="m", timeout_s=2))
    agent = AppAgent(backend, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs"))
    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    with pytest.raises(AgentlabError) as err:
        agent.deploy(env, "turn off vibration", tmp_path / "run" / "ep")
    assert "cannot reach the OpenAI-compatible server at http://127.0.0.1:9/v1" in str(err.value)
    assert "\n" not in str(err.value)
    assert (tmp_path / "run" / "ep" / "traj.jsonl").is_file()
