"""The request's word prior over arguments that name things (a setting key, a column): a name the
request calls by its words is preferred under the grammar, and the enumerated values a settings
catalogue knows are offered to its value slot."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.toolkits import load_toolkit
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.slots import merge, request_values, word_prior, workspace_values


def test_a_key_named_by_its_words_is_preferred_and_a_request_naming_none_gives_no_prior() -> None:
    keys = ["files.exclude", "editor.minimap.enabled", "editor.wordWrap", "files.autoSaveDelay"]
    prior = word_prior(keys, "I never look at the minimap. Please switch it off.")
    assert prior is not None and max(range(len(keys)), key=lambda i: prior[i]) == 1
    delay = word_prior(keys, "Save automatically after a delay of two seconds")
    assert delay is not None and max(range(len(keys)), key=lambda i: delay[i]) == 3  # auto / automatically, delay
    assert word_prior(keys, "Make the font bigger") is None  # no shared word: no preference at all


def test_a_name_the_request_quotes_beats_one_whose_words_it_happens_to_say() -> None:
    """'Bookmarks bar' shares two words with the request, 'Wether' one; but the request quotes
    'Wether', so it is the bookmark meant. An apostrophe (Chromium's) opens no quote."""
    request = "A bookmark on Chromium's bookmarks bar is misspelt 'Wether'. Rename it to 'Weather'."
    cands = ["'Bookmarks bar'", "'Wether'", "'News'"]
    prior = word_prior(cands, request)
    assert prior is not None and max(range(3), key=lambda i: prior[i]) == 1
    unquoted = word_prior(cands, request.replace("'Wether'", "Wether"))
    assert unquoted is not None and max(range(3), key=lambda i: unquoted[i]) == 0  # words alone: the folder
    assert word_prior(["'Wether bar'"], request) is not None  # a candidate only partly quoted gets its words' share


@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=8), st.text(max_size=60))
def test_the_prior_is_a_distribution_that_keeps_every_candidate(cands: list[str], request: str) -> None:
    prior = word_prior(cands, request)
    if prior is not None:
        assert math.isclose(sum(math.exp(v) for v in prior), 1.0, rel_tol=1e-9)
        assert all(v > -math.inf for v in prior)


def _settings_grammar(tmp_path: Path, request: str, *, with_request: bool) -> CallGrammar:
    (tmp_path / ".vscode").mkdir(parents=True)
    (tmp_path / ".vscode" / "settings.json").write_text(json.dumps({"files.exclude": {"dist": True}}))
    kit = load_toolkit("settings")
    values = merge(request_values(request), workspace_values(tmp_path, kit))
    return CallGrammar.build(kit, values, names=["set_setting"], allow_done=False,
                             request=request if with_request else "")


def test_the_grammar_carries_the_prior_on_the_key_and_the_catalogue_values_on_the_value(tmp_path: Path) -> None:
    request = "I never look at the minimap. Please switch it off in .vscode/settings.json."
    g = _settings_grammar(tmp_path, request, with_request=True)
    (_, keys, values) = g.tools["set_setting"]
    assert "'editor.minimap.enabled'" in keys and "'false'" in values and "'afterDelay'" in values
    ((tool, index, prior), (_, value_index, value_prior)) = g.arg_prior
    assert (tool, index) == ("set_setting", 1) and max(prior, key=lambda kv: kv[1])[0] == "'editor.minimap.enabled'"
    # "switch it off": the value leans to no (the polarity prior), never to yes
    lean = dict(value_prior)
    assert value_index == 2 and lean["'false'"] - lean["'true'"] == pytest.approx(2.0)
    # along a reply, the bias moves mass to the key the request names, not to the one the model likes
    head = "set_setting('.vscode/settings.json', "
    assert g._mass(head + "'editor.m") > g._mass(head + "'files.e") + 1.0
    assert not _settings_grammar(tmp_path / "b", request, with_request=False).arg_prior


