"""App skills (agentlab.agents.gui_skills): learned from demonstrations by finding where the
request's values go in the steps, instantiated with other values, offered beside the typed GUI
operations under the grammar, and carried out by replay. The replay on the real applications is
`agentlab skills check` (tests/agents/test_gui_skills_replay.py)."""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.agents.gui_actions import GuiChoices, GuiScreen, carry_out, parse_gui_reply
from agentlab.agents.gui_skills import (
    GuiSkill,
    ground_label,
    hour_of,
    late_labels,
    SkillDemo,
    learn_library,
    learn_skill,
    load_demos,
    load_skills,
    replay_phone,
    skills_dir,
    skills_listing,
)
from agentlab.envs.base import Element, Observation
from agentlab.errors import ActionParseError, ConfigError, InvalidActionError
from agentlab.tasks.gui_solution import GuiStep


def _demo(request: str, steps: list[dict], params: dict[str, str], span=None, skill: str = "set_cell") -> SkillDemo:  # type: ignore[no-untyped-def]
    return SkillDemo.model_validate({
        "skill": skill, "doc": "enter a value into a cell", "app": "calc", "params": params, "span": span,
        "task": {"id": "demo", "instruction": request, "domain": "calc", "env": "desktop", "apps": ["libreoffice-calc"],
                 "evaluator": {"func": "exact_match", "result": {"type": "literal", "value": 1},
                               "expected": {"type": "literal", "value": 1}},
                 "gui_solution": steps}})


NAME_BOX = {"role": "text", "pattern": "[A-Z]{1,3}[0-9]{1,7}"}
CALC_STEPS = [{"type": "C3\n", "into": NAME_BOX}, {"type": "42\n"}, {"key": "ctrl+s"}]


def test_a_demonstration_teaches_where_each_request_value_goes() -> None:
    skill = learn_skill(_demo("In stock.xlsx, put 42 into cell C3 and save it.", CALC_STEPS,
                              {"cell": "C3", "value": "42"}, span=(0, 2)))
    assert skill.signature() == "set_cell(cell, value)"
    assert [s.model_dump(exclude_none=True, exclude={"timeout_s"}) for s in skill.steps] == [
        {"type": "{{cell}}\n", "into": {**NAME_BOX, "nth": 0}}, {"type": "{{value}}\n"}]
    # the same skill with other values: what a specialist's call does on another request
    other = skill.steps_for({"cell": "B7", "value": "=SUM(B2:B6)"})
    assert [s.type for s in other] == ["B7\n", "=SUM(B2:B6)\n"] and other[0].into == skill.steps[0].into


def test_values_are_replaced_as_whole_tokens_and_labels_become_parameters_too() -> None:
    steps = [{"type": "HX-4471", "into": {"role": "entry", "name": "Part number"}},
             {"type": "2", "into": {"role": "entry", "name": "Quantity"}}]
    skill = learn_skill(_demo("Order 2 of part HX-4471 (Part number field).", steps,
                              {"qty": "2", "part": "HX-4471", "field": "Part number"}, skill="order_part"))
    assert skill.steps[0].type == "{{part}}" and skill.steps[0].into is not None
    assert skill.steps[0].into.name == "{{field}}" and skill.steps[1].type == "{{qty}}"  # "2" not inside HX-4471
    filled = skill.steps_for({"qty": "5", "part": "AB-1", "field": "part number (x)"})
    assert filled[0].type == "AB-1" and filled[0].into is not None
    # a label given by a slot matches in any case, as written; the first step waits briefly
    assert filled[0].into.matches("entry", "Part Number (X)") and not filled[0].into.matches("entry", "Part number")
    assert filled[0].timeout_s == 3.0 and filled[1].timeout_s == 30.0
    assert filled[1].into is not None and filled[1].into.name == "Quantity"  # a constant label stays exact


def test_a_value_in_a_pattern_is_filled_as_literal_text() -> None:
    steps = [{"click": {"role": "link", "pattern": "Download v1\\.2.*"}}]
    skill = learn_skill(_demo("Download v1.2 of the tool.", steps, {"version": "v1.2"}, skill="get_version"))
    assert skill.steps[0].click is not None and skill.steps[0].click.pattern == "Download {{version}}.*"
    filled = skill.steps_for({"version": "v2.0+beta"})[0].click
    assert filled is not None and filled.matches("link", "Download v2.0+beta (4 MB)")
    assert not filled.matches("link", "Download v2x0+beta")


@pytest.mark.parametrize("params,span,problem", [
    ({"cell": "D9"}, (0, 2), "is not in the request"),
    ({"file": "stock.xlsx"}, (0, 2), "is in no step"),
    ({"cell": "C3"}, (1, 9), "is not within the 3 steps"),
])
def test_a_demonstration_that_teaches_nothing_is_one_line(params, span, problem) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=problem):
        learn_skill(_demo("In stock.xlsx, put 42 into cell C3 and save it.", CALC_STEPS, params, span=span))


def test_a_skill_may_not_shadow_a_gui_operation_and_is_called_with_its_own_arguments() -> None:
    with pytest.raises(ValueError, match="not one of"):
        _demo("Put 42 in C3", CALC_STEPS, {}, skill="click")
    skill = learn_skill(_demo("Put 42 in C3", CALC_STEPS, {"cell": "C3"}, span=(0, 1)))
    with pytest.raises(ConfigError, match=r"missing cell; unknown row"):
        skill.steps_for({"row": "3"})


def test_a_save_is_a_finishing_skill_and_takes_no_parameters() -> None:
    """A demonstration marked ``finishes`` teaches the app's save (the deployment runs it once at
    the end); one with parameters would not know what to fill them with, so it is refused."""
    from agentlab.agents.gui_skills import finishing_skill

    demo = _demo("In stock.xlsx, put 42 into cell C3 and save it.", CALC_STEPS, {}, span=(2, 3), skill="save_it")
    saver = learn_skill(demo.model_copy(update={"finishes": True}))
    setter = learn_skill(_demo("In stock.xlsx, put 42 into cell C3 and save it.", CALC_STEPS, {"cell": "C3"}, span=(0, 1)))
    assert finishing_skill([setter, saver]) is saver and finishing_skill([setter]) is None
    with pytest.raises(ConfigError, match="takes no parameters"):
        learn_skill(_demo("Put 42 in C3", CALC_STEPS, {"cell": "C3"}, span=(0, 1)).model_copy(update={"finishes": True}))
    # the shipped libraries: each document app has exactly one, the others none
    savers = {app: [s.name for s in load_skills(app) if s.finishes] for app in ("calc", "writer", "impress", "gimp", "chrome", "clock")}
    assert savers == {"calc": ["save_keep_format"], "writer": ["save_keep_word_format"],
                      "impress": ["save_keep_pptx_format"], "gimp": ["overwrite_image"], "chrome": [], "clock": []}


