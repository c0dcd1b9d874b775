"""Constrained plan decoding: the real embedded model writes only well-formed plans; servers get a
regex when configured for it; every other backend refuses with one line."""

from __future__ import annotations

import re

import pytest
import torch

from agentlab.errors import ConfigError
from agentlab.llm.base import ChatMessage, SamplingParams
from agentlab.llm.config import LLMConfig
from agentlab.llm.openai_compat import OpenAICompatBackend
from agentlab.llm.plan_grammar import PlanGrammar
from agentlab.metaagent.manager import HashManager, parse_plan

NAMES = ("SheetAgent", "MailAgent", "WordAgent")
TASK = "Compute the total of column B in sales.xlsx, then email the result to Bob."


def test_the_embedded_model_writes_a_well_formed_plan(backend) -> None:
    grammar = PlanGrammar(NAMES, max_steps=2, max_subtask_tokens=8)
    prompt = f"Agents: {', '.join(NAMES)}. Split the task into subtasks, one line each as ###Agent: subtask###.\nTask: {TASK}"
    text = backend.chat([ChatMessage("user", prompt)], SamplingParams(max_new_tokens=48, grammar=grammar))[0]
    parsed = parse_plan(text, list(NAMES))
    assert parsed.problems == [] and 1 <= len(parsed.steps) <= 2, text
    # nothing outside the grammar, EOS right after the last step (the length bound is the token cap below)
    assert re.fullmatch(r"(###(SheetAgent|MailAgent|WordAgent):[^#\n]+###\n){1,2}", text), text
    assert all(a.agent != b.agent for a, b in zip(parsed.steps, parsed.steps[1:]))
    assert all(0 < len(backend.tokenizer.encode(s.subtask)) <= 9 for s in parsed.steps)


def test_processor_forbids_the_same_agent_twice_and_stops_at_max_steps(backend) -> None:
    """Scores that always prefer SheetAgent's tokens: the second step must name another agent."""
    tok = backend.tokenizer
    grammar = PlanGrammar(NAMES, max_steps=2, min_steps=2, max_subtask_tokens=2)
    proc = grammar.logits_processor(tok)
    prefer = tok.encode("Sheet", add_special_tokens=False) + tok.encode(" total", add_special_tokens=False)
    ids = torch.tensor([[1, 2, 3]])
    for _ in range(40):
        scores = torch.zeros(1, len(tok))
        scores[0, prefer] = 10.0
        nxt = int(proc(ids, scores).argmax())
        ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
        if nxt == tok.eos_token_id:
            break
    text = tok.decode(ids[0, 3:], skip_special_tokens=True)
    parsed = parse_plan(text, list(NAMES))
    chosen = [s.agent for s in parsed.steps]
    assert chosen[0] == "SheetAgent" and chosen[1] != "SheetAgent", text
    assert len(chosen) == 2 and ids[0, -1] == tok.eos_token_id
    assert parsed.problems == []


def test_copy_from_keeps_subtasks_to_the_tasks_words(backend) -> None:
    grammar = PlanGrammar(NAMES[:2], max_steps=2, max_subtask_tokens=10, copy_from=TASK)
    text = backend.chat([ChatMessage("user", f"Plan with ###Agent: subtask### lines.\nTask: {TASK}")],
                        SamplingParams(max_new_tokens=60, grammar=grammar))[0]
    words = set(re.findall(r"\w+", TASK.lower()))
    for step in parse_plan(text, list(NAMES)).steps:
        assert set(re.findall(r"\w+", step.subtask.lower())) <= words | {w for n in NAMES for w in [n.lower()]}, text


def test_regex_and_bad_grammars() -> None:
    g = PlanGrammar(NAMES, max_steps=2)
    assert re.fullmatch(g.regex(), "###SheetAgent: sum it###\n###MailAgent: mail it###\n")
    assert not re.fullmatch(g.regex(), "###Nobody: sum it###\n")
    assert not re.fullmatch(g.regex(), "###SheetAgent: a###\n" * 3)
    with pytest.raises(ConfigError, match="min_steps"):
        PlanGrammar(NAMES, max_steps=1, min_steps=2)
    assert PlanGrammar(("OnlyOne",), max_steps=3).max_steps == 1  # one agent, no repeats: one step


def test_servers_get_the_regex_only_when_configured(chat_server) -> None:
    url = chat_server(lambda body, k: "###SheetAgent: sum it###\n")
    grammar = PlanGrammar(NAMES)
    plain = OpenAICompatBackend(LLMConfig(kind="openai", base_url=url, model="m"))
    assert not plain.capabilities.plan_grammar
    with pytest.raises(ConfigError, match="cannot constrain decoding to the plan grammar"):
        plain.chat([ChatMessage("user", "plan")], SamplingParams(grammar=grammar))
    with pytest.raises(ConfigError, match="guided_regex"):
        HashManager(plain, constrained=True)
    guided = OpenAICompatBackend(LLMConfig(kind="openai", base_url=url, model="m", guided_regex=True))
    assert guided.capabilities.plan_grammar
    guided.chat([ChatMessage("user", "plan")], SamplingParams(grammar=grammar))
    assert chat_server.requests[-1]["guided_regex"] == grammar.regex()
    guided.chat([ChatMessage("user", "no plan")], SamplingParams())
    assert "guided_regex" not in chat_server.requests[-1]


def test_constrained_manager_plans_with_the_embedded_model(backend, pool) -> None:
    docs = [pool.get(n) for n in ("SheetAgent", "MailAgent")]
    res = HashManager(backend, constrained=True, max_plan_steps=2, max_new_tokens=60, max_demos=0,
                  max_subtask_tokens=12).plan(TASK, docs)
    assert res.agent in ("SheetAgent", "MailAgent") and res.error is None and 1 <= len(res.plan) <= 2, res.raw