def _leaning(grammar: CallGrammar, tokenizer, favour: str, lean: float) -> str:
    """Greedy decoding under ``grammar`` by a stand-in model that adds ``lean`` to ``favour``'s tokens."""
    import random

    import torch

    from tests.toolkits.test_toolkits import _walk

    liked = list(set(tokenizer.encode(favour, add_special_tokens=False)))

    def scores() -> torch.Tensor:
        out = torch.zeros((1, len(tokenizer)))
        out[0, liked] = lean
        return out

    return _walk(grammar, tokenizer, random.Random(0), 60, scores_fn=scores)


def test_decoding_follows_the_request_word_over_a_model_that_leans_to_another_key(tmp_path: Path) -> None:
    """The stand-in 'model' leans to files.exclude; the request says "minimap": the prior wins the
    key. A model far more sure of its key keeps it (a product of experts, not an override)."""
    from transformers import AutoTokenizer

    from agentlab.llm.embedded import converted_smollm2_dir

    tokenizer = AutoTokenizer.from_pretrained(converted_smollm2_dir())
    request = "I never look at the minimap. Please switch it off in .vscode/settings.json."
    liked = "set_setting('.vscode/settings.json', 'files.exclude'"
    for name in "abc":
        (tmp_path / name).mkdir()
    plain = _leaning(_settings_grammar(tmp_path / "a", request, with_request=False), tokenizer, liked, 1.0)
    assert plain.startswith("set_setting('.vscode/settings.json', 'files.exclude'")
    grounded = _leaning(_settings_grammar(tmp_path / "b", request, with_request=True), tokenizer, liked, 1.0)
    assert grounded.startswith("set_setting('.vscode/settings.json', 'editor.minimap.enabled'")
    sure = _leaning(_settings_grammar(tmp_path / "c", request, with_request=True), tokenizer, liked, 4.0)
    assert sure.startswith("set_setting('.vscode/settings.json', 'files.exclude'")


def test_a_flag_the_request_names_is_preferred_on_and_an_unnamed_one_gets_no_prior(tmp_path: Path) -> None:
    from docx import Document

    from agentlab.toolkits.slots import flag_prior

    assert flag_prior("italic", "could you put 'Kind regards,' in italics?")[0][0] == "True"
    assert flag_prior("descending", "sort so the biggest amounts are at the top") is None  # said without its word
    on, off = dict(flag_prior("bold", "make the heading bold"))["True"], dict(flag_prior("bold", "make the heading bold"))["False"]
    assert on - off >= 5  # stronger than a word prior: the model's habit is the default False
    for negated in ("the title should not be bold", "remove the italics from the quote"):
        prior = dict(flag_prior("italic" if "italic" in negated else "bold", negated))
        assert prior["False"] > prior["True"], negated
    doc = Document()
    doc.add_paragraph("Memo")
    doc.save(tmp_path / "memo.docx")
    kit = load_toolkit("documents")
    request = "The heading of memo.docx does not stand out. Make it bold."
    g = CallGrammar.build(kit, merge(request_values(request), workspace_values(tmp_path, kit)), names=["set_font"],
                          request=request)
    flags = {index: dict(prior) for tool, index, prior in g.arg_prior if tool == "set_font"}
    assert set(flags) == {2} and flags[2]["True"] > flags[2]["False"]  # bold named; italic, underline not
    head = "set_font('memo.docx', 'heading', "
    assert g._mass(head + "True") > g._mass(head + "False") + 1.0


