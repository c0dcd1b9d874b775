"""Agent S2 with a model per role behind a real OpenAI-compatible HTTP endpoint (a loopback test
double that records every request): the manager, worker and grounder each reach their own model
name, the grounding request carries the downscaled screenshot, and the point it answers is where
the click lands on a real GTK app under Xvfb."""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any

import pytest
from PIL import Image

from agentlab.agents.base import run_agent
from agentlab.agents.context import Models, RunContext
from agentlab.agents.roles import known_roles
from agentlab.agents.s2.runner import AgentS2
from agentlab.envs.desktop import DesktopEnv
from agentlab.llm.roles import load_models_file
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(300)]


def _images(body: dict[str, Any]) -> list[Image.Image]:
    """The images of a request's last message, decoded from their data URLs."""
    content = body["messages"][-1]["content"]
    parts = content if isinstance(content, list) else []
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    return [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls]


def _text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else next(p["text"] for p in content if p.get("type") == "text")


def roles_file(tmp_path, url: str, *, coords_side: int = 640):  # type: ignore[no-untyped-def]
    path = tmp_path / "models.yaml"
    path.write_text(f"""
llm: {{kind: openai, base_url: "{url}", model: planner-7b}}
roles:
  manager: {{kind: openai, base_url: "{url}", model: planner-7b}}
  worker: {{kind: openai, base_url: "{url}", model: actor-vl-7b, vision: true}}
  grounder: {{kind: openai, base_url: "{url}", model: grounder-7b, vision: true, max_image_side: {coords_side}}}
""")
    return path


@pytest.mark.parametrize("coords", ["pixels", "relative"])
def test_each_role_reaches_its_own_model_and_the_grounders_point_is_clicked(
        xdisplay, demo_app, needs_a11y, s2, tmp_path, chat_server, coords: str) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    add = next(e for e in env.observe().elements if e.text.startswith("Add one"))
    cx, cy = add.center
    # the grounder answers in its convention on the image it was sent (640x400 of the 1280x800 screen)
    point = f"<point>{cx // 2} {cy // 2}</point>" if coords == "pixels" else \
        json.dumps({"point_2d": [round(cx / 1280 * 1000), round(cy / 800 * 1000)]})
    script = {"planner-7b": [s2.plan("Press Add one"), "DONE"],
              "actor-vl-7b": [s2.act('click("the Add one button")'), s2.act("done()")],
              "grounder-7b": [point]}

    def reply(body: dict[str, Any], k: int) -> str:
        return script[body["model"]].pop(0)

    url = chat_server(reply)
    models_file = load_models_file(roles_file(tmp_path, url), known_roles())
    models = Models(models_file.load())
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.")
    res = run_agent(AgentS2(s2.doc(), {"point_coords": coords}), env, "Press Add one.", RunContext(models, rec, 5))
    assert res.status == "done", res.error
    assert demo_app.wait_for("count", 1)["count"] == 1  # the click landed on the button
    requests = chat_server.requests
    assert [r["model"] for r in requests] == ["planner-7b", "actor-vl-7b", "grounder-7b", "actor-vl-7b", "planner-7b"]
    assert _images(requests[0]) == []  # the manager's model takes no images: the text observation
    (shot,) = _images(requests[1])
    assert shot.size == (1280, 800)  # the worker sees the screen at its own side (1280)
    (ground,) = _images(requests[2])
    assert ground.size == (640, 400) and "640x400 pixels" in _text(requests[2])
    assert ("0-1000 grid" in _text(requests[2])) == (coords == "relative")
    assert re.search(r"Add one", _text(requests[2]))
    traj = load_trajectory(tmp_path / "ep")
    click = next(s.action for s in traj.steps if s.action and s.action.get("type") == "click")
    assert abs(click["x"] - cx) <= 2 and abs(click["y"] - cy) <= 2 and click["element"] is None
    g = next(r for s in traj.steps for r in s.info.get("roles", []) if r["role"] == "grounding")
    assert g["method"] == "model point" and g["model_role"] == "grounder" and g["coords"] == coords
    usage = models.usage_by_role()
    assert {r: u["model_id"] for r, u in usage.items()} == {
        "manager": "planner-7b", "worker": "actor-vl-7b", "grounder": "grounder-7b"}
    assert (usage["manager"]["llm_calls"], usage["worker"]["llm_calls"], usage["grounder"]["llm_calls"]) == (2, 2, 1)
    assert usage["grounder"]["images"] == 1 and 0 < usage["grounder"]["image_bytes"] < usage["worker"]["image_bytes"]
    total = models.total()
    assert sum(u["llm_calls"] for u in usage.values()) == total.calls == 5
    assert sum(u["tokens_in"] for u in usage.values()) == total.tokens_in == 5  # the server reports 1 per call


def test_a_failed_grounding_is_fed_back_to_the_worker(xdisplay, demo_app, needs_a11y, s2, tmp_path, chat_server) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    add = next(e for e in env.observe().elements if e.text.startswith("Add one"))
    script = {"planner-7b": [s2.plan("Press Add one"), "DONE"],
              "actor-vl-7b": [s2.act('click("the blue thing")'), s2.act('click("the Add one button")'), s2.act("done()")],
              # no point in the answer, three times (max_retries=2): the worker is told; then a point
              "grounder-7b": ["I do not see it."] * 3 + [f"({add.center[0] // 2}, {add.center[1] // 2})"]}
    url = chat_server(lambda body, k: script[body["model"]].pop(0))
    models_file = load_models_file(roles_file(tmp_path, url), known_roles())
    models = Models(models_file.load())
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.")
    res = run_agent(AgentS2(s2.doc(), {"max_retries": 2}), env, "Press Add one.", RunContext(models, rec, 5))
    assert res.status == "done", res.error
    assert demo_app.wait_for("count", 1)["count"] == 1
    worker_retry = next(r for r in chat_server.requests[1:] if r["model"] == "actor-vl-7b" and r is not chat_server.requests[1])
    assert "could not place 'the blue thing'" in json.dumps(worker_retry["messages"])
