"""Which asks of a request the calls that ran answered (:mod:`agentlab.toolkits.asks`), and the
tool agent giving an unanswered ask a step of its own (``check_asks``)."""

from __future__ import annotations

import pytest

from agentlab.llm.base import Capabilities
from agentlab.llm.testing import ScriptedChat as Scripted
from agentlab.paths import data_dir
from agentlab.pool import AgentPool
from agentlab.run.episode import run_task
from agentlab.tasks.spec import load_task
from agentlab.teams.base import ExecOptions
from agentlab.envs.trajectory import load_trajectory
from agentlab.toolkits import load_toolkit
from agentlab.toolkits.asks import answered_pieces, is_ask, unanswered_asks
from agentlab.toolkits.base import Call


@pytest.mark.parametrize("piece", [
    "add 'Hiring freeze' as the last bullet on the same slide.",
    "Please turn it 90 degrees clockwise",
    "Also songs/dance.mp3 is in there twice, please remove the second one.",
    "Can you create a Receipts folder under Local Folders in Thunderbird",
    "to open that same page every time it starts.",
    "star his contract renewal email so I don't lose it?",
    "I'd like Chromium to show the Home button",
    "We're releasing: bump the version in package.json to 1.4.0",  # after a colon, a start of its own
])
def test_a_piece_asking_for_an_operation_is_an_ask(piece: str) -> None:
    assert is_ask(piece)


@pytest.mark.parametrize("piece", [
    "The mail is in thunderbird/Mail/Local Folders/Inbox.",
    "photo.png is too big to email.",
    "Keep the original as it is.",
    "Leave the other files alone.",
    "The header row should stay where it is.",
    "save it over the same file?",
    "I want to see where my money went in November.",
    "'Send the invites'.",  # a quoted title's verb is not the request's
    "",
])
def test_a_note_a_constraint_or_a_quoted_title_is_not_an_ask(piece: str) -> None:
    assert not is_ask(piece)


def _top(table: dict[str, str]):
    return lambda piece: next((tool for words, tool in table.items() if words in piece), None)


def test_each_call_answers_the_ask_naming_its_longest_value_and_a_written_file_every_piece_naming_it() -> None:
    """``add_bullet('launch.pptx', 'Risks', 'Hiring freeze')`` names the Risks slide (first
    piece) and 'Hiring freeze' (second): it answers the second only, so the first ask, which
    names no value a call could show, is still to do. A file the call wrote answers every piece
    naming it ("save the result as scan_fixed.png"); a file that existed answers nothing."""
    slides = load_toolkit("slides")
    pieces = ["The supplier delay is sorted, so please drop that bullet from the Risks slide in launch.pptx",
              "add 'Hiring freeze' as the last bullet on the same slide."]
    call = Call("add_bullet", {"file": "launch.pptx", "slide": "Risks", "text": "Hiring freeze"})
    assert answered_pieces(pieces, [call], slides, {"launch.pptx"}, _top({})) == {1}
    images = load_toolkit("images")
    text = ("scan.png came out of the scanner sideways. Please turn it 90 degrees clockwise and make it "
            "greyscale, and save the result as scan_fixed.png.")
    grey = Call("grayscale", {"file": "scan.png", "out": "scan_fixed.png"})
    top = _top({"clockwise": "rotate_clockwise", "greyscale": "grayscale", "save": "convert"})
    assert unanswered_asks(text, [grey], images, {"scan.png"}, top) == ["Please turn it 90 degrees clockwise"]
    rotate = Call("rotate_clockwise", {"file": "scan_fixed.png", "degrees": 90, "out": "scan_fixed.png"})
    assert unanswered_asks(text, [grey, rotate], images, {"scan.png"}, top) == []
    # nothing ran, or a request of one piece: nothing to say
    assert unanswered_asks(text, [], images, {"scan.png"}, top) == []
    assert unanswered_asks("Make scan.png greyscale.", [grey], images, {"scan.png"}, top) == []


def test_a_call_whose_values_name_another_tools_ask_also_answers_the_ask_of_its_own_tool() -> None:
    """``add_slide`` with the title "Title it 'Next steps'" names: that piece's own tool is
    ``set_title``, so the call also answers "Can you add one more slide", the first ask of its own
    tool naming no value (the values were the new slide's). Where values and tool agree
    (``mark_messages`` placed on "mark everything from Jonas Weber as read"), the call answers that
    ask only, and "star his contract renewal email" stays to do — unless read leniently (the
    ablation: a placed call answers any valueless ask of its tool)."""
    slides = load_toolkit("slides")
    text = "Can you add one more slide at the end of kickoff.pptx? Title it 'Next steps', with one bullet: 'Book the venue'."
    call = Call("add_slide", {"file": "kickoff.pptx", "title": "Next steps", "lines": "Book the venue"})
    top = _top({"add one more slide": "add_slide", "Title it": "set_title"})
    assert unanswered_asks(text, [call], slides, {"kickoff.pptx"}, top) == []
    agree = _top({"add one more slide": "add_slide", "Title it": "add_slide"})
    assert unanswered_asks(text, [call], slides, {"kickoff.pptx"}, agree) == [
        "Can you add one more slide at the end of kickoff.pptx?"]  # values and tool agree: one ask
    mail = load_toolkit("mail")
    text = ("Could you mark everything from Jonas Weber in my inbox as read, and star his contract renewal "
            "email so I don't lose it?")
    mark = Call("mark_messages", {"folder": "Inbox", "text": "Jonas Weber", "field": "from", "flag": "read"})
    top = _top({"mark": "mark_messages", "star": "mark_messages"})
    assert unanswered_asks(text, [mark], mail, {"Inbox"}, top) == ["star his contract renewal email so I don't lose it?"]
    assert unanswered_asks(text, [mark], mail, {"Inbox"}, top, by_tool_always=True) == []