@pytest.mark.parametrize("request_,finishing,asks", [
    ("In budget.xlsx, type Total into A4 and 60 into B4, then save the file keeping the .xlsx format.", True, 2),
    ("In budget.xlsx, type Total into A4 and 60 into B4, then save the file keeping the .xlsx format.", False, 3),
    ("Fix that word in the document and save it as .docx (Word format). Change nothing else.", True, 1),
    ("Save the workbook.", True, 1),  # never fewer than one
    ("Delete my Karate alarm and keep all the others.", False, 2),
])
def test_a_piece_that_only_asks_to_save_or_keep_is_not_an_operation_when_the_app_saves(request_, finishing, asks) -> None:  # type: ignore[no-untyped-def]
    from agentlab.agents.appagent.typed import operation_pieces
    from agentlab.tasks.requests import split_pieces

    kept = operation_pieces(split_pieces(request_), finishing)
    assert len(kept) == asks and all(p in split_pieces(request_) for p in kept)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(string.ascii_letters + string.digits, min_size=2, max_size=8), min_size=1, max_size=3,
                unique_by=str.lower))
def test_learning_then_filling_with_the_demonstrations_values_gives_its_steps_back(values: list[str]) -> None:
    """Round trip: whatever the values, the skill filled with the demonstration's own values is the
    demonstration (no value leaks into another's slot, none is lost)."""
    if any(a.lower() in b.lower() for a in values for b in values if a != b):
        return  # one value inside another is ambiguous by construction
    request = "Please " + " then ".join(f"write {v} here" for v in values)
    steps = [{"type": f"{v}\n", "into": {"role": "entry", "name": f"field {i}"}} for i, v in enumerate(values)]
    params = {f"p{i}": v for i, v in enumerate(values)}
    skill = learn_skill(_demo(request, steps, params, skill="write_values"))
    assert all("{{p" in (s.type or "") for s in skill.steps)
    again = skill.steps_for(params)
    assert [s.model_dump(exclude={"timeout_s"}) for s in again] == [
        GuiStep.model_validate(s).model_dump(exclude={"timeout_s"}) for s in steps]


def test_the_shipped_libraries_are_what_the_shipped_demonstrations_teach() -> None:
    """data/skills/<app>.json is regenerated by `agentlab skills learn` from data/skills/demos."""
    learned = learn_library(load_demos())
    assert {"calc", "chrome"} <= set(learned)
    for app, skills in learned.items():
        shipped = json.loads((skills_dir() / f"{app}.json").read_text())["skills"]
        assert shipped == [s.model_dump(exclude_none=True, mode="json") for s in skills], app
    assert "set_cell(cell, value)" in skills_listing(load_skills("calc"))


def test_no_demonstration_is_a_task_of_an_evaluation_set() -> None:
    from agentlab.paths import data_dir
    from agentlab.tasks.spec import load_tasks

    evaluation = {t.instruction.casefold() for d in ("tasks", "tasks_heldout", "tasks_dev2", "tasks_desktop_heldout",
                                                     "tasks_heldout_v2") for t in load_tasks(data_dir() / d)}
    assert not [d.task.instruction for d in load_demos() if d.task.instruction.casefold() in evaluation]


def test_a_missing_library_is_empty_and_a_corrupt_one_is_one_line(tmp_path: Path) -> None:
    assert load_skills("no-such-app", tmp_path) == []
    (tmp_path / "calc.json").write_text('{"skills": [{"name": 3}]')
    with pytest.raises(ConfigError, match="not a skill library") as exc:
        load_skills("calc", tmp_path)
    assert "calc.json" in str(exc.value)
    bad = tmp_path / "demos"
    bad.mkdir()
    (bad / "x.json").write_text('{"skill": "x"}')
    with pytest.raises(ConfigError, match="not a skill demonstration") as exc:
        load_demos(bad)
    assert "x.json" in str(exc.value)


# -- offered beside the typed GUI operations --------------------------------------------------------
def _screen() -> GuiScreen:
    els = [Element(1, (0, 0, 90, 20), "link", "Catering", None, True), Element(2, (0, 30, 90, 50), "link", "Home", None, True)]
    return GuiScreen.of(Observation(screenshot=None, elements=els), 50)


def _skills() -> tuple[GuiSkill, ...]:
    return tuple(load_skills("chrome"))


def test_skills_are_offered_with_the_screens_labels_and_the_requests_values_grounded_on_its_words() -> None:
    request = "On the bakery site, open the Catering page and download the menu"
    choices = GuiChoices.build(_screen(), request, skills=_skills())
    g = choices.grammar(allow_end=False)
    # a link's label is chosen among the links on screen (the page's words, not the request's)
    assert g.tools["download_link"] == (("'Catering'", "'Home'"),) and g.tools["follow_link"] == g.tools["download_link"]
    label_prior = {c: v for name, i, vals in g.arg_prior if name == "follow_link" for c, v in vals}
    assert label_prior["'Catering'"] > label_prior["'Home'"]  # "Catering" is said
    # a field's text is the request's: no entry on screen, so fill_field is not offered at all
    assert "fill_field" not in g.tools and "press_button" not in g.tools
    prior = dict(g.name_prior)
    # "download" said: the download skill outweighs the other skills, and the prior is normalised
    assert prior["download_link"] > max(prior["bookmark_page"], prior["follow_link"]) > float("-inf")
    assert abs(sum(2.718281828 ** v for v in prior.values()) - 1) < 1e-6
    assert "- download_link(link): " in choices.doc(allow_end=False)
    tools = {t["function"]["name"]: t for t in choices.tools(allow_end=False)}
    assert tools["download_link"]["function"]["parameters"]["properties"]["link"]["enum"] == ["Catering", "Home"]
    with pytest.raises(ActionParseError, match="must be the label of an element on screen"):
        parse_gui_reply("follow_link('Catering page')", choices)


def test_only_the_first_steps_whole_label_is_chosen_on_screen() -> None:
    by_name = {s.name: s for a in ("chrome", "calc", "os", "writer", "gimp") for s in load_skills(a)}
    assert by_name["fill_field"].on_screen == {"field": "entry"}  # the text typed stays the request's
    assert by_name["follow_link"].on_screen == {"link": "link"}
    assert by_name["rename_file"].on_screen == {}  # its first step opens a menu; the file is found later
    assert by_name["transform"].on_screen == {}  # a menu item: not on screen before the menu opens
    assert by_name["replace_all"].on_screen == {}  # typed text


