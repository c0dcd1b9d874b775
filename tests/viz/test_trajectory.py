"""Trajectory viz: actions drawn where they act, the timeline, the inspector and its static view."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from agentlab.envs.actions.desktop import Click, Drag, Hotkey, Scroll
from agentlab.envs.actions.phone import Finish, Swipe, Tap
from agentlab.envs.base import Element, Observation
from agentlab.errors import DataError
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory
from agentlab.viz.trajectory import (
    ACTION_RGB,
    TrajectoryInspector,
    action_geometry,
    draw_action,
    episode_timeline,
    static_html,
)

BUTTON = Element(id=1, bbox=(100, 100, 200, 140), role="push button", text="OK", resource_id=None, clickable=True, uid="ok")
LIST = Element(id=2, bbox=(0, 200, 400, 300), role="list", text="items", resource_id=None, clickable=True, uid="list")


def _screen(color=(240, 240, 240)) -> Image.Image:
    img = Image.new("RGB", (400, 300), color)
    ImageDraw.Draw(img).rectangle(BUTTON.bbox, fill=(200, 200, 200))
    return img


@pytest.fixture
def episode(tmp_path):
    """A three-step episode written with the real recorder (a tap, a failing swipe, a finish)."""
    rec = TrajectoryRecorder(tmp_path / "run" / "ep1", task="press OK", env="test", agent="unit", model_id="none")
    obs = Observation(screenshot=_screen(), elements=[BUTTON, LIST])
    rec.record(obs, Tap(1), thought="OK is the button", action_text="tap(1)")
    rec.record(obs, Swipe(2, "up", "long"), thought="scroll the list", error="swipe failed: device busy")
    rec.record(obs, Finish(), done=True, reflection="done")
    rec.finish("done")
    return tmp_path / "run" / "ep1"


def _red_pixels(img: Image.Image, box=None) -> int:
    img = img.crop(box) if box else img
    return sum(n for n, c in img.getcolors(1 << 20) if c == ACTION_RGB)


def test_click_geometry_and_drawing_mark_the_element_centre():
    geo = action_geometry(Tap(1), [BUTTON], (400, 300))
    assert geo["point"] == (150, 120) and geo["box"] == BUTTON.bbox
    img = draw_action(_screen(), Tap(1), [BUTTON])
    assert img.getpixel((150, 120)) == ACTION_RGB  # the dot
    assert _red_pixels(img, (0, 200, 400, 300)) == 0  # nothing drawn far from the button
    assert draw_action(_screen(), Click(x=30, y=250)).getpixel((30, 250)) == ACTION_RGB


def test_swipe_and_drag_become_arrows():
    geo = action_geometry(Swipe(2, "up", "medium"), [LIST], (400, 300))
    assert geo["arrow"] == ((200, 250), (200, 170))  # 2/10 of the width upwards
    img = draw_action(_screen(), Swipe(2, "up", "medium"), [LIST])
    assert img.getpixel((200, 210)) == ACTION_RGB  # on the shaft
    geo = action_geometry(Drag(start=(10, 10), end=(300, 250)), [], (400, 300))
    assert geo["arrow"] == ((10, 10), (300, 250))
    geo = action_geometry(Scroll("down", 3), [], (400, 300))
    assert geo["arrow"][0] == (200, 150) and geo["arrow"][1][1] > 150


def test_unknown_element_and_keys_only_caption():
    geo = action_geometry(Tap(9), [BUTTON], (400, 300))
    assert "point" not in geo and "not in this step's list" in geo["caption"]
    assert action_geometry(Hotkey("ctrl", "s"), [], (400, 300)) == {"caption": "press ctrl+s"}
    img = draw_action(_screen(), {"type": "no_such_action"})
    assert img.getpixel((2, 2)) == (0, 0, 0)  # the caption banner says it is unreadable


def test_timeline_shows_steps_errors_and_end(episode):
    fig = episode_timeline(load_trajectory(episode))
    step, err, done = fig.data
    assert list(step.x) == [0, 2] and list(step.y) == ["tap", "exit"]
    assert list(err.x) == [1] and "device busy" in err.hovertext[0]
    assert list(done.x) == [2]
    assert "3 steps, 1 error(s), status done" in fig.layout.title.text


def test_static_html_embeds_screenshots_and_texts(episode):
    page = static_html(load_trajectory(episode))
    assert page.count('<img class="agentlab-step"') == 3
    assert "data:image/png;base64," in page and "OK is the button" in page and "device busy" in page
    assert "Plotly.newPlot" in page


def test_inspector_walks_episodes_and_offers_widget_and_static_views(episode, tmp_path):
    insp = TrajectoryInspector(episode.parent)  # a run folder: its episodes are listed
    assert list(insp.episodes) == ["run/ep1"]
    rec = insp.select("run/ep1", 99)
    assert rec.step == 2 and insp.step_index == 2  # clamped to the last step
    insp.select("run/ep1", 0)
    png = insp.step_png(som=False)
    img = Image.open(__import__("io").BytesIO(png)).convert("RGB")
    assert img.getpixel((150, 120)) == ACTION_RGB
    assert "OK is the button" in insp.step_details_html()
    bundle = insp._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"].count("agentlab-step") == 3
    with pytest.raises(DataError):
        insp.select("nope")
    with pytest.raises(DataError):
        TrajectoryInspector(tmp_path / "missing")


def test_inspector_shows_a_code_agents_program_exit_code_and_output(tmp_path) -> None:
    """An execution episode (the real episode runner, a scripted code agent): each step card shows the
    program, its exit code and its output; the failing first program's stderr is there too."""
    from agentlab.run.episode import ExecOptions, run_task
    from agentlab.tasks.spec import load_task, tasks_dir
    from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
    from agentlab.pool import AgentPool
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.viz.trajectory import TrajectoryInspector, static_html

    task = load_task(tasks_dir() / "csv-sales-summary.json")
    assert task.reference_solution is not None
    replies = ["```python\nprint('looking'); import no_such_module\n```",
               f"```python\n{task.reference_solution.code}\nprint('saved the report')\n```\nDONE"]

    class Scripted(LLMBackend):  # TEST DOUBLE: canned replies, in order
        model_id = "scripted"

        def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
            return [replies.pop(0)]

        def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
            raise AssertionError

    row = run_task(task, pool=AgentPool.from_dir(None), llm=Scripted(), out_dir=tmp_path, options=ExecOptions(max_steps=3))
    assert row["success"] and row["steps"] == 2
    traj = load_trajectory(tmp_path / row["trajectory"])
    assert traj.steps[0].info["program"]["returncode"] != 0 and "no_such_module" in traj.steps[0].info["program"]["stderr"]
    page = static_html(traj)
    assert "program (python)" in page and "import no_such_module" in page
    assert "exit code 1" in page and "ModuleNotFoundError" in page
    assert "exit code 0" in page and "saved the report" in page
    inspector = TrajectoryInspector([tmp_path / "episodes"])
    assert inspector.episodes and "saved the report" in inspector.static_html()


