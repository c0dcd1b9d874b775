"""Constrained decoding on llguidance: the grammars compile, a batch keeps every row inside its
grammar, the priors are a bias whose sum along a reply is the prior of what was chosen, and a
server running the same engine gets the very text a local model decodes under."""

from __future__ import annotations

import math
import random
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.errors import ConfigError
from agentlab.llm.base import ChatMessage, SamplingParams
from agentlab.llm.config import LLMConfig
from agentlab.llm.guidance import GrammarProcessor, check_grammar, lit
from agentlab.llm.openai_compat import OpenAICompatBackend
from agentlab.llm.plan_grammar import PlanGrammar
from agentlab.toolkits.grammar import CallGrammar


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from agentlab.llm.embedded import converted_smollm2_dir

    return AutoTokenizer.from_pretrained(converted_smollm2_dir())


def _decode(proc: GrammarProcessor, tokenizer, scores_fn, rows: int = 1, limit: int = 80) -> list[str]:
    """Greedy decoding of ``rows`` sequences under ``proc``; finished rows are padded with EOS as
    ``generate`` does."""
    eos = tokenizer.eos_token_id
    ids = torch.full((rows, 1), eos)
    done = [False] * rows
    for _ in range(limit):
        nxt = proc(ids, scores_fn(rows)).argmax(dim=-1)
        for i in range(rows):
            if done[i]:
                assert int(nxt[i]) == eos  # a finished row may only repeat EOS
            done[i] = done[i] or int(nxt[i]) == eos
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        if all(done):
            break
    return [tokenizer.decode([t for t in row[1:].tolist() if t != eos]) for row in ids]


def _pushing(tokenizer, word: str, seed: int):
    """Random scores with ``word``'s tokens pushed far above everything (a model that wants it everywhere)."""
    rng = random.Random(seed)
    ids = tokenizer.encode(word, add_special_tokens=False)

    def scores(rows: int) -> torch.Tensor:
        s = torch.rand((rows, len(tokenizer))) * rng.random()
        s[:, ids] = 50.0
        return s
    return scores


GRAMMAR = CallGrammar({"click": (("1", "2", "3"),), "type": (("1", "2"), None), "done": (), "fail": (None,)},
                      max_calls=2, max_text_tokens=5, done_first=False)


def test_a_batch_keeps_every_row_inside_the_grammar(tokenizer) -> None:
    gen = torch.Generator().manual_seed(0)
    proc = GRAMMAR.logits_processor(tokenizer)
    texts = _decode(proc, tokenizer, lambda rows: torch.rand((rows, len(tokenizer)), generator=gen), rows=4)
    for text in texts:
        assert re.fullmatch(GRAMMAR.regex(), text) and not text.startswith("done"), text


def test_the_priors_sum_to_the_chosen_calls_log_prior(tokenizer) -> None:
    """Flat scores: the reply is decided by the priors alone, and the biases added along it sum to
    log p(name) + log p(element) (normalised over what the grammar allows first)."""
    names = {"click": 0.7, "type": 0.2, "fail": 0.1}
    elems = {"1": 0.1, "2": 0.2, "3": 0.7}
    g = CallGrammar(GRAMMAR.tools, max_calls=1, max_text_tokens=5, done_first=False,
                    name_prior=tuple((n, math.log(p)) for n, p in names.items()),
                    arg_prior=(("click", 0, tuple((c, math.log(p)) for c, p in elems.items())),))
    proc = g.logits_processor(tokenizer)
    total = 0.0
    eos = tokenizer.eos_token_id
    ids = torch.full((1, 1), eos)
    for _ in range(20):
        out = proc(ids, torch.zeros((1, len(tokenizer))))
        tok = int(out.argmax())
        total += float(out[0, tok])
        if tok == eos:
            break
        ids = torch.cat([ids, torch.tensor([[tok]])], dim=1)
    assert tokenizer.decode(ids[0, 1:]) == "click(3)\n"
    assert total == pytest.approx(math.log(0.7) + math.log(0.7), abs=1e-4)