def test_a_skill_call_is_read_checked_and_rendered_and_an_unknown_one_refused() -> None:
    els = [Element(1, (0, 0, 90, 20), "entry", "Your name", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    choices = GuiChoices.build(screen, "fill in Your name with Ada", skills=_skills())
    call = parse_gui_reply("fill_field('Your name', 'Ada')", choices)
    assert call.name == "fill_field" and call.args == {"field": "Your name", "text": "Ada"}
    assert call.render() == 'fill_field("Your name", "Ada")'
    with pytest.raises(ActionParseError, match="no action call"):
        parse_gui_reply("book_flight('Paris')", choices)
    without = GuiChoices.build(screen, "fill in Your name with Ada")
    assert "fill_field" not in without.grammar().tools


def test_a_skill_replays_only_on_a_desktop() -> None:
    from agentlab.agents.gui_actions import GuiCall

    class _NotADesktop:
        actions = None

    skill = _skills()[0]
    call = GuiCall(skill.name, {p: "x" for p in skill.params})
    with pytest.raises(InvalidActionError, match="replays on a desktop"):
        carry_out(_NotADesktop(), call, _screen(), _skills())  # type: ignore[arg-type]
    assert re.fullmatch(r"[a-z_]+\(.*\)", skill.signature())


# -- listed in the agent documents ------------------------------------------------------------------
def test_the_documents_of_an_apps_gui_specialists_list_its_skills(tmp_path: Path) -> None:
    from agentlab.agents.gui_skills import list_in_documents
    from agentlab.paths import agents_dir
    from agentlab.pool.document import load_document, parse_document

    shipped = load_document(agents_dir() / "desktop" / "CalcAgent.md")
    assert "set_cell(cell, value): go to a cell through the Name Box and enter a value or formula into it" in shipped.skills
    for name in ("ChromeAgent", "WebAgent", "CalcAgent", "GimpAgent"):  # what `skills learn` leaves is what ships
        text = (agents_dir() / "desktop" / f"{name}.md").read_text()
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.md").write_text(text)
        assert list_in_documents(learn_library(load_demos()), folder) == []
    # a new skill is written in; no skills left takes the section out
    calc = tmp_path / "CalcAgent" / "CalcAgent.md"
    assert list_in_documents({"calc": list(load_skills("calc"))[:1]}, calc.parent) == [calc]
    assert load_document(calc).skills == (skills_listing(load_skills("calc")[:1])[2:],)
    assert list_in_documents({}, calc.parent) == [calc] and "# Skills" not in calc.read_text()
    _, problems = parse_document(calc.read_text() + "\n# Skills\nset_cell: no dash\n", calc)
    assert problems and "a skill is a line '- name(params): what it does'" in problems[0]
    _, problems = parse_document(calc.read_text().replace("# Demonstrations", "# Skills\n- a(): b\n# Demonstrations"), calc)
    assert any("sections must appear in the order" in p for p in problems)


def test_the_skills_command_lists_learns_and_refuses_bad_demonstrations_in_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from agentlab.cli import main

    main(["skills", "list", "calc"])
    assert "set_cell(cell, value): " in capsys.readouterr().out
    out = tmp_path / "libs"
    main(["skills", "learn", "--out", str(out), "--no-documents"])
    assert json.loads((out / "calc.json").read_text()) == json.loads((skills_dir() / "calc.json").read_text())
    bad = tmp_path / "demos"
    bad.mkdir()
    (bad / "broken.json").write_text("{not json")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["skills", "learn", "--demos", str(bad), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code != 0 and len(err.splitlines()) == 1 and "broken.json" in err and "not a skill demonstration" in err
    with pytest.raises(SystemExit) as exc:
        main(["skills", "check", "--only", "set_cel", "--out", str(tmp_path / "check")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code != 0 and len(err.splitlines()) == 1 and "no demonstration teaches set_cel" in err
    assert not (tmp_path / "check").exists()  # nothing was started


# -- on the phone (the protocol-level fake device) ----------------------------------------------------
def test_phone_skills_replay_on_the_fake_device_with_the_requests_values(fake_adb, tmp_path: Path) -> None:
    """The clock app's skills, learned from demonstrations on synthesized requests, called by the
    typed deploy (scripted model) with values no demonstration used: the dark theme, the Lunch alarm."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    assert app.dark is False and next(a for a in app.alarms if a.label == "Lunch").enabled is True
    llm = ScriptedChat(["toggle_setting('dark theme')", "done()"], Capabilities(plan_grammar=True))
    agent = AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False))
    res = agent.deploy(env, "Switch the Clock app to its dark theme.", tmp_path / "ep")
    assert (res.status, res.steps) == ("done", 1) and app.dark is True
    grammar = llm.params[0].grammar
    # skills first (the clock has a fitted skill prior): the GUI operations are the fallback
    assert grammar is not None and {"toggle_setting", "toggle_alarm"} <= set(grammar.tools) and "click" not in grammar.tools
    assert "'dark theme'" in (grammar.tools["toggle_setting"][0] or ())  # the request's words, not made up
    step = next(s for s in load_trajectory(tmp_path / "ep").steps if s.info.get("skill"))
    assert step.info["expanded"] == ["tap(2)", "tap(3)"]  # Settings, then the switch its row names "Dark theme"
    app.stack = ["home"]
    llm = ScriptedChat(["toggle_alarm('Lunch')", "done()"], Capabilities(plan_grammar=True))
    AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False)).deploy(
        env, "Turn off the 12:00 Lunch alarm without deleting it.", None)
    assert next(a for a in app.alarms if a.label == "Lunch").enabled is False
    # a value that names nothing: the skill acted (Settings opened), then stopped; the step counts,
    # the model reads where it stopped, and nothing was toggled
    app.stack = ["home"]
    llm = ScriptedChat(["toggle_setting('night mode')", "fail('no such setting')"], Capabilities(plan_grammar=True))
    res = AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False,
                                       max_retries=1)).deploy(env, "Turn on night mode.", None)
    assert res.status == "failed" and res.steps == 1 and app.dark is True and app.vibrate is True
    assert "toggle_setting" in res.summary and "stopped: " in res.summary and "never showed" in res.summary
    assert "stopped: " in llm.prompts[1][-1].content  # the next question says so


def test_a_skill_is_offered_only_where_its_first_element_is_and_labels_match_by_whole_words() -> None:
    clock = {s.name: s for s in load_skills("clock")}
    home = GuiScreen.of(Observation(screenshot=None, elements=[
        Element(1, (0, 0, 90, 20), "android.widget.Button", "Alarms", None, True),
        Element(2, (0, 30, 90, 50), "android.widget.Button", "Settings", None, True)]), 50)
    settings = GuiScreen.of(Observation(screenshot=None, elements=[
        Element(1, (0, 0, 90, 20), "android.widget.Switch", "Dark theme", None, True)]), 50)
    request = "Switch the Clock app to its dark theme."
    assert {"toggle_setting", "toggle_alarm"} <= set(GuiChoices.build(home, request, phone=True, skills=tuple(clock.values())).grammar().tools)
    # on the settings page neither skill's first button is there: a desktop offers only the screen's
    # own actions; a phone offers its app's skills everywhere (the skill goes Back to its first element)
    assert not {"toggle_setting", "toggle_alarm"} & set(GuiChoices.build(settings, request, skills=tuple(clock.values())).grammar().tools)
    assert {"toggle_setting", "toggle_alarm"} <= set(GuiChoices.build(settings, request, phone=True, skills=tuple(clock.values())).grammar().tools)
    switch = clock["toggle_setting"].steps_for({"setting": "theme"})[1].wait
    assert switch is not None and switch.matches("android.widget.Switch", "Dark theme")
    assert not switch.matches("android.widget.Switch", "Themes") and not switch.matches("android.widget.Button", "Dark theme")
    alarm = clock["toggle_alarm"].steps_for({"alarm": "lunch"})[2].click
    assert alarm is not None and alarm.matches("android.widget.Switch", "12:00 Lunch")


# -- a label on a screen the skill opens, grounded there --------------------------------------------
def test_labels_found_on_a_screen_the_skill_opens_are_the_late_ones() -> None:
    by_name = {s.name: s for a in ("chrome", "calc", "clock", "os") for s in load_skills(a)}
    assert late_labels(by_name["toggle_alarm"]) == [(1, "alarm")]  # its wait for the switch, after Alarms
    assert late_labels(by_name["toggle_setting"]) == [(1, "setting")]
    assert late_labels(by_name["follow_link"]) == []  # chosen among the calling screen's links
    assert late_labels(by_name["set_cell"]) == []  # typed text is the request's, never a label
    # the file waited for, then the folder the drag drops it on: both are names on the screen
    assert late_labels(by_name["move_to_folder"]) == [(2, "file"), (3, "folder")]
    assert by_name["move_to_folder"].shapes == {}


def test_a_label_is_grounded_on_the_calls_words_then_the_requests() -> None:
    alarms = ["07:00 Wake up", "12:00 Lunch", "06:00 Yoga", "Add alarm"]
    assert ground_label(alarms, "deleting", "Turn off the 12:00 Lunch alarm without deleting it.") == "12:00 Lunch"
    assert ground_label(alarms, "yoga", "switch on the Lunch alarm") == "06:00 Yoga"  # the call's words come first
    assert ground_label(["Vibrate", "Dark theme"], "vibration", "") == "Vibrate"  # one stem, as a person reads it
    assert ground_label(["Vibrate", "Dark theme"], "night mode", "Turn on night mode.") is None  # nothing fits


@given(st.lists(st.text(alphabet=string.ascii_letters + " :0123456789", max_size=20), max_size=6),
       st.text(max_size=30), st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_a_grounded_label_is_always_one_on_screen(labels: list[str], given_arg: str, request: str) -> None:
    got = ground_label(labels, given_arg, request)
    assert got is None or got in [label.strip() for label in labels]


def test_a_skill_grounds_its_argument_on_the_screen_it_opens(fake_adb, tmp_path: Path) -> None:
    """``toggle_alarm('deleting')``, the embedded model's call for "Turn off the 12:00 Lunch
    alarm without deleting it": the skill opens the alarm list, no switch there says "deleting",
    and the request's words name the Lunch alarm's, which is switched; the step records it."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    llm = ScriptedChat(["toggle_alarm('deleting')", "done()"], Capabilities(plan_grammar=True))
    agent = AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False))
    res = agent.deploy(env, "Turn off the 12:00 Lunch alarm without deleting it.", tmp_path / "ep")
    assert (res.status, res.steps) == ("done", 1)
    assert next(a for a in app.alarms if a.label == "Lunch").enabled is False
    step = next(s for s in load_trajectory(tmp_path / "ep").steps if s.info.get("skill"))
    assert step.info["grounded"] == {"alarm": "12:00 Lunch"}
    from agentlab.viz.trajectory import gui_calls_frame

    frame = gui_calls_frame(load_trajectory(tmp_path / "ep"))  # what notebook 05 shows of the episode
    assert list(frame["call"]) == ['toggle_alarm("deleting")', "done()"]
    first = frame.iloc[0]
    assert (first["skill"], first["grounded"], first["problem"]) == ("toggle_alarm", "alarm='12:00 Lunch'", "")
    assert first["expanded"].startswith("tap(1), tap(") and first["expanded"].count("tap(") == 2
    app.stack = ["home"]
    before = {a.label: a.enabled for a in app.alarms}
    llm = ScriptedChat(["toggle_setting('vibration')", "done()"], Capabilities(plan_grammar=True))
    AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False)).deploy(
        env, "In the Clock app, turn off vibration for alarms.", None)
    assert app.vibrate is False and {a.label: a.enabled for a in app.alarms} == before


def test_the_documents_of_a_skills_first_element_ground_the_skill() -> None:
    """On the clock's home screen the Settings button's learned document ("Opens a screen showing:
    ..., Dark theme") tells the grammar's prior that "the dark theme" is toggle_setting's, not
    toggle_alarm's (whose line says "switch", "Clock", "app" as much)."""
    clock = tuple(s for s in load_skills("clock") if s.name.startswith("toggle_"))  # the two switches this is about
    home = GuiScreen.of(Observation(screenshot=None, elements=[
        Element(1, (0, 0, 90, 20), "android.widget.Button", "Alarms", None, True),
        Element(2, (0, 30, 90, 50), "android.widget.Button", "Settings", None, True)]), 50)
    request = "Switch the Clock app to its dark theme."
    docs = {1: "Opens a screen showing: 07:00, Wake up, 12:00, Lunch, Add alarm",
            2: "Opens a screen showing: Navigate up, Vibrate, Dark theme"}
    plain = dict(GuiChoices.build(home, request, phone=True, skills=clock).grammar().name_prior)
    assert plain["toggle_setting"] == plain["toggle_alarm"]  # the lines alone cannot tell them apart
    choices = GuiChoices.build(home, request, phone=True, docs=docs, skills=clock)
    documented = dict(choices.grammar().name_prior)
    assert documented["toggle_setting"] > documented["toggle_alarm"]
    # and the better-grounded skill is listed first (a small model leans to the first name it reads)
    listed = [line.split("(")[0] for line in choices.doc().splitlines() if "a skill of this application" in line]
    assert listed == ["- toggle_setting", "- toggle_alarm"]
    plain_listed = [line.split("(")[0] for line in GuiChoices.build(home, request, phone=True, skills=clock).doc().splitlines()
                    if "a skill of this application" in line]
    assert plain_listed == ["- toggle_alarm", "- toggle_setting"]  # a tie keeps the library's order


def test_a_phone_screen_without_a_text_field_offers_no_type() -> None:
    """type() taps its element before the text goes in: on a page of switches that tap would flip
    one (the embedded model's type(3, 'dark') after toggling the dark theme switched it back)."""
    switches = [Element(1, (0, 0, 90, 20), "android.widget.ImageButton", "Navigate up", None, True),
                Element(3, (0, 30, 90, 50), "android.widget.Switch", "Dark theme", None, True, state=["checked"])]
    page = GuiChoices.build(GuiScreen.of(Observation(screenshot=None, elements=switches), 50), "dark theme", phone=True)
    assert "type" not in page.grammar().tools and "click" in page.grammar().tools
    field = Element(4, (0, 60, 90, 80), "android.widget.EditText", "Label", None, True, state=["editable"])
    form = GuiChoices.build(GuiScreen.of(Observation(screenshot=None, elements=[*switches, field]), 50), "Dentist", phone=True)
    assert form.grammar().tools["type"][0] == ("4",)


def test_done_is_favoured_once_a_skill_ran_for_each_ask(fake_adb, tmp_path: Path) -> None:
    """A one-ask request whose skill ran to its end is most likely done: the next step's prior
    pushes done() (the embedded model otherwise clicked on and switched the dark theme back off);
    a skill that stopped on the way pushes nothing."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.agents.gui_actions import DONE_AFTER_SKILLS
    from agentlab.envs import AndroidEnv
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    cfg = AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False, max_retries=0,
                         stop_after_skills=False)
    llm = ScriptedChat(["toggle_setting('dark theme')", "done()"], Capabilities(plan_grammar=True))
    assert AppAgent(llm, cfg).deploy(env, "Switch the Clock app to its dark theme.", None).status == "done"
    after = dict(llm.params[1].grammar.name_prior)
    assert after["done"] > after["click"]  # log 0.08 + 3 against log 0.5, renormalised alike
    fake_adb.device.app.stack = ["home"]
    llm = ScriptedChat(["toggle_setting('night mode')", "fail('no such setting')"], Capabilities(plan_grammar=True))
    AppAgent(llm, cfg).deploy(env, "Turn on night mode.", None)
    stopped = dict(llm.params[1].grammar.name_prior)
    assert stopped["done"] < stopped["click"]
    assert abs((after["done"] - after["click"]) - (stopped["done"] - stopped["click"]) - DONE_AFTER_SKILLS) < 1e-6


def test_a_skill_call_that_ran_to_its_end_is_not_run_again(fake_adb, tmp_path: Path) -> None:
    """A toggle called twice undoes itself (the embedded model switched the Yoga alarm on, then
    called the same skill again): the second identical call is refused and fed back."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    # the skill, then back to the home screen (Navigate up), then the same skill again: refused
    llm = ScriptedChat(["toggle_setting('dark theme')", "click(1)", "toggle_setting('dark theme')", "done()"],
                       Capabilities(plan_grammar=True))
    cfg = AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False, max_steps=4,
                         stop_after_skills=False)
    res = AppAgent(llm, cfg).deploy(env, "Switch the Clock app to its dark theme.", None)
    assert (res.status, res.steps, app.dark) == ("done", 2, True), res
    assert "already ran to its end in this episode" in llm.prompts[3][-1].content
    # under the grammar the finished call is not even offered: its value left out of the skill's
    offered = llm.params[2].grammar.tools["toggle_setting"][0]
    assert offered is not None and "'dark theme'" not in offered and "'theme'" in offered


