"""PC-Agent's loop when replies go wrong, and what reaches a backend that takes images, on the
GTK demo app under Xvfb with SCRIPTED role replies."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.agents.base import Solo
from agentlab.agents.pcagent.runner import PCAgent
from agentlab.envs.desktop import DesktopEnv
from agentlab.llm.base import Capabilities
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(240)]


def test_no_usable_plan_falls_back_to_one_subtask_and_unusable_decisions_fail_the_episode(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path: Path) -> None:
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    llm = role_scripted(manager=["I will press the button.", "Sure!", "{}"],
                        decision=["Thought: hmm", "Action: click(99)", "Action: subtask_done(name=Ada)"])
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.", env="desktop", agent=pc_doc.name)
    res = Solo(PCAgent(pc_doc, {"ocr": False}), llm).run(env, "Press Add one.", rec, 5)
    assert (res.status, res.steps, res.subtasks, res.subtasks_done, res.llm_calls) == ("failed", 0, 1, 0, 6)
    assert res.error is not None and "3 unusable replies in a row" in res.error and "quoted value" in res.error
    assert "no numbered subtasks" in llm.asked("manager")[1]  # the problem was fed back
    assert "no element 99" in llm.asked("decision")[2]  # the env refused it; nothing was clicked
    assert demo_app.state()["count"] == 0
    traj = load_trajectory(tmp_path / "ep")
    first = traj.steps[0].info["roles"]
    assert [r["role"] for r in first] == ["manager", "decision"]
    assert first[0]["plan"] == ["Press Add one."] and "carrying the instruction out as one subtask" in first[0]["text"]
    assert first[1]["text"].startswith("unusable reply: ")
    assert [s.error is not None for s in traj.steps] == [True, True, True, True] and traj.steps[-1].done


def test_screenshots_go_only_to_a_backend_that_takes_images(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path: Path) -> None:
    class Seeing(role_scripted):  # type: ignore[misc,valid-type]
        """TEST DOUBLE: the same scripted roles, declaring that it accepts images."""

        @property
        def capabilities(self) -> Capabilities:
            return Capabilities(images=True)

    def script() -> dict[str, list[str]]:
        return {"decision": ["Action: click(1)", "Action: subtask_done()"],
                "reflection": ["Verdict: as intended\nReason: the count went up."],
                "progress": ["Progress: pressed Add one."]}

    for cls, expect in ((role_scripted, {"decision": 0, "reflection": 0, "progress": 0}),
                        (Seeing, {"decision": 1, "reflection": 2, "progress": 0})):
        llm = cls(**script())
        env = DesktopEnv(display=xdisplay, app="demo_gtk")
        rec = TrajectoryRecorder(tmp_path / cls.__name__, task="Press Add one.", env="desktop", agent=pc_doc.name)
        res = Solo(PCAgent(pc_doc, {"manager": False, "ocr": False}), llm).run(env, "Press Add one.", rec, 3)
        assert res.status == "done", res.error
        seen = {role: len(msgs[-1].images) for role, msgs in llm.calls}
        assert seen == expect
        if cls is Seeing:
            shot = next(msgs[-1].images[0] for role, msgs in llm.calls if role == "decision")
            assert shot.size == (1280, 800)  # the set-of-marks screenshot of the whole screen


def test_typed_decisions_are_one_call_over_the_screens_marks_under_its_grammar(
        xdisplay, needs_a11y, demo_app, pc_doc, role_scripted, tmp_path: Path) -> None:
    """``actions: typed``: the decision agent's reply is one typed GUI call (the desktop
    specialists' space), a local model is held to the screen's grammar, a refused call is fed
    back, and ``done()`` ends the subtask."""
    from agentlab.toolkits.grammar import CallGrammar

    class Grammared(role_scripted):  # type: ignore[misc,valid-type]
        """TEST DOUBLE: the same scripted roles, declaring that it decodes under a grammar."""

        @property
        def capabilities(self) -> Capabilities:
            return Capabilities(plan_grammar=True)

    llm = Grammared(decision=["click(99)", "click(1)", "done()"],
                    reflection=["Verdict: as intended\nReason: the count went up."],
                    progress=["Progress: pressed Add one."])
    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    rec = TrajectoryRecorder(tmp_path / "ep", task="Press Add one.", env="desktop", agent=pc_doc.name)
    res = Solo(PCAgent(pc_doc, {"manager": False, "ocr": False, "actions": "typed"}), llm).run(env, "Press Add one.", rec, 3)
    assert (res.status, res.steps) == ("done", 1), res.error
    assert demo_app.state()["count"] == 1
    decisions = [p for (role, _), p in zip(llm.calls, llm.params) if role == "decision"]
    grammar = decisions[0].grammar
    assert isinstance(grammar, CallGrammar) and "click" in grammar.tools and "done" in grammar.tools
    assert "element must be one of the numbers on screen" in llm.asked("decision")[1]  # click(99) fed back
    assert "Reply with the one action call" in llm.asked("decision")[0]
    traj = load_trajectory(tmp_path / "ep")
    acted = [s for s in traj.steps if s.action and s.action.get("type") == "click"]
    assert len(acted) == 1
