"""Agent S2 on a real GTK app under Xvfb, driven by scripted model replies: proactive replanning,
the textual expert reading and clicking words, the visual expert by text similarity and by a
vision model's point (the screenshot reaches an images-capable backend), and an ablated expert."""

from __future__ import annotations

import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.agents.base import Solo
from agentlab.agents.s2.actions import ClickText, SelectSpan
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import MODEL_ROLES
from agentlab.agents.s2.config import S2Config
from agentlab.agents.s2.grounding import Mixture
from agentlab.agents.s2.runner import AgentS2
from agentlab.agents.s2.screen import Screen
from agentlab.envs.actions.desktop import Type
from agentlab.envs.desktop import DesktopEnv
from agentlab.envs.ocr import ocr_problem
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(300)]


def _by_text(obs, text):  # type: ignore[no-untyped-def]
    return next(e for e in obs.elements if e.text.startswith(text))


def _roles(traj, role):  # type: ignore[no-untyped-def]
    return [r for s in traj.steps for r in s.info.get("roles", []) if r["role"] == role]


def _needs_ocr() -> None:
    if (problem := ocr_problem()) is not None:
        missing_system(f"no OCR here: {problem}")


def test_the_manager_replans_after_each_completed_subgoal(xdisplay, demo_app, needs_a11y, s2, tmp_path) -> None:
    llm = s2.Backend([
        s2.plan("Press Add one", "Press Add one again"),
        s2.act('click("the Add one button")', "the counter is at 0"),
        s2.act("done()"),
        s2.plan("Press Add one again"),  # the proactive replan after the first subgoal
        s2.act('click("Add one push button")'),
        s2.act("done()"),
        "DONE",
    ])
    runner = Solo(AgentS2(s2.doc(), {"ocr": False}), llm)
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one twice.")
    res = runner.run(DesktopEnv(display=xdisplay, app="demo_gtk"), "Press Add one twice.", rec, 10)
    assert res.status == "done", res.error
    assert (res.steps, res.llm_calls, res.subtasks, res.subtasks_done) == (2, 7, 2, 2)
    assert res.tokens_in > 0 and res.tokens_out > 0  # read from the backend's counters
    assert demo_app.wait_for("count", 2)["count"] == 2
    assert llm.roles() == ["manager", "worker", "worker", "manager", "worker", "worker", "manager"]
    replan_prompt = llm.prompts[3][-1].content
    assert "- Press Add one\n" in replan_prompt and "1. Press Add one again" in replan_prompt  # done, and ahead
    traj = load_trajectory(tmp_path / "ep")
    plans = _roles(traj, "manager")
    assert [(p["plan"], p["replanned"]) for p in plans] == [
        (["Press Add one", "Press Add one again"], False), (["Press Add one again"], True), ([], True)]
    assert traj.steps[0].info["roles"][0]["role"] == "manager"  # the plan opens the step it was made on
    grounding = _roles(traj, "grounding")
    assert [g["expert"] for g in grounding] == ["visual", "visual"]
    assert all('push button "Add one"' in g["target"] and g["score"] >= 0.5 for g in grounding)
    first = traj.steps[0]
    assert first.thought == "the counter is at 0" and first.action == {"type": "click", "element": first.action["element"],
                                                                          "x": None, "y": None}
    assert "now: Press Add one" in first.reflection
    assert [r["role"] for r in first.info["roles"]] == ["manager", "worker", "grounding"]
    assert traj.meta.status == "done" and "s2/manager" in traj.meta.extra["prompts"]


def test_without_proactive_planning_the_manager_replans_only_after_a_failure(xdisplay, demo_app, needs_a11y, s2,
                                                                            tmp_path) -> None:
    llm = s2.Backend([
        s2.plan("Press Add one", "Open the File menu", "Press Add one again"),
        s2.act('click("the Add one button")'),
        s2.act("done()"),  # no manager call here: the first plan is followed
        s2.act('fail("there is no File menu in this window")'),
        s2.plan("Press Add one again"),  # after the failure the manager is asked, with the reason
        s2.act('click("the Add one button")'),
        s2.act("done()"),
    ])
    runner = Solo(AgentS2(s2.doc(), {"ocr": False, "replan": False}), llm)
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one twice.")
    res = runner.run(DesktopEnv(display=xdisplay, app="demo_gtk"), "Press Add one twice.", rec, 10)
    assert res.status == "done", res.error
    assert llm.roles() == ["manager", "worker", "worker", "worker", "manager", "worker", "worker"]
    assert "The last subgoal failed: Open the File menu: there is no File menu" in llm.prompts[4][-1].content
    assert (res.subtasks, res.subtasks_done) == (3, 2)
    assert demo_app.wait_for("count", 2)["count"] == 2
    plans = _roles(load_trajectory(tmp_path / "ep"), "manager")
    assert [p["replanned"] for p in plans] == [False, True]