def test_a_finished_skill_without_parameters_is_not_offered_again() -> None:
    els = [Element(1, (0, 0, 90, 20), "menu", "File", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    calc = tuple(load_skills("calc"))
    assert "save_keep_format" in GuiChoices.build(screen, "save it", skills=calc).grammar().tools
    assert "save_keep_format" not in GuiChoices.build(screen, "save it", skills=calc,
                                                      finished=["save_keep_format()"]).grammar().tools


def test_the_same_grounded_call_in_other_words_does_not_run_twice(fake_adb, tmp_path: Path) -> None:
    """The embedded model switched the Yoga alarm on with toggle_alarm('switch on the 06:00 alarm'),
    went back, and called toggle_alarm('switch on the 06:00 alarm labelled Yoga'): other words, the
    same alarm once grounded. The second stops before the switch (it only opened the list)."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.llm.base import Capabilities
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    lunch = next(a for a in app.alarms if a.label == "Lunch")
    llm = ScriptedChat(["toggle_alarm('deleting')", "click(1)", "toggle_alarm('Lunch alarm')", "done()"],
                       Capabilities(plan_grammar=True))
    cfg = AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False, max_steps=4,
                         stop_after_skills=False)
    res = AppAgent(llm, cfg).deploy(env, "Turn off the 12:00 Lunch alarm without deleting it.", tmp_path / "ep")
    assert res.status == "done" and lunch.enabled is False  # switched once, not back
    steps = [s for s in load_trajectory(tmp_path / "ep").steps if s.info.get("skill")]
    assert [s.info["call"] for s in steps] == ['toggle_alarm("12:00 Lunch")', 'toggle_alarm("12:00 Lunch")']
    assert "already ran to its end" in steps[1].info["skill_error"]


def test_a_phone_replay_long_presses_spins_a_picker_and_scrolls_a_row_into_view(fake_adb, tmp_path: Path) -> None:
    """The phone's own steps on the fake device: the fifth alarm (below the list's fold) is scrolled
    into view and long-pressed, Delete taps it away; a new alarm's hour picker is spun the short way
    round to "9 pm" (swiped a notch at a time); a desktop replay refuses both steps in one line."""
    from agentlab.envs import AndroidEnv
    from agentlab.envs.gui_replay import GuiReplayError, replay

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    assert [a.label for a in app.alarms][-1] == "Sleep"
    steps = [GuiStep.model_validate(s) for s in [
        {"click": {"role": "android.widget.Button", "name": "Alarms"}},
        {"long_press": {"role": "android.widget.LinearLayout", "contains": "Sleep"}},
        {"click": {"role": "android.widget.Button", "name": "Delete"}},
        {"click": {"role": "android.widget.Button", "name": "Add alarm"}},
        {"type": "Dentist", "into": {"role": "android.widget.EditText"}},
        {"spin": {"role": "android.widget.NumberPicker"}, "value": "9 pm"},
        {"click": {"role": "android.widget.Button", "name": "Save"}}]]
    assert steps[5].describe() == "spin android.widget.NumberPicker to '9 pm'"
    sent, _ = replay_phone(env, steps)
    calls = [a.to_call() for a in sent]
    assert any(c.startswith("long_press(") for c in calls) and any(c.startswith("swipe(") for c in calls)
    assert [(a.hour, a.label) for a in app.alarms] == [(7, "Wake up"), (8, "Gym"), (12, "Lunch"), (18, "Call mom"), (21, "Dentist")]
    assert sum(c.endswith('"down", "short")') for c in calls) == 24 - (21 - 7)  # from 07, the short way: down past 00
    with pytest.raises(GuiReplayError, match="a desktop cannot long-press"):
        replay(env, [steps[1]])  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError, match="holds no number"):
        replay_phone(env, [GuiStep.model_validate({"click": {"role": "android.widget.Button", "name": "Add alarm"}}),
                           GuiStep.model_validate({"spin": {"role": "android.widget.NumberPicker"}, "value": "noon"})])
    with pytest.raises(ValueError, match="'spin' and 'value' go together"):
        GuiStep.model_validate({"spin": {"role": "android.widget.NumberPicker"}})


@pytest.mark.parametrize(("value", "hour"), [("09:00", 9), ("9 pm", 21), ("12 am", 0), ("12 p.m.", 12), ("07", 7), ("noon", None)])
def test_the_number_a_picker_spins_to(value: str, hour: int | None) -> None:
    assert hour_of(value) == hour


def test_a_skills_typed_values_are_drawn_by_the_shape_its_demonstration_gave_them() -> None:
    """add_alarm learned "Bake bread" as a label (words) and "15:00" as its hour (dd:dd): on another
    request the label may not be a bare number nor the app's own name, and the prior favours the
    value the request names ("called Flight", "labelled Yoga class at": the name ends before "at")
    and the hour written as the demonstration wrote it ("05:00", not "00")."""
    from PIL import Image

    from agentlab.agents.gui_skills import fits_shape, value_shape

    assert (value_shape("15:00"), value_shape("7"), value_shape("9 pm"), value_shape("Bake bread"), value_shape("C3")) == \
        ("dd:dd", "d", "d pm", "words", "words")
    assert fits_shape("Q3 report", "words") and not fits_shape("09:00", "words") and fits_shape("alarm at 9", "dd:dd")
    skill = next(s for s in load_skills("clock") if s.name == "add_alarm")
    assert skill.params == ["label", "hour"] and skill.shapes == {"label": "words", "hour": "dd:dd"}
    els = [Element(1, (0, 0, 9, 9), "android.widget.Button", "Alarms", None, True)]
    obs = Observation(screenshot=Image.new("RGB", (10, 10)), elements=els)
    for request, label, hour in [("I have an early flight, so please add an alarm for 05:00 and call it Flight.", "Flight", "05:00"),
                                 ("Make a new alarm labelled Yoga class at 18:00.", "Yoga class", "18:00")]:
        ch = GuiChoices.build(GuiScreen(obs, els), request, phone=True, skills=[skill])
        labels = ch.values(ch.op("add_alarm"), ch.op("add_alarm").params[0])  # type: ignore[union-attr]
        assert labels and not any(v in ("05:00", "18:00", "Clock", "00") for v in labels)
        # nor the skill's own words, alone or at a run's edge ("alarm", "labelled Yoga")
        assert not any(v in ("alarm", "labelled", "labelled Yoga", "alarm labelled Yoga class") for v in labels)
        favoured = {i: [c for c, w in pr if w > 0] for name, i, pr in ch.grammar().arg_prior if name == "add_alarm"}
        assert favoured == {0: [repr(label)], 1: [repr(hour)]}, favoured


def test_add_and_delete_alarm_skills_replay_on_the_fake_device(fake_adb, tmp_path: Path) -> None:
    """The typed deploy (scripted model) calls the clock's add_alarm and delete_alarm, learned from
    demonstrations on synthesized requests: the new alarm is saved at its hour with its label, and
    the Sleep alarm, the fifth row below the list's fold, is scrolled to, held and deleted; the
    model's "labelled Sleep" is grounded on the row the request names."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    llm = ScriptedChat(["add_alarm('Dentist', '09:00')", "done()"], Capabilities(plan_grammar=True))
    res = AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False)).deploy(
        env, "Add a new alarm at 09:00 labelled Dentist in the Clock app.", tmp_path / "ep")
    assert res.status == "done" and (app.alarms[-1].hour, app.alarms[-1].label, app.alarms[-1].enabled) == (9, "Dentist", True)
    step = next(s for s in load_trajectory(tmp_path / "ep").steps if s.info.get("skill"))
    assert step.info["call"] == 'add_alarm("Dentist", "09:00")' and len(step.info["expanded"]) == 2 + 2 + 2 + 1  # 2 swipes: 07 -> 09
    app.stack = ["home"]
    llm = ScriptedChat(["delete_alarm('labelled Sleep')", "done()"], Capabilities(plan_grammar=True))
    AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False)).deploy(
        env, "Delete the alarm labelled Sleep (22:00) from the Clock app; keep all the others.", tmp_path / "ep2")
    assert [a.label for a in app.alarms] == ["Wake up", "Gym", "Lunch", "Call mom", "Dentist"]
    step = next(s for s in load_trajectory(tmp_path / "ep2").steps if s.info.get("skill"))
    assert step.info["grounded"] == {"alarm": "22:00 Sleep"}


