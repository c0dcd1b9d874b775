"""The typed GUI action space (agentlab.agents.gui_actions): its grammar over a screen's marks and
a request (with the embedded model's tokenizer), the endpoint tools generated from the same
signatures, reading replies, and the mapping onto the desktop and phone env actions."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.agents.gui_actions import (
    DESKTOP_KEYS,
    GuiCall,
    GuiChoices,
    GuiScreen,
    expand,
    parse_gui_reply,
)
from agentlab.envs.actions.desktop import Click, Hotkey, Scroll, Stop, Type
from agentlab.envs.actions.phone import Back, Swipe, Tap, Text
from agentlab.envs.base import Element, Observation
from agentlab.errors import ActionParseError, InvalidActionError

PLACEHOLDER = "Action: <one action call such as click(3), or FINISH if the task is complete>"


def _el(i: int, text: str, role: str = "push button", *, clickable: bool = True, focusable: bool = False,
        state: tuple[str, ...] = ()) -> Element:
    return Element(id=i, bbox=(10, 20 * i, 110, 20 * i + 18), role=role, text=text, resource_id=None,
                   clickable=clickable, focusable=focusable, state=state)


ELEMENTS = [_el(3, "Count: 0", "label"), _el(7, "Add one"), _el(12, "Name", "text", clickable=False, focusable=True),
            _el(15, "Greet"), _el(21, "File", "menu"), _el(22, "Edit", "menu")]


def _screen(elements: list[Element] = ELEMENTS) -> GuiScreen:
    return GuiScreen.of(Observation(screenshot=None, elements=list(elements)), 50)


def _choices(request: str = 'Type "Ada Lovelace" into the name field and greet her', **kw) -> GuiChoices:  # type: ignore[no-untyped-def]
    return GuiChoices.build(_screen(), request, **kw)


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer

    from agentlab.llm.embedded import converted_smollm2_dir

    return AutoTokenizer.from_pretrained(converted_smollm2_dir())


def _walk(grammar, tokenizer, rng: random.Random, scores_fn=None, limit: int = 80) -> str:  # type: ignore[no-untyped-def]
    from tests.toolkits.test_toolkits import _walk as walk

    return walk(grammar, tokenizer, rng, limit, scores_fn=scores_fn)


def test_every_decoded_reply_is_a_valid_action_on_a_visible_mark(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Random scores (any model's worst case): every walk parses, aims at a mark on screen, types a
    phrase of the request, presses a listed key; the field is the only place text can go."""
    import torch

    choices = _choices()
    grammar = choices.grammar(allow_end=True)
    seen: set[str] = set()
    gen = torch.Generator().manual_seed(0)

    def scores():  # type: ignore[no-untyped-def]
        return 20 * torch.rand((1, len(tokenizer)), generator=gen)  # wide enough to overrule the priors

    for seed in range(60):
        text = _walk(grammar, tokenizer, random.Random(seed), scores_fn=scores)
        call = parse_gui_reply(text, choices)
        seen.add(call.name)
        if "element" in call.args:
            assert call.args["element"] in {3, 7, 12, 15, 21, 22}
        if call.name == "type":
            assert call.args["element"] == 12  # the one editable mark
            assert call.args["text"].lower() in 'type "ada lovelace" into the name field and greet her'
        if call.name == "key":
            assert call.args["combo"] in DESKTOP_KEYS
        if call.name == "select":
            assert call.args["path"] in ("File", "Edit")
    assert {"click", "type", "key", "scroll"} <= seen


