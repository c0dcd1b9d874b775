"""PC-Agent's parts without a screen: plans and the hub, decision/reflection/progress replies,
options, and how active perception aims actions at OCR text boxes."""

from __future__ import annotations

import pytest
from PIL import Image

from agentlab.agents.base import agent_class
from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.agents.pcagent.decision import parse_decision
from agentlab.agents.pcagent.manager import CommunicationHub, Subtask, parse_plan, plan_problems
from agentlab.agents.pcagent.perception import Perception, TextItem
from agentlab.agents.pcagent.progress import ProgressAgent, parse_progress
from agentlab.agents.pcagent.reflection import ReflectionAgent, parse_reflection, screen_diff
from agentlab.agents.asker import RoleAsker
from agentlab.envs.actions.desktop import DESKTOP, Click, Drag, SelectText, Type
from agentlab.envs.base import Element, Observation
from agentlab.envs.ocr import OcrBox, group_lines
from agentlab.errors import ActionParseError, ConfigError, InvalidActionError


def test_plan_lines_with_outputs_and_placeholders() -> None:
    plan = parse_plan("Plan:\n1. Find the name in the notes [outputs: name, date]\n"
                      "2) **Type {name} into the form** (outputs: greeting)\nSubtask 3: Press Greet")
    assert plan == [Subtask("Find the name in the notes", ("name", "date")),
                    Subtask("Type {name} into the form", ("greeting",)), Subtask("Press Greet")]
    assert plan[1].inputs == ("name",) and plan[1].line() == "Type {name} into the form [outputs: greeting]"
    assert plan_problems(plan, 8) == []
    with pytest.raises(ActionParseError, match="no numbered subtasks"):
        parse_plan("I will open the app and then greet.")


def test_plan_problems_name_a_value_nothing_produces_and_a_plan_too_long() -> None:
    plan = [Subtask("Type {name} into the form"), Subtask("Find the name", ("name",))]
    assert plan_problems(plan, 1) == ["2 subtasks; write at most 1",
                                      "subtask 1 uses {name} but no earlier subtask lists it in its [outputs: ...]"]


def test_hub_fills_known_values_and_reports_missing_ones() -> None:
    hub = CommunicationHub()
    sub = Subtask("Type {name} into the form on {day}")
    assert hub.fill(sub) == ("Type {name} into the form on {day}", {}, ["name", "day"])
    hub.update({"name": "Ada {x}"})
    assert hub.fill(sub) == ("Type Ada {x} into the form on {day}", {"name": "Ada {x}"}, ["day"])


def test_decision_replies_parse_to_an_action_or_the_end_of_the_subtask() -> None:
    d = parse_decision("Thought: press it\nAction: click(3)", DESKTOP)
    assert (d.thought, d.action, d.finished) == ("press it", Click(element=3), False)
    d = parse_decision('Thought: found it\nAction: subtask_done(name="Ada", total=42)', DESKTOP)
    assert d.finished and d.outputs == {"name": "Ada", "total": "42"} and d.action is None
    assert parse_decision("Action: stop()", DESKTOP).finished
    assert parse_decision("Thought: the form.\nI will type('Ada', 2) now.", DESKTOP).action == Type("Ada", 2)
    with pytest.raises(ActionParseError, match="quoted value"):
        parse_decision("Action: subtask_done(name=Ada)", DESKTOP)
    with pytest.raises(ActionParseError, match="empty reply"):
        parse_decision("  ", DESKTOP)


def test_reflection_and_progress_replies() -> None:
    r = parse_reflection("Verdict: **No effect**\nReason: the button did not respond.")
    assert (r.verdict, r.text, r.feedback()) == ("no effect", "the button did not respond.",
                                                 "no effect: the button did not respond.")
    assert parse_reflection("It was an unexpected_change, a menu opened").verdict == "unexpected change"
    with pytest.raises(ActionParseError, match="no verdict"):
        parse_reflection("Verdict: fine")
    assert parse_progress("Progress: typed Ada; Greet is left.") == "typed Ada; Greet is left."
    with pytest.raises(ActionParseError):
        parse_progress("Progress:   ")


def test_options_are_checked_and_name_the_document(pc_doc, tmp_path) -> None:
    cls = agent_class("pcagent")
    assert cls.env_kind == "desktop"
    agent = cls(pc_doc, {"seed": 3, "reflection": False, "manager": False, "ocr": False})
    assert (agent.config.seed, agent.config.reflection, agent.config.manager, agent.config.ocr) == (3, False, False, False)
    with pytest.raises(ConfigError, match=r"PCTestAgent.md: runner_options.reflecton: unknown key.*known: .*reflection"):
        cls(pc_doc, {"reflecton": False})
    with pytest.raises(ConfigError, match="runner_options.max_subtasks"):
        cls(pc_doc, {"max_subtasks": 0})


def _words(*specs: tuple[str, int, int]) -> list[OcrBox]:
    words = [OcrBox(t, (x, y, 10 * len(t), 12), 90.0) for t, x, y in specs]
    return words + group_lines(words)


