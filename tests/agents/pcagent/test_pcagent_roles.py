"""PC-Agent with a model per role behind a real OpenAI-compatible endpoint (a loopback test double
that records requests): the decision and reflection agents' vision models are sent the screen
(one marked screenshot; before and after), the progress agent's text model is sent none, and each
role reaches its own model name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentlab.agents.base import run_agent
from agentlab.agents.context import Models, RunContext
from agentlab.agents.pcagent.runner import PCAgent
from agentlab.agents.roles import known_roles
from agentlab.envs.desktop import DesktopEnv
from agentlab.llm.roles import load_models_file
from agentlab.envs.trajectory import TrajectoryRecorder

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(300)]


def _n_images(body: dict[str, Any]) -> int:
    content = body["messages"][-1]["content"]
    return sum(1 for p in content if p.get("type") == "image_url") if isinstance(content, list) else 0


def test_the_decision_and_reflection_models_see_the_screen_and_the_progress_model_reads(
        xdisplay, needs_a11y, demo_app, pc_doc, tmp_path: Path, chat_server) -> None:
    script = {"decide-vl": ["Action: click(1)", "Action: subtask_done()"],
              "reflect-vl": ["Verdict: as intended\nReason: the count went up."],
              "progress-7b": ["Progress: pressed Add one."] * 3}
    url = chat_server(lambda body, k: script[body["model"]].pop(0))
    cfg = tmp_path / "models.yaml"
    cfg.write_text(f"""
llm: {{kind: openai, base_url: "{url}", model: progress-7b}}
roles:
  decision: {{kind: openai, base_url: "{url}", model: decide-vl, vision: true}}
  reflection: {{kind: openai, base_url: "{url}", model: reflect-vl, vision: true, max_image_side: 640}}
""")
    mf = load_models_file(cfg, known_roles())
    models = Models(mf.load())
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.", env="desktop", agent=pc_doc.name)
    res = run_agent(PCAgent(pc_doc, {"manager": False, "ocr": False}), env, "Press Add one.", RunContext(models, rec, 3))
    assert res.status == "done", res.error
    assert demo_app.wait_for("count", 1)["count"] == 1
    seen = {(r["model"], _n_images(r)) for r in chat_server.requests}
    assert seen == {("decide-vl", 1), ("reflect-vl", 2), ("progress-7b", 0)}
    usage = models.usage_by_role()
    assert usage["decision"]["model_id"] == "decide-vl" and usage["reflection"]["images"] == 2
    assert usage["progress"]["model_id"] == "progress-7b" and "images" not in usage["progress"]