def test_inspector_shows_each_roles_message_plan_verdict_and_expert(tmp_path) -> None:
    """A multi-role step (as Agent S2 and PC-Agent record them): the step card lists the manager's
    plan, the worker's thought, the grounding expert with its score and the reflection verdict."""
    from agentlab.envs.base import Observation
    from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory
    from agentlab.viz.trajectory import TrajectoryInspector, role_rows

    rec = TrajectoryRecorder(tmp_path / "ep", task="copy the total", env="DesktopEnv", agent="AgentS2")
    roles = [
        {"role": "manager", "text": "planned 2 subgoals", "plan": ["open the sheet", "type the total"], "replanned": True},
        {"role": "worker", "text": "the Total cell is B4"},
        {"role": "grounding", "text": "B4 <- 60", "expert": "structural", "score": 1.0},
        {"role": "reflection", "text": "the cell now shows 60", "verdict": "as intended"},
        "not a dict: ignored",
    ]
    rec.record(Observation(screenshot=None, elements=[]), None, thought="the Total cell is B4", info={"roles": roles})
    rec.finish("done")
    traj = load_trajectory(tmp_path / "ep")
    rows = role_rows(traj.steps[0])
    assert [r for r, _ in rows] == ["manager", "worker", "grounding", "reflection"]
    assert "1. open the sheet\n2. type the total" in rows[0][1] and "replanned: True" in rows[0][1]
    assert "expert: structural; score: 1.0" in rows[2][1] and "verdict: as intended" in rows[3][1]
    html_text = TrajectoryInspector(tmp_path).step_details_html()
    assert "verdict: as intended" in html_text and "expert: structural" in html_text and ">manager<" in html_text