def test_a_choice_the_request_says_is_preferred_and_the_mail_field_is_only_where_to_look(tmp_path: Path) -> None:
    """"Mark everything from Jonas as read": the flag ``read`` (said) gets the word prior, not
    ``unread`` (only containing it); and a match text found in another header than the chosen
    field still picks its messages (the subject quoted, ``from`` chosen), while a text found in no
    header is an error that changes nothing."""
    import os

    from agentlab.toolkits import mail
    from agentlab.toolkits.base import ToolError

    box = tmp_path / "Inbox"
    box.write_text("From - Mon\nFrom: Jonas Weber <j@example.org>\nSubject: Contract renewal\n\nhi\n\n"
                   "From - Tue\nFrom: shop@example.com\nSubject: You won a gift card!!!\n\nwin\n")
    kit = load_toolkit("mail")
    request = "Could you mark everything from Jonas Weber in Inbox as read?"
    g = CallGrammar.build(kit, merge(request_values(request), workspace_values(tmp_path, kit)), names=["mark_messages"],
                          request=request)
    flag = next(dict(p) for tool, index, p in g.arg_prior if tool == "mark_messages" and index == 3)
    assert flag["'read'"] > max(flag["'unread'"], flag["'flagged'"]), flag
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        before = box.read_bytes()
        with pytest.raises(ToolError, match="subject, sender or recipient"):
            mail.delete_messages("Inbox", "lottery", "subject")
        assert box.read_bytes() == before
        assert mail.delete_messages("Inbox", "You won a gift card!!!", "from") == "deleted 1 message(s) (by subject)"
        assert "Contract renewal" in box.read_text() and "gift card" not in box.read_text()
    finally:
        os.chdir(old)


def test_new_text_prefers_the_phrase_the_request_quotes_whole(tmp_path: Path) -> None:
    """A text slot's candidates are the request's runs of words; the quoted phrase (with its full
    stop) gets the quote prior, a run without it does not, and an unquoted request gets none."""
    from docx import Document

    from agentlab.toolkits.slots import quote_prior

    request = "Add a new last paragraph 'Doors open at 19:00.' to concert.docx and save it."
    doc = Document()
    doc.add_paragraph("Concert")
    doc.save(tmp_path / "concert.docx")
    kit = load_toolkit("documents")
    values = merge(request_values(request), workspace_values(tmp_path, kit))
    g = CallGrammar.build(kit, values, names=["append_paragraph"], allow_done=False, request=request)
    (_, texts) = g.tools["append_paragraph"]
    assert "'Doors open at 19:00.'" in texts and "'Doors open at 19:00'" in texts
    ((tool, index, prior),) = [a for a in g.arg_prior if a[0] == "append_paragraph"]
    assert index == 1 and max(prior, key=lambda kv: kv[1])[0] == "'Doors open at 19:00.'"
    assert quote_prior(["'Doors open'", "'open'"], "Add Doors open at the end") is None


def test_a_name_whose_every_word_the_request_says_stands_out_among_many_sharing_one() -> None:
    """Among many VLC-like options each sharing one word of the request, the one it names whole
    ('its dark palette': qt-dark-palette, the two-letter module prefix aside) gets one word's
    weight more than a candidate sharing as many words but not all of its own (dark-palette-mode)."""
    request = "Switch VLC's interface to its dark palette and save the preferences."
    cands = ["'qt-dark-palette'", "'dark-palette-mode'"] + [f"'opt{i}-switch'" for i in range(300)]
    prior = word_prior(cands, request)
    assert prior is not None
    assert prior[0] - prior[2] == pytest.approx(2 * 2.0)  # two shared words and all said, against one shared word
    assert prior[0] - prior[1] == pytest.approx(2.0)  # two shared of three: not all said