def test_the_textual_expert_finds_words_on_the_screen_and_clicks_them(xdisplay, demo_app, needs_a11y, s2) -> None:
    _needs_ocr()
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    obs = env.reset()
    cfg = S2Config()
    mixture = Mixture(cfg, env, RoleAsker(s2.Backend([]), cfg, system="s2/system", correction="s2/feedback", model_roles=MODEL_ROLES))
    screen = Screen(obs)
    dark = mixture.ground(ClickText("Dark mode"), screen)
    x, y = dark.actions[0].x, dark.actions[0].y
    box = _by_text(obs, "Dark mode").bbox
    assert dark.expert == "textual" and dark.score == 1.0 and dark.target == "Dark mode"
    assert box[0] <= x <= box[2] and box[1] <= y <= box[3]  # OCR's words sit inside the check box's element
    add = mixture.ground(ClickText("Add one"), screen)
    mixture.carry_out(add)
    assert demo_app.wait_for("count", 1)["count"] == 1  # the click on the words landed on the button


def test_the_textual_expert_drag_selects_a_span(xdisplay, demo_app, needs_a11y, s2) -> None:
    _needs_ocr()
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    obs = env.reset()
    env.step(Type("Ana Lopez", element=_by_text(obs, "Name").id))
    assert demo_app.wait_for("name", "Ana Lopez")["name"] == "Ana Lopez"
    cfg = S2Config()
    mixture = Mixture(cfg, env, RoleAsker(s2.Backend([]), cfg, system="s2/system", correction="s2/feedback", model_roles=MODEL_ROLES))
    span = mixture.ground(SelectSpan("Lopez"), Screen(env.observe()))
    # (OCR may read the entry's text cursor into the word: "Lopez|")
    assert span.expert == "textual" and span.target.startswith("Lopez") and span.actions[0].start is not None
    mixture.carry_out(span)  # a drag over the word
    env.step(Type("Li"))  # typing replaces the selection
    assert demo_app.wait_for("name", "Ana Li")["name"] == "Ana Li"