def test_a_phone_episode_ends_once_every_ask_had_its_skill_and_a_skill_goes_back_to_its_screen(fake_adb, tmp_path: Path) -> None:
    """After a skill ran to its end for each ask the phone episode is done without asking the model
    again (the trajectory says why); a skill that stopped on the way does not end it. A skill called
    from the alarm list, where its Settings button is not, first goes Back to the home screen."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.agents.appagent.typed import AUTO_DONE
    from agentlab.envs import AndroidEnv
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    cfg = AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False, max_retries=0)
    llm = ScriptedChat(["toggle_setting('dark theme')", "click(1)"], Capabilities(plan_grammar=True))
    res = AppAgent(llm, cfg).deploy(env, "Switch the Clock app to its dark theme.", tmp_path / "ep")
    assert (res.status, res.steps, res.llm_calls, app.dark) == ("done", 1, 1, True)
    assert load_trajectory(tmp_path / "ep").steps[-1].info.get("auto_done") == AUTO_DONE
    app.stack = ["home", "alarms"]  # deeper in the app: the skill presses Back first
    llm = ScriptedChat(["toggle_setting('Vibrate')"], Capabilities(plan_grammar=True))
    res = AppAgent(llm, cfg).deploy(env, "Turn vibration off in the Clock app.", tmp_path / "ep2")
    step = next(s for s in load_trajectory(tmp_path / "ep2").steps if s.info.get("skill"))
    assert res.status == "done" and app.vibrate is False and step.info["expanded"][0] == "back()"
    app.stack = ["home"]
    llm = ScriptedChat(["toggle_setting('night mode')", "fail('no such setting')"], Capabilities(plan_grammar=True))
    res = AppAgent(llm, cfg).deploy(env, "Turn on night mode.", None)
    assert res.status == "failed" and res.llm_calls == 2  # the stopped skill did not end the episode


def test_a_quoted_phrase_is_a_value_and_a_run_that_cuts_through_one_is_not() -> None:
    """The embedded model called append_paragraph("19:00.' to concert.docx") for "Add a new last
    paragraph 'Doors open at 19:00.' to concert.docx": a run of words that starts inside the
    quotation. Such runs are not offered to a words parameter, and the quoted phrase is favoured."""
    from agentlab.agents.gui_actions import cuts_a_quote

    assert cuts_a_quote("19:00.' to concert.docx") and cuts_a_quote('"Gym')
    assert not any(cuts_a_quote(v) for v in ("Doors open at 19:00.", "don't stop", "Kim's list", "Q3 report"))
    els = [Element(1, (0, 0, 90, 20), "paragraph", "The school choir sings.", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    skill = learn_skill(_demo("Add the paragraph Tickets at the door to it.",
                              [{"type": "Tickets at the door", "into": {"role": "paragraph"}}],
                              {"text": "Tickets at the door"}, skill="append_paragraph"))
    request = "Add a new last paragraph 'Doors open at 19:00.' to concert.docx and save it."
    choices = GuiChoices.build(screen, request, skills=(skill,))
    offered = choices.grammar().tools["append_paragraph"][0]
    assert offered is not None and repr("Doors open at 19:00.") in offered
    assert not any(cuts_a_quote(ast.literal_eval(v)) for v in offered)
    prior = dict(next(p for name, i, p in choices.grammar().arg_prior if name == "append_paragraph"))
    assert prior[repr("Doors open at 19:00.")] == max(prior.values()) > 0


def test_a_spreadsheet_skill_learns_cell_and_range_shapes_and_takes_only_those() -> None:
    """Calc's Name Box took the sheet's name 'Items' for delete_row's cell and the word 'Lodnon' for
    fill_down's range (development tasks): a spreadsheet skill's parameter learned from "C3" takes
    cell references only, one learned from "B2:B9" ranges only; elsewhere "Q3" stays a word."""
    from agentlab.agents.gui_skills import fits_shape, value_shape

    assert [value_shape(v, cells=True) for v in ("C3", "b12", "B2:B9", "42", "Total")] == ["cell", "cell", "range", "dd", "words"]
    assert value_shape("Q3") == "words"  # an Impress replace_all('Q3', 'Q4') is about a quarter
    assert fits_shape("A4", "cell") and not fits_shape("Items", "cell") and not fits_shape("B2:B9", "cell")
    assert fits_shape("B2:B9", "range") and not fits_shape("Lodnon", "range")
    shapes = {s.name: s.shapes for s in load_skills("calc")}
    assert shapes["set_cell"] == {"cell": "cell", "value": "dd"} and shapes["fill_down"] == {"range": "range"}
    els = [Element(60, (0, 0, 20, 20), "text", "A1", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    request = "In contacts.xlsx (sheet 'People'), cell B3 says 'Lodnon'. Fill B2:B9 down, then correct B3 to 'London'."
    tools = GuiChoices.build(screen, request, skills=tuple(load_skills("calc"))).grammar().tools
    assert tools["delete_row"][0] == ("'B3'", "'B2'", "'B9'") and tools["fill_down"][0] == ("'B2:B9'",)


def test_a_skill_call_that_stopped_part_way_is_not_run_again(fake_adb, tmp_path: Path) -> None:
    """The embedded model called Chromium's toggle_setting("save") three times on a development
    task, each waiting out the same missing switch: a call that stopped part-way is refused when
    it comes again (and left out of the grammar), so the model moves on."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    # the second call stops part-way (its alarm was already switched); the third, the same call, is refused
    llm = ScriptedChat(["toggle_alarm('deleting')", "click(1)", "toggle_alarm('Lunch alarm')", "click(1)",
                        "toggle_alarm('Lunch alarm')", "done()"], Capabilities(plan_grammar=True))
    cfg = AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False, max_steps=6,
                         stop_after_skills=False)
    res = AppAgent(llm, cfg).deploy(env, "Turn off the 12:00 Lunch alarm without deleting it.", tmp_path / "ep")
    assert res.status == "done", res
    steps = [s for s in load_trajectory(tmp_path / "ep").steps if s.info.get("skill")]
    assert len(steps) == 2 and "skill_error" in steps[1].info
    assert any("already stopped part-way in this episode" in m.content for p in llm.prompts for m in p[-1:])
    offered = llm.params[4].grammar.tools.get("toggle_alarm")
    assert offered is None or "'Lunch alarm'" not in (offered[0] or ())


