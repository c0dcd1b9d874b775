"""Agent S2's parts without a screen: the semantic action parser, the manager's plan parser,
the visual expert's text similarity, the options, and the structural expert's openpyxl path."""

from __future__ import annotations

import openpyxl
import pytest

from agentlab.agents.base import AGENTS, agent_class
from agentlab.agents.s2.actions import (ACTIONS, ClickSemantic, Done, Fail, SelectSpan, SetCells, TypeSemantic,
                                        actions_doc, parse_semantic)
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import MODEL_ROLES
from agentlab.agents.s2.cells import write_cells
from agentlab.agents.s2.config import S2Config
from agentlab.agents.s2.grounding import Mixture, best_element, parse_point
from agentlab.agents.s2.manager import parse_plan
from agentlab.agents.s2.screen import Screen
from agentlab.agents.s2.worker import parse_worker_reply
from agentlab.envs.base import Element, Observation
from agentlab.errors import ActionParseError, ConfigError, InvalidActionError


def _el(n: int, role: str, text: str) -> Element:
    return Element(id=n, bbox=(10 * n, 10, 10 * n + 8, 18), role=role, text=text, resource_id=None, clickable=True)


DEMO = [_el(1, "label", "Count: 0"), _el(2, "push button", "Add one"), _el(3, "text", "Name"),
        _el(4, "push button", "Greet"), _el(5, "check box", "Dark mode"), _el(6, "push button", "Reset")]


def test_every_prompt_example_parses_back_to_its_action() -> None:
    for cls in ACTIONS:
        action = parse_semantic(cls.example())
        assert type(action) is cls
        assert parse_semantic(action.to_call()) == action  # the printed form is a call again


def test_the_parser_tolerates_prose_fences_and_aliases() -> None:
    assert parse_semantic('I will now `Click("the Greet button")` to greet.') == ClickSemantic("the Greet button")
    assert parse_semantic('highlight_text_span("Ana", "Lopez")') == SelectSpan("Ana", "Lopez")
    assert parse_semantic("set_cell_values({'a4': 'Total', 'B4': 60}, sheet='Budget')") == \
        SetCells((("A4", "Total"), ("B4", 60)), "Budget")
    assert parse_semantic('type("x", "the Name field")') == TypeSemantic("x", "the Name field")
    assert parse_semantic("DONE") == Done()
    assert parse_semantic('fail("the button is greyed out")') == Fail("the button is greyed out")
    with pytest.raises(ActionParseError, match="tap is not an action here"):
        parse_semantic("tap(3)")
    with pytest.raises(ActionParseError, match="not a cell name"):
        parse_semantic('set_cells({"total": 3})')
    with pytest.raises(ActionParseError, match="non-empty quoted string"):
        parse_semantic("click(3)")  # element numbers are not semantic
    reply = parse_worker_reply('Thought: the button is there\nAction: click("Add one")')
    assert (reply.thought, reply.action) == ("the button is there", ClickSemantic("Add one"))


def test_an_ablated_expert_leaves_the_prompt_and_its_actions_are_refused() -> None:
    full = actions_doc(("visual", "textual", "structural"))
    assert all(f"- {cls.name}(" in full for cls in ACTIONS)
    no_text = actions_doc(("visual", "structural"))
    assert "select_span(" not in no_text and "click_text(" not in no_text and "set_cells(" in no_text
    no_visual = actions_doc(("textual", "structural"))
    assert "- click(" not in no_visual and "into" not in no_visual and "click_text(" in no_visual
    cfg = S2Config(experts=["visual", "structural"])
    mixture = Mixture(cfg, env=None, asker=RoleAsker(None, cfg, system="s2/system", correction="s2/feedback"))  # type: ignore[arg-type]  # nothing is asked or done
    screen = Screen(Observation(None, DEMO))
    with pytest.raises(InvalidActionError, match="needs the textual grounding expert, which this run leaves out"):
        mixture.ground(SelectSpan("Lopez"), screen)


