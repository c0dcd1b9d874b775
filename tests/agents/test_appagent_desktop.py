"""AppAgent on a real desktop (the GTK demo app under Xvfb), with a SCRIPTED backend: exploration
documents elements under their desktop uids (an accessibility-tree uid and a grid cell), and
deployment with ``use_docs`` shows that documentation again on the next run."""

from __future__ import annotations

import json

import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.agents import AppAgent, AppAgentConfig, DocStore
from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop import DesktopEnv
from agentlab.envs.xdisplay import VirtualDisplay, xvfb_available

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(180)]

DOC = "Decision: CONTINUE\nThought: the count went up\nDocumentation: Adds one to the count."


@pytest.fixture
def demo(tmp_path):
    reason = xvfb_available()
    if reason:
        missing_system(f"no X server: {reason}")
    with VirtualDisplay(width=1280, height=800) as disp:
        proc = disp.launch_demo_app(tmp_path / "state.json")
        yield disp
        disp.stop_app(proc)


def _agent(llm, tmp_path) -> AppAgent:  # type: ignore[no-untyped-def]
    return AppAgent(llm, AppAgentConfig(app="demo", docs_dir=tmp_path / "docs", use_docs=True))


def _explore_then_deploy(llm_cls, env: DesktopEnv, element: int, tmp_path) -> tuple[DocStore, str]:  # type: ignore[no-untyped-def]
    llm = llm_cls([f"Action: click({element})", DOC, "Action: stop()"])
    res = _agent(llm, tmp_path).explore(env, "count to one", tmp_path / "explore")
    assert (res.status, res.steps) == ("done", 1), res.error
    assert json.loads((tmp_path / "state.json").read_text())["count"] == 1  # the click reached the button
    llm = llm_cls(["Action: FINISH"])
    res = _agent(llm, tmp_path).deploy(env, "count to two", tmp_path / "deploy")
    assert res.status == "done"
    return DocStore("demo", tmp_path / "docs"), llm.prompts[0][-1].content


def test_accessibility_uids_are_documented_and_shown_in_deployment(demo, scripted, tmp_path) -> None:
    reason = pyatspi_available()
    if reason:
        missing_system(f"no accessibility tree: {reason}")
    env = DesktopEnv(display=demo, app="demo_gtk")
    add = next(e for e in env.observe().elements if e.text == "Add one")
    assert add.uid == "demo_gtk.py:push button:Add one"
    store, prompt = _explore_then_deploy(scripted, env, add.id, tmp_path)
    assert store.documented() == ["demo_gtk.py:push button:Add one"]
    assert f"[{add.id}] click: Adds one to the count." in prompt


def test_grid_cell_uids_are_documented_and_shown_in_deployment(demo, scripted, tmp_path) -> None:
    env = DesktopEnv(display=demo, a11y="off", grid=(36, 14))  # cell (1, 2) holds the "Add one" button
    cell = next(e for e in env.observe().elements if e.uid == "grid:1,2")
    store, prompt = _explore_then_deploy(scripted, env, cell.id, tmp_path)
    assert store.documented() == ["grid:1,2"]
    assert f"[{cell.id}] click: Adds one to the count." in prompt