def test_a_settings_value_leans_yes_or_no_the_requests_way() -> None:
    """'only one instance' asks for nothing to be off: false loses 2 nats against true; 'never'
    asks for off: true loses them; a request asking both, or a list without both kinds, gets none;
    values that are not yes/no keep their mass relative to each other."""
    from agentlab.toolkits.slots import combine_priors, polarity_prior, quote_prior

    cands = ["'only'", "'true'", "'false'", "'16'"]
    on = polarity_prior(cands, "Set VLC so that only one instance of the player runs at a time")
    off = polarity_prior(cands, "I never look at the minimap")
    assert on is not None and on[1] - on[2] == pytest.approx(2.0) and on[0] == on[1] == on[3]
    assert off is not None and off[2] - off[1] == pytest.approx(2.0) and off[0] == off[2]
    assert polarity_prior(cands, "Turn off the minimap and enable word wrap") is None
    assert polarity_prior(["'16'", "'true'"], "Set the font size to 16") is None
    both = combine_priors(quote_prior(cands, "Set it to 'only'"), polarity_prior(cands, "Set it to 'only'"))
    assert both is not None and math.isclose(sum(math.exp(v) for v in both), 1.0)
    assert max(range(4), key=lambda i: both[i]) == 0


def test_a_setting_named_by_its_effect_is_preferred_by_meaning_and_the_option_turns_it_off(tmp_path: Path) -> None:
    """People name a setting by what it does: "the letters are tiny" shares no word with
    ``editor.fontSize`` (or only "editor", with every editor key). The meaning prior (MiniLM, the
    shipped encoder) prefers it; without an encoder the grammar carries no such prior."""
    from agentlab.llm.similarity import default_encoder
    from agentlab.toolkits.slots import meaning_prior

    encode = default_encoder().encode
    keys = ["'editor.fontSize'", "'editor.tabSize'", "'files.autoSave'", "'editor.wordWrap'"]
    tiny = meaning_prior(keys, "The letters in my editor are tiny; can you make them larger?", encode)
    assert tiny is not None and max(range(4), key=lambda i: tiny[i]) == 0
    assert abs(sum(math.exp(v) for v in tiny) - 1) < 1e-6
    losing = meaning_prior(keys, "I keep losing my work when I forget to press save", encode)
    assert losing is not None and max(range(4), key=lambda i: losing[i]) == 2
    assert meaning_prior(keys[:1], "make the text larger", encode) is None  # nothing to choose between

    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text(json.dumps({"editor.fontSize": 12, "editor.tabSize": 4,
                                                                    "files.autoSave": "off"}))
    kit = load_toolkit("settings")
    request = "The letters in my editor are tiny; can you make them larger?"
    values = merge(request_values(request), workspace_values(tmp_path, kit))
    with_meaning = CallGrammar.build(kit, values, request=request, encode=encode)
    without = CallGrammar.build(kit, values, request=request)
    key_priors = {(t, i): dict(p) for t, i, p in with_meaning.arg_prior if t == "set_setting"}
    plain = {(t, i): dict(p) for t, i, p in without.arg_prior if t == "set_setting"}
    key_arg = next(k for k, p in key_priors.items() if "'editor.fontSize'" in p)
    chosen = key_priors[key_arg]
    assert max(chosen, key=chosen.get) == "'editor.fontSize'"
    before = plain.get(key_arg)  # the word prior alone: "editor" ties the editor keys
    assert before is None or before["'editor.fontSize'"] == pytest.approx(before["'editor.tabSize'"])


def test_the_tool_agent_encodes_each_compared_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grammar is built every step over the same keys and request: the tool agent's encoder
    gives the shipped encoder's vectors and encodes a text only the first time it is seen."""
    import numpy as np

    from agentlab.agents import tools

    real = tools._encoder().encode
    seen: list[str] = []

    class Counting:
        def encode(self, texts: list[str]):  # type: ignore[no-untyped-def]
            seen.extend(texts)
            return real(texts)

    monkeypatch.setattr(tools, "_EMBEDDED", {})
    monkeypatch.setattr(tools, "_encoder", lambda: Counting())
    texts = ["make the letters bigger", "editor font size", "editor tab size"]
    first = tools._encode_once(texts)
    again = tools._encode_once(texts[::-1])
    assert np.allclose(first, real(texts), atol=1e-5) and np.allclose(again, first[::-1])
    assert seen == texts  # the second call encoded nothing