def test_a_label_found_late_is_grounded_on_what_fills_its_slot() -> None:
    """Chromium's bookmark manager labels a bookmark's menu button "More actions for Intranet
    (old)", and delete_bookmark's step is "More actions for {{bookmark}}": the slot is filled with
    the bookmark's name, not the whole label (which put "More actions for" in twice)."""
    from agentlab.agents.gui_skills import _slot_part

    step = next(s for s in {s.name: s for s in load_skills("chrome")}["delete_bookmark"].steps
                if s.target is not None and "{{bookmark}}" in (s.target.name or ""))
    assert _slot_part("More actions for Intranet (old)", step.target, "bookmark") == "Intranet (old)"
    assert _slot_part("Chromium", step.target, "bookmark") is None  # not a bookmark's menu button
    assert _slot_part("More actions for Wether", step.target, "other") == "More actions for Wether"
    row = next(s for s in {s.name: s for s in load_skills("thunderbird")}["delete_message"].steps
               if s.target is not None and "{{subject}}" in (s.target.contains or ""))
    assert _slot_part("Invoice 4471 Ana 10:02", row.target, "subject") == "Invoice 4471 Ana 10:02"  # the slot alone


def test_a_name_a_skill_finds_late_is_never_a_run_holding_a_quote_and_the_quoted_one_leads() -> None:
    """delete_bookmark's name has no learned shape (it is found on the bookmark manager the skill
    opens): the request's runs of words are its candidates, but none holding a quotation mark, and
    the quoted phrase gets the grounding prior."""
    els = [Element(1, (0, 0, 300, 20), "entry", "Address and search bar", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    request = "Remove the bookmark 'Intranet (old)' from Chromium's bookmarks bar; keep the other bookmarks."
    choices = GuiChoices.build(screen, request, skills=tuple(load_skills("chrome")))
    op = choices.op("delete_bookmark")
    assert op is not None
    vals = [str(v) for v in choices.values(op, op.params[0]) or ()]
    assert "Intranet (old)" in vals and not any("'" in v.replace("Chromium's", "") for v in vals)
    prior = dict(next(p for name, i, p in choices.grammar().arg_prior if name == "delete_bookmark" and i == 0))
    assert prior[repr("Intranet (old)")] == max(prior.values()) > 0


def test_a_call_reaching_an_element_a_finished_call_acted_on_does_not_run_again(fake_adb, tmp_path: Path) -> None:
    """toggle_alarm("06:00") after toggle_alarm("06:00 Yoga") switched the Yoga alarm back off (a
    development run): "06:00" is found on the screen as it is, so no grounding renamed it. The
    element's whole label is the call's identity (``acted_on``), and the second call stops."""
    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.envs import AndroidEnv
    from agentlab.envs.trajectory import load_trajectory
    from agentlab.llm.base import Capabilities
    from agentlab.llm.testing import ScriptedChat

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    lunch = next(a for a in fake_adb.device.app.alarms if a.label == "Lunch")
    before = lunch.enabled
    llm = ScriptedChat(["toggle_alarm('12:00 Lunch')", "click(1)", "toggle_alarm('12:00')", "done()"],
                       Capabilities(plan_grammar=True))
    cfg = AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False, max_steps=4,
                         stop_after_skills=False)
    res = AppAgent(llm, cfg).deploy(env, "Switch the 12:00 Lunch alarm.", tmp_path / "ep")
    assert res.status == "done" and lunch.enabled is (not before)  # switched once, not back
    steps = [s for s in load_trajectory(tmp_path / "ep").steps if s.info.get("skill")]
    assert steps[0].info["acted_on"] == steps[1].info["acted_on"]
    assert "already ran to its end" in steps[1].info["skill_error"]


def test_a_skills_two_names_in_a_row_may_not_be_one_value() -> None:
    """move_to_folder('archive', 'archive') was refused eight times in a row on a development task:
    the grammar itself leaves out every pair of equal values for a skill's two names in a row."""
    els = [Element(1, (0, 0, 30, 20), "menu", "View", None, True), Element(2, (0, 30, 300, 50), "icon", "archive", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    choices = GuiChoices.build(screen, "Move report.txt into the archive folder.", skills=tuple(load_skills("os")))
    grammar = choices.grammar()
    assert ("move_to_folder", 1) in grammar.differs
    rule = next(line for line in grammar.lark().splitlines() if '"move_to_folder("' in line)
    assert "'report.txt', 'archive'" in rule and "'archive', 'archive'" not in rule
    assert "'report.txt', 'report.txt'" not in rule


def test_a_call_whose_names_become_one_value_once_grounded_stops_before_acting(fake_adb, tmp_path: Path) -> None:
    """A name grounded on the screen the skill opens may turn into another parameter's value
    (rename_bookmark('Wether', 'Wether') once 'Weather' was grounded on the bookmark 'Wether'):
    the call would change nothing, so it stops before acting on that element and says why."""
    from agentlab.agents.gui_skills import run_skill
    from agentlab.envs import AndroidEnv

    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)
    app = fake_adb.device.app
    toggle = next(s for s in load_skills("clock") if s.name == "toggle_alarm")
    two = toggle.model_copy(update={"name": "toggle_twice", "params": ["alarm", "other"]})
    request = "Turn off the 12:00 Lunch alarm without deleting it."
    _, result = run_skill(env, two, {"alarm": "deleting", "other": "12:00 Lunch"}, request)
    assert "nothing would change" in result.info["skill_error"]
    assert next(a for a in app.alarms if a.label == "Lunch").enabled is True
    _, result = run_skill(env, two, {"alarm": "deleting", "other": "Yoga"}, request)  # distinct: it acts
    assert "skill_error" not in result.info and next(a for a in app.alarms if a.label == "Lunch").enabled is False
    assert result.info["made"] == {"other": "Yoga"}  # what it wrote (a new name), beside what it found
    # a later call of the skill that finds a name an earlier one wrote would undo that ask
    # (rename_bookmark('Weather', 'misspelt') after renaming 'Wether' to 'Weather', a development run)
    gym = next(a for a in app.alarms if a.label == "Gym")
    before = gym.enabled
    _, result = run_skill(env, two, {"alarm": "gym", "other": "x"}, request,
                          made=[("toggle_twice", f"{gym.hour:02d}:00 Gym")])
    assert "an earlier toggle_twice call made" in result.info["skill_error"]
    assert gym.enabled is before


def test_a_skill_learns_the_word_before_each_value_and_two_texts_are_told_apart_by_it() -> None:
    """rename_bookmark learned old after "bookmark" and new after "to" from its demonstration; on
    "... misspelt 'Wether'. Rename it to 'Weather' ..." both names are quoted, and the new name's
    prior is highest for the one after "to" (the embedded model wrote rename_bookmark(..., 'Wether')
    on a development task), the old name's none for it. The cue only breaks ties between quoted or
    named values. A skill with one text keeps the prior it had."""
    from agentlab.agents.gui_skills import cue_before

    assert cue_before("Swimming timetable", "rename my bookmark 'Town pool' to 'Swimming timetable'") == "to"
    assert cue_before("Video", "untick Enable video in the Video section") == "in"  # as written first
    assert cue_before("Plan", "Plan the week") is None and cue_before("x", "nothing here") is None
    chrome = {s.name: s for s in load_skills("chrome")}
    assert chrome["rename_bookmark"].cues == {"old": "bookmark", "new": "to"}
    els = [Element(1, (0, 0, 300, 20), "entry", "Address and search bar", None, True)]
    screen = GuiScreen.of(Observation(screenshot=None, elements=els), 50)
    request = "A bookmark on Chromium's bookmarks bar is misspelt 'Wether'. Rename it to 'Weather' without changing its address."
    prior = {i: dict(p) for name, i, p in GuiChoices.build(screen, request, skills=tuple(chrome.values())).grammar().arg_prior
             if name == "rename_bookmark"}
    assert prior[1][repr("Weather")] > prior[1][repr("Wether")] > 0
    # no old name follows "bookmark" here, and the one after "to" is the new name's, not the old's
    assert prior[0][repr("Wether")] > prior[0][repr("Weather")] == 0
    request = "Move the message 'Invoice 4471' from the inbox into the 'Invoices' folder."
    tb = tuple(load_skills("thunderbird"))
    folders = GuiScreen.of(Observation(screenshot=None, elements=[Element(1, (0, 0, 300, 20), "tree item", "Local Folders", None, True)]), 50)
    mail = {i: {c: v for c, v in p if v > 0} for name, i, p in GuiChoices.build(folders, request, skills=tb).grammar().arg_prior
            if name == "move_message"}
    assert mail[0] == {repr("Invoice 4471"): 2.0}  # neither "message" (after "move", unquoted) nor the folder
    assert max(mail[1], key=mail[1].__getitem__) == repr("Invoices")
    one = {i: dict(p) for name, i, p in GuiChoices.build(screen, "Please remove the 'News' bookmark.", skills=tuple(chrome.values())).grammar().arg_prior
           if name == "delete_bookmark"}
    assert one[0][repr("News")] == max(one[0].values())