def _perception() -> Perception:
    shot = Image.new("RGB", (400, 300), "white")
    button = Element(id=1, bbox=(10, 10, 90, 40), role="push button", text="Save", resource_id=None, clickable=True)
    obs = Observation(screenshot=shot, elements=[button])
    ocr = _words(("Total:", 20, 100), ("42", 90, 100), ("Quarterly", 20, 200), ("report", 120, 200))
    lines = [b for b in ocr if b.level == "line"]
    return Perception(obs, 50, ocr=ocr, items=[TextItem(2 + i, b) for i, b in enumerate(lines)])


def test_ocr_items_are_listed_after_the_elements_and_actions_on_them_become_points() -> None:
    p = _perception()
    listing = p.listing()
    assert '[1] push button "Save"' in listing
    assert '[2] text "Total: 42" at (20, 100, 90, 12)' in listing and '[3] text "Quarterly report"' in listing
    assert p.resolve(Click(element=1)) == (Click(element=1), None)  # an element stays an element
    action, target = p.resolve(Click(element=2))
    assert action == Click(x=65, y=106) and target == {"ocr": "Total: 42", "bbox": [20, 100, 90, 12]}
    action, _ = p.resolve(Drag(source=1, target=3))
    assert action == Drag(source=1, end=(100, 206))
    with pytest.raises(InvalidActionError, match="is text on screen, not a field"):
        p.resolve(Type("x", 2))
    assert p.marked_screenshot() is not None


def test_select_text_is_a_drag_over_the_ocr_words_that_spell_it() -> None:
    p = _perception()
    action, target = p.resolve(SelectText("quarterly REPORT"))
    assert isinstance(action, SelectText) and (action.start, action.end) == ((21, 206), (179, 206))
    assert target is not None and target["ocr"] == "Quarterly report" and target["score"] == 1.0
    # text OCR does not see is left to the env (which selects through the accessibility tree)
    assert p.resolve(SelectText("nowhere to be seen")) == (SelectText("nowhere to be seen"), None)


def test_an_unchanged_screen_is_no_effect_without_asking_the_model() -> None:
    class NoModel:
        capabilities = None

        def chat(self, *a, **k):  # type: ignore[no-untyped-def]
            raise AssertionError("the reflection agent must not ask about an unchanged screen")

    shot = Image.new("RGB", (50, 50), "white")
    before = Perception(Observation(screenshot=shot, elements=[]), 10)
    after = Perception(Observation(screenshot=shot.copy(), elements=[]), 10)
    agent = ReflectionAgent(RoleAsker(NoModel(), PCAgentConfig(), system="pcagent/system", correction="pcagent/correction"))  # type: ignore[arg-type]
    r = agent.reflect(subtask="s", action="click (5, 5)", thought="", before=before, after=after)
    assert (r.verdict, r.asked) == ("no effect", False)


def test_the_reflection_prompt_shows_what_changed_not_two_whole_screens() -> None:
    shot = Image.new("RGB", (400, 300), "white")
    button = Element(id=1, bbox=(10, 10, 90, 40), role="push button", text="Save", resource_id=None, clickable=True)

    def screen(*words: tuple[str, int, int]) -> Perception:
        ocr = _words(*words)
        lines = [b for b in ocr if b.level == "line"]
        return Perception(Observation(screenshot=shot, elements=[button]), 50, ocr=ocr,
                          items=[TextItem(2 + i, b) for i, b in enumerate(lines)])

    before = screen(("Count:", 20, 100), ("0", 90, 100), ("Title", 20, 200))
    after = screen(("Title", 20, 200), ("Count:", 20, 100), ("1", 90, 100))  # numbers shift; only the count changed
    assert screen_diff(before, after) == ('text "Count: 0" at (20, 100, 80, 12)', 'text "Count: 1" at (20, 100, 80, 12)')
    assert screen_diff(before, before) == ("(nothing)", "(nothing)")


def test_no_usable_verdict_or_progress_keeps_the_loop_going(role_scripted) -> None:
    llm = role_scripted(reflection=["Looks fine to me.", "ok", "yes"], progress=["", "  ", "Progress:"])
    asker = RoleAsker(llm, PCAgentConfig(max_retries=2), system="pcagent/system", correction="pcagent/correction")
    before = Perception(Observation(screenshot=Image.new("RGB", (50, 50), "white"), elements=[]), 10)
    after = Perception(Observation(screenshot=Image.new("RGB", (50, 50), "black"), elements=[]), 10)
    r = ReflectionAgent(asker).reflect(subtask="s", action="click (5, 5)", thought="", before=before, after=after)
    assert (r.verdict, r.asked) == (None, True) and r.text.startswith("no usable verdict: no verdict")
    assert r.feedback().startswith("unknown (no usable verdict")
    progress, from_model = ProgressAgent(asker).update(subtask="s", previous="nothing done yet",
                                                       action="click (5, 5)", reflection=r.feedback())
    assert not from_model and progress.startswith("nothing done yet; then click (5, 5) (unknown (")
    assert asker.calls == 6 and [p.temperature for p in llm.params] == [0.0, 0.7, 0.7] * 2  # greedy, then sampled
    assert "could not be used" in llm.asked("reflection")[1]  # the problem is fed back
