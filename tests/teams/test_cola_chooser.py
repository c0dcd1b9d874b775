"""COLA's model scheduler's parts: reading a name off a reply, and the choice grammar the embedded
model decodes under (so it can only name a candidate)."""

from __future__ import annotations

import pytest

from agentlab.dialogue.ask import RetrySampling
from agentlab.errors import ActionParseError, ConfigError
from agentlab.llm.choice_grammar import ChoiceGrammar
from agentlab.llm.guidance import check_grammar
from agentlab.teams.cola.chooser import ModelChooser, parse_choice

NAMES = ("SheetAgent", "DataAgent", "FileAgent")


def test_the_reply_names_a_candidate_as_a_whole_word() -> None:
    assert parse_choice("SheetAgent", NAMES) == "SheetAgent"
    assert parse_choice("I would pick dataagent for this.", NAMES) == "DataAgent"
    assert parse_choice("SheetAgents", ["SheetAgent", "SheetAgents"]) == "SheetAgents"  # the longest name written
    with pytest.raises(ActionParseError, match="names none of the agents"):
        parse_choice("the spreadsheet one", NAMES)


def test_the_choice_grammar_compiles_and_its_regex_matches_only_the_names() -> None:
    import re

    grammar = ChoiceGrammar(NAMES)
    check_grammar(grammar.lark())
    assert re.fullmatch(grammar.regex(), "DataAgent") and not re.fullmatch(grammar.regex(), "DataAgent!")
    with pytest.raises(ConfigError):
        ChoiceGrammar(())


def test_the_embedded_model_under_the_grammar_names_a_candidate(backend, pool) -> None:  # type: ignore[no-untyped-def]
    """The real SmolLM2-135M, asked with the scheduler's prompt and decoding under the choice
    grammar: its reply is exactly one of the candidates, whatever it thinks of them."""
    chooser = ModelChooser(backend, pool, sampling=RetrySampling(max_new_tokens=16))
    choice, reply = chooser("Sum column B of sales.xlsx into B10", list(NAMES))
    assert choice in NAMES and reply.strip() == choice


def test_a_refined_subtask_is_one_line_that_keeps_every_file_named() -> None:
    from agentlab.teams.cola.refiner import parse_refined

    sub = "Copy column A of roster.xlsx into names.txt"
    assert parse_refined("Subtask: Read column A of roster.xlsx and write it to names.txt", sub).endswith("names.txt")
    assert parse_refined("**Subtask:** copy ROSTER.XLSX column A to names.txt", sub).startswith("copy")
    with pytest.raises(ActionParseError, match="drops names.txt"):
        parse_refined("Subtask: copy column A of roster.xlsx", sub)
    with pytest.raises(ActionParseError, match="no 'Subtask: ...' line"):
        parse_refined("I will copy it.", sub)