def test_a_confident_element_prior_overrides_the_models_preference(tokenizer) -> None:
    g = CallGrammar({"click": (("1", "2", "3"),)}, max_calls=1, done_first=False,
                    arg_prior=(("click", 0, (("1", math.log(0.001)), ("2", math.log(0.001)), ("3", math.log(0.998)))),))
    one = tokenizer.encode("1", add_special_tokens=False)

    def scores(rows: int) -> torch.Tensor:
        s = torch.zeros((rows, len(tokenizer)))
        s[:, one] = 3.0  # the "model" prefers element 1, but not by e^3 against the prior's ~1000:1
        return s

    assert _decode(g.logits_processor(tokenizer), tokenizer, scores) == ["click(3)\n"]
    plain = CallGrammar(g.tools, max_calls=1, done_first=False)
    assert _decode(plain.logits_processor(tokenizer), tokenizer, scores) == ["click(1)\n"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.text(alphabet="ab'\"\\é ,()\n#", min_size=1, max_size=6), min_size=1, max_size=4, unique=True),
       st.integers(1, 3))
def test_any_candidate_text_compiles_and_is_offered_verbatim(tokenizer, cands, calls) -> None:
    """Candidates with quotes, backslashes, commas, line breaks or non-ASCII letters still make a
    grammar that compiles, and a walk produces one of them exactly."""
    g = CallGrammar({"pick": (tuple(cands),), "done": (), "fail": (None,)}, max_calls=calls, done_first=False)
    check_grammar(g.lark())
    gen = torch.Generator().manual_seed(len(cands))
    text = _decode(g.logits_processor(tokenizer), tokenizer,
                   lambda rows: torch.rand((rows, len(tokenizer)), generator=gen), limit=60)[0]
    assert text.startswith("pick(") or text.startswith("fail('"), text
    if text.startswith("pick("):
        assert any(text.startswith(f"pick({c})\n") for c in cands), (text, cands)


def test_a_broken_grammar_is_one_config_line(tokenizer) -> None:
    with pytest.raises(ConfigError, match="grammar does not compile"):
        check_grammar("start: nowhere\n")
    proc = GrammarProcessor(tokenizer, "start: " + lit("a") + " undefined_rule\n")
    with pytest.raises(ConfigError, match="grammar does not compile"):
        proc(torch.zeros((1, 1), dtype=torch.long), torch.zeros((1, len(tokenizer))))


def test_an_llguidance_server_gets_the_same_lark_text(chat_server, tokenizer) -> None:
    url = chat_server(lambda body, k: "###SheetAgent: sum it###\n" if k == 0 else "click(2)\n")
    server = OpenAICompatBackend(LLMConfig(kind="openai", base_url=url, model="m", guided_grammar=True))
    assert server.capabilities.plan_grammar
    plan = PlanGrammar(("SheetAgent", "MailAgent"), max_steps=2)
    server.chat([ChatMessage("user", "plan")], SamplingParams(grammar=plan))
    assert chat_server.requests[-1]["guided_grammar"] == plan.lark()
    assert "guided_regex" not in chat_server.requests[-1]
    server.chat([ChatMessage("user", "act")], SamplingParams(grammar=GRAMMAR))
    assert chat_server.requests[-1]["guided_grammar"] == GRAMMAR.lark() == GRAMMAR.logits_processor(tokenizer).lark


def test_plan_grammar_never_repeats_an_agent_even_when_the_scores_want_it(tokenizer) -> None:
    g = PlanGrammar(("SheetAgent", "MailAgent", "WordAgent"), max_steps=3, min_steps=3, max_subtask_tokens=3)
    text = _decode(g.logits_processor(tokenizer), tokenizer, _pushing(tokenizer, "Sheet", 1), limit=60)[0]
    agents = [line.split(":")[0].strip("#") for line in text.splitlines()]
    assert len(agents) == 3 and all(a != b for a, b in zip(agents, agents[1:])), text
    assert agents[0] == "SheetAgent" and agents[2] == "SheetAgent", text