def test_plans_are_numbered_lists_and_done_means_nothing_is_left() -> None:
    p = parse_plan("Plan:\n1. Click Add one\n2) Type the name\n- Save the file\n", 8)
    assert p.subgoals == ("Click Add one", "Type the name", "Save the file")
    assert parse_plan("1. a\n2. b\n3. c", 2).subgoals == ("a", "b")
    assert parse_plan("DONE", 8).subgoals == () and parse_plan("Plan: done.", 8).subgoals == ()
    with pytest.raises(ActionParseError, match="no numbered subgoals"):
        parse_plan("I think we should click things", 8)


def test_text_similarity_picks_the_described_element_and_scores_it() -> None:
    for description, want in [("the Add one button", 2), ("Greet push button", 4), ("dark mode checkbox", 5),
                              ("the Name text field", 3), ("Reset", 6)]:
        el, score = best_element(description, DEMO)
        assert el is not None and el.id == want, (description, el)
        assert 0.3 <= score <= 1.0
    el, score = best_element("the Save button", [_el(1, "push button", "Open"), _el(2, "label", "Quit")])
    assert score < 0.3
    cfg = S2Config()
    mixture = Mixture(cfg, env=None, asker=RoleAsker(_TextOnly(), cfg, system="s2/system", correction="s2/feedback", model_roles=MODEL_ROLES))  # type: ignore[arg-type]
    g = mixture.ground(ClickSemantic("the Greet button"), Screen(Observation(None, DEMO)))
    assert (g.expert, g.detail["element"], g.actions[0].to_call()) == ("visual", 4, "click(4)")
    role = g.role()
    assert role["role"] == "grounding" and role["expert"] == "visual" and role["score"] > 0.5
    assert role["target"] == '[4] push button "Greet"'
    with pytest.raises(InvalidActionError, match="no element on this screen looks like 'the Save button'"):
        mixture.ground(ClickSemantic("the Save button"), Screen(Observation(None, DEMO[:2])))


class _TextOnly:
    """Stands in for a text-only backend where only ``capabilities`` is read (nothing is asked)."""

    from agentlab.llm.base import Capabilities

    capabilities = Capabilities()


def test_points_from_a_vision_model_must_be_on_the_screen() -> None:
    assert parse_point("(120, 45)", (1280, 800)) == (120, 45)
    assert parse_point("x=12 y=700", (1280, 800)) == (12, 700)
    with pytest.raises(ActionParseError, match="off the 1280x800 screen"):
        parse_point("(1300, 5)", (1280, 800))


def test_options_are_checked(s2) -> None:
    assert AGENTS["s2"] == "agentlab.agents.s2.runner:AgentS2"
    cls = agent_class("s2")
    assert cls.env_kind == "desktop"
    runner = cls(s2.doc(), {"replan": False, "experts": ["visual", "textual"], "seed": 3})
    assert runner.config.replan is False and runner.config.experts == ["visual", "textual"]
    with pytest.raises(ConfigError, match="runner_options.experts"):
        cls(s2.doc(), {"experts": ["visual", "smell"]})
    with pytest.raises(ConfigError, match="runner_options.replann"):
        cls(s2.doc(), {"replann": False})


def test_the_structural_expert_writes_a_closed_file_with_openpyxl(tmp_path) -> None:
    path = tmp_path / "budget.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "Budget"
    wb.active.append(["item", "cost"])
    wb.save(path)
    done = write_cells((("A4", "Total"), ("B4", 60)), uno_url=None, file="budget.xlsx", files_dir=tmp_path)
    assert (done.route, done.sheet) == ("openpyxl", "Budget")
    ws = openpyxl.load_workbook(path)["Budget"]
    assert (ws["A4"].value, ws["B4"].value, ws["A1"].value) == ("Total", 60, "item")
    with pytest.raises(InvalidActionError, match="no sheet 'Nope'"):
        write_cells((("A1", 1),), uno_url=None, file=str(path), sheet="Nope")
    with pytest.raises(InvalidActionError, match="name the file"):
        write_cells((("A1", 1),), uno_url=None)