def test_an_unanswered_ask_gets_its_own_step_and_off_the_first_done_ends_the_episode(tmp_path) -> None:
    """"…mark everything from Jonas Weber as read, and star his contract renewal email …": the
    first reply marks the messages read and says ``done()``; its values name the first ask only,
    so with ``check_asks`` the second ask ("star his contract renewal email") is asked alone and
    its call solves the task. The value check alone cannot see it (it names no value), so off,
    the first ``done()`` ends the episode with the task half done."""
    pool = AgentPool.from_dir(None)
    task = load_task(data_dir() / "tasks_dev2" / "thunderbird-d2-jonas-read-star-contract.json")
    box = "thunderbird/Mail/Local Folders/Inbox"
    first = f"mark_messages('{box}', 'Jonas Weber', 'from', 'read')\ndone()"
    second = f"mark_messages('{box}', 'Contract renewal', 'subject', 'flagged')\ndone()"
    llm = Scripted([first, second], Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "on",
                   options=ExecOptions(max_steps=4, runner_options={"check_asks": "strict"}))
    traj = load_trajectory(tmp_path / "on" / row["trajectory"])
    s0, s1 = traj.steps[0].info, traj.steps[1].info
    assert s0["done_refused"] and s0["unmet"] == ["star his contract renewal email so I don't lose it?"], s0
    assert s1["ask"] == s0["unmet"][0] and "unmet" not in s1, s1
    assert (row["steps"], row["success"]) == (2, True), row
    off = Scripted([first, second], Capabilities(plan_grammar=True))
    row_off = run_task(task, pool=pool, llm=off, out_dir=tmp_path / "off",
                       options=ExecOptions(max_steps=4, runner_options={"check_asks": "off"}))
    assert (row_off["steps"], row_off["success"]) == (1, False), row_off


@pytest.mark.parametrize("text, asks", [
    ("Could you add a row for it between Tuesday and Thursday, with 7.5 hours?",
     ["Could you add a row for it between Tuesday and Thursday, with 7.5 hours?"]),
    ("I'd like vertical rulers at columns 80 and 120 in the editor.", ["I'd like vertical rulers at columns 80 and 120 in the editor."]),
    ("Put a slide titled 'Budget' in deck.pptx with two bullets: 'Hardware: 12k' and 'Licences: 4k'.",
     ["Put a slide titled 'Budget' in deck.pptx with two bullets: 'Hardware: 12k' and 'Licences: 4k'."]),
    ("Could you hide the build and dist folders in VS Code, and switch on format on save?",
     ["Could you hide the build and dist folders in VS Code", "switch on format on save?"]),
    ("Please turn it 90 degrees clockwise and make it greyscale.", ["Please turn it 90 degrees clockwise", "make it greyscale."]),
    ("In letter.docx the heading should be bold and the date should be on the right-hand side.",
     ["In letter.docx the heading should be bold", "the date should be on the right-hand side."]),
    ("Make a folder called Travel on the bar and put SkyJet and Nordair inside it.",
     ["Make a folder called Travel on the bar", "put SkyJet and Nordair inside it."]),
])
def test_a_specialist_cuts_at_and_only_where_a_clause_of_its_own_follows(text: str, asks: list[str]) -> None:
    """``split_asks``: "between Tuesday and Thursday" or "columns 80 and 120" is one ask (cut, the
    second item became an ask of its own and was asked alone); an "and" before a verb, a subject
    or a clause with its own verb still cuts. The MetaAgent's ``split_pieces`` keeps every cut."""
    from agentlab.tasks.requests import split_asks, split_pieces

    assert split_asks(text) == asks
    assert len(split_pieces(text)) >= len(asks)


def test_a_call_whose_values_a_note_names_answers_the_ask_beside_the_note() -> None:
    """"Slide 2 of strategy.pptx should be titled Roadmap. Could you change it?": the call's
    values are in the note, and "Could you change it?" is what the note is about — answered, so
    no second step renames slide texts (the first development set lost this task so)."""
    slides = load_toolkit("slides")
    text = "Slide 2 of strategy.pptx should be titled Roadmap. Could you change it?"
    call = Call("set_title", {"file": "strategy.pptx", "slide": "2", "title": "Roadmap"})
    assert not is_ask("Slide 2 of strategy.pptx should be titled Roadmap.")
    assert unanswered_asks(text, [call], slides, {"strategy.pptx"}, _top({})) == []
    settings = load_toolkit("settings")
    text = ("The python.defaultInterpreterPath setting in .vscode/settings.json points to a virtualenv I "
            "deleted. Just remove that setting and keep the rest.")
    call = Call("remove_setting", {"file": ".vscode/settings.json", "key": "python.defaultInterpreterPath"})
    assert unanswered_asks(text, [call], settings, {".vscode/settings.json", ".vscode"}, _top({})) == []
