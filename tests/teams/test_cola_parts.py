"""COLA's parts on their own: answers, memory, the planner's and reviewer's reply formats and checks."""

from __future__ import annotations

import io

import pytest

from agentlab.envs.snapshot import FolderChanges
from agentlab.errors import ActionParseError, ConfigError
from agentlab.dialogue.person import Answer, Question, ScriptedAnswers, parse_answer, terminal_ask
from agentlab.teams.cola.memory import LongTermMemory, MemoryEntry, ShortTermMemory
from agentlab.teams.cola.planner import parse_plan
from agentlab.teams.cola.reviewer import StepView, check_step, parse_review

Q = Question(kind="confirm", step=1, agent="SheetAgent", subtask="sum it", text="Confirm?")


def test_answers_are_read_one_way_everywhere(tmp_path) -> None:
    assert parse_answer("yes") == Answer("yes", text="yes")
    assert parse_answer("retry: use column B").guidance == "use column B"
    assert parse_answer("retry use column B").guidance == "use column B"
    back = parse_answer("backtrack 2: the total is in column C")
    assert (back.choice, back.step, back.guidance) == ("backtrack", 2, "the total is in column C")
    assert parse_answer("reassign CoderAgent").agent == "CoderAgent"
    for bad in ("maybe", "backtrack", "backtrack zero", "reassign", ""):
        with pytest.raises(ConfigError):
            parse_answer(bad)
    f = tmp_path / "answers.txt"
    f.write_text("# a comment\nyes\n\nbacktrack 1: again\n")
    scripted = ScriptedAnswers.from_file(f)
    assert [scripted(Q).choice for _ in range(3)] == ["yes", "backtrack", "yes"]  # the last one is the default
    assert len(scripted.asked) == 3
    f.write_text("yes\nperhaps\n")
    with pytest.raises(ConfigError, match="answers.txt:2"):
        ScriptedAnswers.from_file(f)


def test_terminal_ask_asks_again_until_the_answer_reads() -> None:
    out = io.StringIO()
    answer = terminal_ask(Q, stdin=io.StringIO("what?\nno\n"), stdout=out)
    assert answer.choice == "no" and "cannot read the answer" in out.getvalue() and "Confirm?" in out.getvalue()
    assert terminal_ask(Q, stdin=io.StringIO(""), stdout=out).choice == "stop"  # nobody there


def test_long_term_memory_returns_the_most_similar_past_summary(tmp_path) -> None:
    memory = LongTermMemory(tmp_path / "memory.jsonl", top_n=2)
    for tid, instr in [("a", "Sum the Amount column of invoice.xlsx and write the total into letter.docx"),
                       ("b", "Crop the photo to a square and save it as PNG"),
                       ("c", "Rename the sheet Data to Budget in budget.xlsx")]:
        memory.add(MemoryEntry(task_id=tid, instruction=instr, summary="plan: ...", success=True))
    got = memory.recall("Add up the amounts in orders.xlsx and put the total in memo.docx")
    assert [r.entry.task_id for r in got][0] == "a" and len(got) == 2 and got[0].score > got[1].score
    assert [r.entry.task_id for r in memory.recall("crop image square", exclude=["b"])][0] != "b"
    assert LongTermMemory(tmp_path / "none.jsonl").recall("anything") == []


def test_short_term_memory_keeps_the_last_messages_and_rolls_back() -> None:
    st = ShortTermMemory(size=2)
    for step, text in [(-1, "plan"), (0, "step one"), (1, "step two"), (2, "step three")]:
        st.add("manager", text, step)
    assert [m.text for m in st.recent()] == ["step two", "step three"]
    assert st.rollback(1) == 2 and [m.text for m in st.messages] == ["plan", "step one"]
    assert ShortTermMemory(size=0).recent() == []


def test_plan_replies() -> None:
    assert parse_plan("Plan:\n1. Sum the amounts\n2) Write the letter\n", 4) == ["Sum the amounts", "Write the letter"]
    assert parse_plan("Step 1: do it", 4) == ["do it"]
    for bad in ("Sum the amounts, then write.", "1. a\n2. b\n3. c", "1. same\n2. same"):
        with pytest.raises(ActionParseError):
            parse_plan(bad, 2)


def test_review_replies_and_checks() -> None:
    assert parse_review("Verdict: no\nReason: the file is empty") == ("no", "the file is empty")
    assert parse_review("**Verdict:** Unsure") == ("unsure", "")
    with pytest.raises(ActionParseError):
        parse_review("looks fine")
    none = FolderChanges([], [], [])
    view = StepView(task="t", subtask="s", agent="A", status="done", changes=none)
    assert check_step(view).verdict == "no" and "no effect" in check_step(view).reason  # type: ignore[union-attr]
    assert check_step(StepView("t", "s", "A", "done", none, output="Total: 3")) is None  # an answer is an effect
    assert check_step(StepView("t", "s", "A", "failed", FolderChanges(["x"], [], []))).verdict == "no"  # type: ignore[union-attr]
    assert check_step(StepView("t", "s", "A", "max_steps", FolderChanges(["x"], [], []))) is None


def test_answers_the_team_cannot_follow_give_the_step_up_and_say_why() -> None:
    from agentlab.teams.cola.options import ColaOptions
    from agentlab.teams.cola.policy import from_answer

    opts = ColaOptions(max_backtracks=1)
    able = {"SheetAgent"}
    ahead = from_answer(parse_answer("backtrack 3"), current=1, options=opts, able=able, backtracks=0)
    assert ahead.action == "give_up" and "has not run yet" in ahead.why
    spent = from_answer(parse_answer("backtrack 1"), current=1, options=opts, able=able, backtracks=1)
    assert spent.action == "give_up" and "budget" in spent.why
    back = from_answer(parse_answer("backtrack 2: again"), current=1, options=opts, able=able, backtracks=0)
    assert (back.action, back.step, back.guidance) == ("backtrack", 1, "again")
    assert from_answer(parse_answer("reassign GimpAgent"), current=0, options=opts, able=able, backtracks=0).action == "give_up"
    assert from_answer(parse_answer("no"), current=0, options=opts, able=able, backtracks=0).action == "stop"