def test_an_images_backend_gets_the_screenshot_and_places_the_point(xdisplay, demo_app, needs_a11y, s2,
                                                                    tmp_path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    add = _by_text(env.observe(), "Add one")
    llm = s2.Backend([s2.plan("Press Add one"), s2.act('click("the Add one button")'),
                      f"({add.center[0]}, {add.center[1]})",  # the vision model's point
                      s2.act("done()"), "DONE"], images=True)
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.")
    res = Solo(AgentS2(s2.doc(), {}), llm).run(env, "Press Add one.", rec, 5)
    assert res.status == "done", res.error
    assert demo_app.wait_for("count", 1)["count"] == 1
    assert llm.roles() == ["manager", "worker", "grounding expert", "worker", "manager"]
    for messages in llm.prompts:
        shots = messages[-1].images
        assert len(shots) == 1 and shots[0].size == (1280, 800)  # the screenshot, as a PIL image
    worker_prompt = llm.prompts[1][-1].content
    assert "(the screenshot is attached)" in worker_prompt and 'push button "Add one"' not in worker_prompt
    g = _roles(load_trajectory(tmp_path / "ep"), "grounding")[0]
    assert g["method"] == "model point" and g["point"] == list(add.center) and g["score"] == 1.0


def test_an_ablated_expert_is_not_offered_and_is_fed_back_as_unusable(xdisplay, demo_app, needs_a11y, s2,
                                                                      tmp_path) -> None:
    llm = s2.Backend([s2.plan("Press Add one"), s2.act('click_text("Add one")'),
                      s2.act('click("the Add one button")'), s2.act("done()"), "DONE"])
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.")
    runner = Solo(AgentS2(s2.doc(), {"ocr": False, "experts": ["visual", "structural"]}), llm)
    res = runner.run(DesktopEnv(display=xdisplay, app="demo_gtk"), "Press Add one.", rec, 5)
    assert res.status == "done", res.error
    first, retry = llm.prompts[1][-1].content, llm.prompts[2][-1].content
    assert "click_text(" not in first and "select_span(" not in first and "set_cells(" in first
    assert "needs the textual grounding expert, which this run leaves out" in retry
    assert demo_app.wait_for("count", 1)["count"] == 1
    traj = load_trajectory(tmp_path / "ep")
    refused = [s for s in traj.steps if s.error]
    assert len(refused) == 1 and refused[0].info["attempt"] == 1 and "textual grounding expert" in refused[0].error


def test_unusable_replies_fail_the_subgoal_and_the_manager_replans(xdisplay, demo_app, needs_a11y, s2,
                                                                    tmp_path) -> None:
    llm = s2.Backend([s2.plan("Press Add one"), "I am not sure.", 'click("the Frobnicate button")',
                      s2.plan("Press Add one"), s2.act('click("Add one")'), s2.act("done()"), "DONE"])
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.")
    res = Solo(AgentS2(s2.doc(), {"ocr": False, "max_retries": 1}), llm).run(
        DesktopEnv(display=xdisplay, app="demo_gtk"), "Press Add one.", rec, 5)
    assert res.status == "done", res.error
    assert llm.roles() == ["manager", "worker", "worker", "manager", "worker", "worker", "manager"]
    replan = llm.prompts[3][-1].content
    assert "The last subgoal failed: Press Add one: 2 unusable replies; last: no element on this screen looks " \
           "like 'the Frobnicate button'" in replan
    assert (res.subtasks, res.subtasks_done, res.steps) == (2, 1, 1)  # the same subgoal, attempted twice
    assert demo_app.wait_for("count", 1)["count"] == 1
    errors = [s.error for s in load_trajectory(tmp_path / "ep").steps if s.error]
    assert len(errors) == 2 and "no action found" in errors[0]


def test_the_episode_stops_after_max_subgoals(xdisplay, demo_app, needs_a11y, s2, tmp_path) -> None:
    llm = s2.Backend([s2.plan("Look at the window"), s2.act('fail("nothing to see")'),
                      s2.plan("Look at the window"), s2.act('fail("still nothing")')])
    rec = TrajectoryRecorder(tmp_path / "ep", task="Admire the window.")
    res = Solo(AgentS2(s2.doc(), {"ocr": False, "max_subgoals": 1}), llm).run(
        DesktopEnv(display=xdisplay, app="demo_gtk"), "Admire the window.", rec, 5)
    assert res.status == "failed" and "1 subgoals attempted (max_subgoals)" in (res.error or "")
    assert (res.subtasks, res.subtasks_done, res.llm_calls) == (2, 0, 3)
    assert load_trajectory(tmp_path / "ep").meta.status == "failed"


def test_typing_into_an_element_placed_by_a_vision_model_clicks_it_first(xdisplay, demo_app, needs_a11y, s2,
                                                                         tmp_path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    name = _by_text(env.observe(), "Name")
    llm = s2.Backend([s2.plan("Enter the name Ana"), s2.act('type("Ana", into="the Name field")'),
                      f"{name.center[0]}, {name.center[1]}", s2.act("done()"), "DONE"], images=True)
    rec = TrajectoryRecorder(tmp_path / "ep", task="Enter the name Ana.")
    res = Solo(AgentS2(s2.doc(), {}), llm).run(env, "Enter the name Ana.", rec, 5)
    assert res.status == "done", res.error
    assert demo_app.wait_for("name", "Ana")["name"] == "Ana"
    step = load_trajectory(tmp_path / "ep").steps[0]
    assert step.action["type"] == "type" and [a["type"] for a in step.info["actions"]] == ["click", "type"]


def test_a_typed_worker_picks_a_mark_under_the_screens_grammar(xdisplay, demo_app, needs_a11y, s2,
                                                              tmp_path) -> None:
    """``actions: typed``: the worker's reply is one typed GUI call over the numbered marks (the
    desktop specialists' space); a local model is held to the screen's grammar, a mark that is not
    on screen is fed back, the call is carried out with no grounding expert, and ``done()`` ends
    the subgoal."""
    import re

    from agentlab.llm.base import Capabilities
    from agentlab.toolkits.grammar import CallGrammar

    class Grammared(s2.Backend):  # type: ignore[misc,name-defined]
        """TEST DOUBLE: the scripted backend, declaring that it decodes under a grammar."""

        @property
        def capabilities(self) -> Capabilities:
            return Capabilities(plan_grammar=True)

    def click_add_one(messages):  # type: ignore[no-untyped-def]
        # what a model reading the listing would pick: the number of the "Add one" button
        m = re.search(r'\[(\d+)\] push button "Add one"', messages[-1].content)
        return f"click({m.group(1)})"

    llm = Grammared([s2.plan("Press Add one"), "click(999)", click_add_one, "done()", "DONE"])
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.")
    res = Solo(AgentS2(s2.doc(), {"ocr": False, "actions": "typed"}), llm).run(
        DesktopEnv(display=xdisplay, app="demo_gtk"), "Press Add one.", rec, 5)
    assert (res.status, res.steps) == ("done", 1), res.error
    assert demo_app.wait_for("count", 1)["count"] == 1
    workers = [(m, p) for m, p in zip(llm.prompts, llm.params) if "You are the worker" in m[0].content]
    assert isinstance(workers[0][1].grammar, CallGrammar) and {"click", "done"} <= set(workers[0][1].grammar.tools)
    assert "element must be one of the numbers on screen" in workers[1][0][-1].content  # click(999) fed back
    assert "Reply with the one action call" in workers[0][0][-1].content
    traj = load_trajectory(tmp_path / "ep")
    acted = [s for s in traj.steps if s.action and s.action.get("type") == "click"]
    assert [r["action"] for r in _roles(traj, "worker") if "action" in r] == [
        f"click({acted[0].action['element']})", "done()"]
    assert [r["problem"][:40] for r in _roles(traj, "worker") if "problem" in r] == [
        "click: element must be one of the number"]
    assert _roles(traj, "grounding") == []  # the mark is the grounding: no expert was asked
    assert "s2/worker_typed" in traj.meta.extra["prompts"]
