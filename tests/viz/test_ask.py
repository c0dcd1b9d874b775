"""The notebook's COLA question: typed answers are read (and re-asked), papermill falls back to scripted ones."""

from __future__ import annotations

from agentlab.dialogue.person import Question
from agentlab.viz.ask import NotebookAsk

Q = Question(kind="unsure", step=2, agent="WordAgent", subtask="write the letter", text="Accept it?")


def test_typed_answers_are_read_and_bad_ones_asked_again() -> None:
    typed = iter(["hmm", "backtrack 1: use the Amount column"])
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        return next(typed)

    ask = NotebookAsk(["yes"], read=read, show=False)
    answer = ask(Q)
    assert (answer.choice, answer.step, answer.guidance) == ("backtrack", 1, "use the Amount column")
    assert len(prompts) == 2 and ask.log[0][2] == "person"
    assert "Accept it?" in ask.card_html() and "backtrack 1" in ask.card_html()


def test_without_a_front_end_the_scripted_answer_is_used() -> None:
    def refused(prompt: str) -> str:
        raise RuntimeError("StdinNotImplementedError: raw_input was called, but this frontend does not support input requests")

    ask = NotebookAsk(["retry: sum column B"], read=refused, show=False)
    assert ask(Q).guidance == "sum column B" and ask(Q).choice == "yes"  # then the default
    assert [who for _, _, who in ask.log] == ["scripted", "scripted"]