def test_only_visible_marks_and_no_placeholder_can_be_decoded(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A model that wants element 99 (not on screen), or the prompt's placeholder, cannot write it."""
    grammar = _choices().grammar()
    for favour in ("click(99)", "click(<3>)", PLACEHOLDER, "FINISH", "Observation: the screen shows"):
        liked = list(set(tokenizer.encode(favour, add_special_tokens=False)))

        def scores():  # type: ignore[no-untyped-def]
            import torch

            out = torch.zeros((1, len(tokenizer)))
            out[0, liked] = 5.0
            return out

        text = _walk(grammar, tokenizer, random.Random(0), scores_fn=scores)
        assert "99" not in text and "<" not in text and "Observation" not in text, text
        parse_gui_reply(text, _choices())  # parses: a valid action whatever the model preferred
    regex = re.compile(grammar.regex())
    assert regex.fullmatch("click(7)\n") and regex.fullmatch("type(12, 'Ada Lovelace')\n")
    assert not regex.fullmatch("click(99)\n") and not regex.fullmatch(PLACEHOLDER + "\n")
    assert not regex.fullmatch("type(7, 'Ada Lovelace')\n")  # "Add one" is a button, not a field


def test_the_priors_prefer_clicks_and_the_mark_the_request_names(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A model with no preference (flat scores) clicks the mark whose words the request says;
    the priors only weigh, every mark stays decodable (tested above)."""
    import torch

    choices = GuiChoices.build(_screen(), "Add one to the counter")
    prior = dict(choices.element_prior)
    assert max(prior, key=prior.__getitem__) == 7 and prior[3] > prior[15]  # "Add one", then "Count: 0"
    text = _walk(choices.grammar(allow_end=False), tokenizer, random.Random(0),
                 scores_fn=lambda: torch.zeros((1, len(tokenizer))))
    assert parse_gui_reply(text, choices) == GuiCall("click", {"element": 7})


def test_text_slots_come_from_the_request_and_end_calls_wait_for_a_first_step() -> None:
    choices = _choices('Open https://example.org/a?b=1 and save it as "notes 2024.txt" in ~/Documents/work')
    texts = choices.texts or ()
    assert "https://example.org/a?b=1" in texts and "notes 2024.txt" in texts and "~/Documents/work" in texts
    first = choices.grammar(allow_end=False)
    assert "done" not in first.tools and "fail" not in first.tools
    assert {"done", "fail"} <= set(choices.grammar().tools)
    assert first.tools["type"][1] == tuple(repr(t) for t in texts)
    # a request with nothing to type offers free text (quoted), not a made-up candidate
    assert GuiChoices.build(_screen(), "please do it now").texts is None
    # no menu on screen: select() is not offered at all
    plain = GuiChoices.build(_screen([e for e in ELEMENTS if e.role != "menu"]), "Greet")
    assert "select" not in plain.grammar().tools


def test_endpoint_tools_carry_the_same_candidates_as_enums() -> None:
    choices = _choices()
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in choices.tools(allow_end=False)}
    assert set(tools) == {"click", "type", "key", "scroll", "select"}
    assert tools["click"]["properties"]["element"] == {"type": "integer", "enum": [3, 7, 12, 15, 21, 22]}
    assert tools["type"]["properties"]["element"]["enum"] == [12]
    assert tools["scroll"]["properties"]["direction"]["enum"] == ["up", "down", "left", "right"]
    assert tools["type"]["required"] == ["element", "text"]
    # an endpoint's function call comes back as a call line (openai_compat.call_line) and parses
    from agentlab.llm.openai_compat import call_line

    assert parse_gui_reply(call_line("type", '{"element": 12, "text": "Ada"}'), choices) == GuiCall(
        "type", {"element": 12, "text": "Ada"})


@pytest.mark.parametrize("reply, problem", [
    (PLACEHOLDER, "no action call"),
    ("click(99)", "one of the numbers on screen"),
    ("scroll(7, 'sideways')", "direction must be one of"),
    ("key('ctrl+alt+banana')", "combo must be one of"),
    ("select('Tools > Options')", "start at a menu on screen"),
    ("", "empty reply"),
])
def test_unusable_replies_say_why(reply: str, problem: str) -> None:
    with pytest.raises(ActionParseError, match=problem):
        parse_gui_reply(reply, _choices())


def test_a_free_models_prose_and_the_raw_names_are_understood() -> None:
    c = _choices()
    assert parse_gui_reply("Thought: press it\nAction: tap(7)", c) == GuiCall("click", {"element": 7})
    assert parse_gui_reply('hotkey("ctrl", "s")', c) == GuiCall("key", {"combo": "ctrl+s"})
    assert parse_gui_reply('text("Ada")', c) == GuiCall("type", {"element": 12, "text": "Ada"})
    assert parse_gui_reply("FINISH", c) == GuiCall("done")
    assert parse_gui_reply("fail()", c) == GuiCall("fail", {"reason": ""})
    assert parse_gui_reply("select('file > Save As')", c).args["path"] == "file > Save As"


def test_calls_map_onto_the_desktop_and_phone_actions() -> None:
    s = _screen()
    assert expand(GuiCall("click", {"element": 7}), s, phone=False) == [Click(element=7)]
    assert expand(GuiCall("type", {"element": 12, "text": "Ada"}), s, phone=False) == [Type("Ada", element=12)]
    assert expand(GuiCall("key", {"combo": "ctrl+s"}), s, phone=False) == [Hotkey("ctrl", "s")]
    assert expand(GuiCall("scroll", {"element": 7, "direction": "down"}), s, phone=False) == [
        Scroll("down", 3, element=7)]
    assert expand(GuiCall("done"), s, phone=False) == [Stop()]
    assert expand(GuiCall("type", {"element": 12, "text": "Ada"}), s, phone=True) == [Tap(12), Text("Ada")]
    assert expand(GuiCall("scroll", {"element": 7, "direction": "down"}), s, phone=True) == [Swipe(7, "up", "medium")]
    assert expand(GuiCall("key", {"combo": "back"}), s, phone=True) == [Back()]
    with pytest.raises(InvalidActionError, match="no element 99"):
        expand(GuiCall("click", {"element": 99}), s, phone=False)


def test_ocr_marks_are_clicked_at_their_centre() -> None:
    ocr_mark = Element(id=1, bbox=(100, 40, 160, 60), role="text (OCR)", text="Save", resource_id=None, clickable=False)
    s = GuiScreen(Observation(None, []), [ocr_mark], ocr=True)
    assert expand(GuiCall("click", {"element": 1}), s, phone=False) == [Click(x=130, y=50)]
    assert expand(GuiCall("type", {"element": 1, "text": "x"}), s, phone=False) == [Click(x=130, y=50), Type("x")]


@settings(max_examples=40, deadline=None)
@given(ids=st.lists(st.integers(1, 300), min_size=1, max_size=30, unique=True), pick=st.integers(0, 1000))
def test_any_visible_mark_round_trips_and_any_other_number_is_refused(ids: list[int], pick: int) -> None:
    els = [_el(i, f"b{i}") for i in ids]
    choices = GuiChoices.build(_screen(els), "press it")
    n = ids[pick % len(ids)]
    assert parse_gui_reply(GuiCall("click", {"element": n}).render(), choices) == GuiCall("click", {"element": n})
    other = max(ids) + 1
    with pytest.raises(ActionParseError):
        parse_gui_reply(f"click({other})", choices)