def test_a_swap_never_names_the_same_thing_twice_even_when_the_scores_want_it(tokenizer) -> None:
    """A parameter marked ``differs`` (a swap's second thing) is decoded with the one before it as
    one choice among the pairs that differ: scores that push 'oven' everywhere still give two
    different paragraphs, and a tool without such a parameter may repeat a value."""
    from pathlib import Path

    from agentlab.toolkits import load_toolkit
    from agentlab.toolkits.slots import SlotValues

    values = SlotValues(files=["cake.docx"], spans=["oven", "whisking", "flour"], texts=["oven on", "whisking", "flour"],
                        request="swap the oven and whisking steps")
    g = CallGrammar.build(load_toolkit("documents"), values, names=["swap_paragraphs"], max_calls=1, allow_fail=False,
                          allow_done=False)
    assert ("swap_paragraphs", 2) in g.differs
    text = _decode(g.logits_processor(tokenizer), tokenizer, _pushing(tokenizer, "oven", 2), limit=40)[0]
    m = re.fullmatch(r"swap_paragraphs\('cake\.docx', '(\w+)', '(\w+)'\)\n(done\(\)\n)?", text)
    assert m and m.group(1) != m.group(2) and "oven" in (m.group(1), m.group(2)), text
    plain = CallGrammar.build(load_toolkit("documents"), values, names=["set_alignment"], max_calls=1)
    assert plain.differs == () and Path("cake.docx").suffix == ".docx"


def test_a_call_that_already_ran_cannot_be_decoded_again_but_its_neighbours_can(tokenizer) -> None:
    """Refused and asked again, a small model wrote the same call again and again (sampled). A
    call the episode already ran is left out of the grammar word for word: scores pushing its
    values everywhere give another tuple, and a tool whose every tuple ran is gone."""
    from agentlab.toolkits.grammar import _excluding

    tools: dict = {"set": (("'font'", "'tabs'"), ("'15'", "'2'")), "done": (), "fail": (None,)}
    g = CallGrammar(tools, max_calls=1, banned=(("set", ("'tabs'", "'2'")),))
    for seed in range(3):
        pushed = _pushing(tokenizer, "set('tabs', '2')", seed)
        text = _decode(g.logits_processor(tokenizer), tokenizer, pushed, limit=30)[0]
        assert text.startswith("set(") or text.startswith(("done", "fail")), text
        assert text != "set('tabs', '2')\n", text
    free = CallGrammar(tools, max_calls=1)
    assert _decode(free.logits_processor(tokenizer), tokenizer, _pushing(tokenizer, "set('tabs', '2')", 0), limit=30)[0] \
        == "set('tabs', '2')\n"
    every = tuple(("set", (a, b)) for a in tools["set"][0] for b in tools["set"][1])
    assert "set(" not in CallGrammar(tools, banned=every).lark()
    assert _excluding([("'a'",)], [("'a'",)]) is None and _excluding([], []) == ""


def test_build_writes_the_calls_to_exclude_as_the_candidates_do() -> None:
    from agentlab.toolkits import load_toolkit
    from agentlab.toolkits.slots import SlotValues

    values = SlotValues(files=["cake.docx"], spans=["oven", "flour"], texts=["oven on", "flour"], request="make oven bold")
    kit = load_toolkit("documents")
    g = CallGrammar.build(kit, values, names=["set_font"], exclude=[("set_font", ("cake.docx", "oven", True, False, False)),
                                                                    ("set_font", ("cake.docx", "not offered", True, False, False)),
                                                                    ("done", ())])
    assert g.banned == (("set_font", ("'cake.docx'", "'oven'", "True", "False", "False")),)


def test_a_step_whose_every_call_already_failed_may_still_give_up(tokenizer) -> None:
    """A step for one ask (no done() or fail() first) whose every call already failed had no way
    to start: a harness error in the executed Table 2. With nothing callable left, the reply may
    open with fail(...) or done(), as when no tool can be called at all."""
    tools: dict = {"set": (("'a'",),), "done": (), "fail": (None,)}
    g = CallGrammar(tools, max_calls=1, done_first=False, fail_first=False, banned=(("set", ("'a'",)),))
    text = _decode(g.logits_processor(tokenizer), tokenizer, _pushing(tokenizer, "set('a')", 0), limit=30)[0]
    assert text.startswith(("fail(", "done()")), text