def test_inspector_keeps_two_agents_episodes_of_the_same_task_apart(tmp_path) -> None:
    from agentlab.envs.base import Observation
    from agentlab.envs.trajectory import TrajectoryRecorder
    from agentlab.viz.trajectory import TrajectoryInspector

    for agent in ("AgentS2", "PCAgent"):
        rec = TrajectoryRecorder(tmp_path / agent / "episodes" / "pc-x", task="t", env="DesktopEnv", agent=agent)
        rec.record(Observation(screenshot=None, elements=[]), None, thought=agent)
        rec.finish("done")
    insp = TrajectoryInspector([tmp_path / "AgentS2" / "episodes", tmp_path / "PCAgent" / "episodes"])
    assert len(insp.episodes) == 2
    assert {insp.trajectory(k).steps[0].thought for k in insp.episodes} == {"AgentS2", "PCAgent"}


def test_inspector_shows_a_multi_agent_episode_step_by_step_with_the_hub(tmp_path) -> None:
    """A two-step gold plan (the real episode runner, scripted code agents): the inspector lists each
    step's trajectory in plan order, from the run's episodes folder or the episode folder itself, and
    step 2's first card shows the hub's message; plan_html lists the plan and each step's outcome."""
    from agentlab.run.episode import ExecOptions, run_task
    from agentlab.tasks.spec import ExecTask
    from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
    from agentlab.pool import AgentPool
    from agentlab.viz.trajectory import TrajectoryInspector, plan_html

    replies = ["```python\nopen('a.txt', 'w').write('42')\nprint('wrote 42')\n```\nDONE",
               "```python\nopen('b.txt', 'w').write(open('a.txt').read())\n```\nDONE"]

    class Scripted(LLMBackend):  # TEST DOUBLE: canned replies, in order
        model_id = "scripted"

        def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
            return [replies.pop(0)]

        def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
            raise AssertionError

    task = ExecTask.model_validate({
        "id": "multi-copy", "domain": "multi_apps", "instruction": "Write 42 to a.txt, then copy it to b.txt.",
        "evaluator": {"func": "exact_match", "result": {"type": "file_text", "path": "b.txt"}, "expected": {"type": "literal", "value": "42"}},
        "plan": [{"agent": "SheetAgent", "subtask": "write 42 to a.txt"}, {"agent": "CoderAgent", "subtask": "copy a.txt to b.txt"}]})
    row = run_task(task, pool=AgentPool.from_dir(None), llm=Scripted(), out_dir=tmp_path, options=ExecOptions(max_steps=2))
    assert row["success"]
    for source in (tmp_path / "episodes", tmp_path / row["trajectory"]):
        insp = TrajectoryInspector(source)
        assert list(insp.episodes) == ["multi-copy/step-1-SheetAgent", "multi-copy/step-2-CoderAgent"]
    insp.select("multi-copy/step-2-CoderAgent")
    card = insp.step_details_html()
    assert "hub" in card and "1. SheetAgent (done): wrote a.txt; output: wrote 42" in card
    table = plan_html(tmp_path / row["trajectory"])
    assert "copy a.txt to b.txt" in table and "wrote b.txt" in table


def test_role_costs_say_which_role_and_model_spent_what() -> None:
    from agentlab.viz.trajectory import role_cost_frame

    rows = [{"id": "t1", "agents": ["AgentS2"], "usage_by_role": {
                "worker": {"model_id": "vl", "llm_calls": 2, "tokens_in": 50, "tokens_out": 9, "images": 2, "image_bytes": 900},
                "manager": {"model_id": "txt", "llm_calls": 1, "tokens_in": 20, "tokens_out": 5}}},
            {"id": "t2", "agents": [], "usage_by_role": {}}]
    frame = role_cost_frame(rows)
    assert list(frame["role"]) == ["manager", "worker"] and list(frame["model_id"]) == ["txt", "vl"]
    assert list(frame["images"]) == [0, 2] and frame["llm_calls"].sum() == 3 and set(frame["id"]) == {"t1"}
    assert role_cost_frame([]).empty
