"""HashManager parsing, the one-retry protocol of the prompt-only ablation (scripted backend for exact outputs),
the constrained default, plus the real model."""

from __future__ import annotations

import pytest

from agentlab.llm.base import ChatMessage, LLMBackend
from agentlab.metaagent.manager import HashManager, parse_plan


class Scripted(LLMBackend):
    """Replies from a fixed list and records every conversation it was shown."""

    model_id = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[list[ChatMessage]] = []

    def chat(self, messages, params=None):  # type: ignore[override]
        self.seen.append(list(messages))
        return [self.replies.pop(0)]

    def complete(self, prompt, params=None):  # type: ignore[override]
        raise AssertionError("manager must use chat")


NAMES = ["SheetAgent", "GoogleDrive", "MailAgent"]


def test_parse_good_plan_with_missing_closing_hashes() -> None:
    out = parse_plan("Sure!\n###SheetAgent: sum column B###\n### googledrive : upload it\n", NAMES)
    assert out.problems == []
    assert [(s.agent, s.subtask) for s in out.steps] == [("SheetAgent", "sum column B"), ("GoogleDrive", "upload it")]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("###Photoshop: crop###", "unknown agent 'Photoshop'"),
        ("###SheetAgent: a###\n###SheetAgent: b###", "two subtasks in a row"),
        ("I would use the spreadsheet agent.", "no line of the form"),
        ("###MailAgent:###", "empty subtask"),
    ],
)
def test_parse_reports_each_problem(text: str, fragment: str) -> None:
    assert any(fragment in p for p in parse_plan(text, NAMES).problems)


def test_retry_fixes_answer(pool) -> None:
    docs = [pool.get(n) for n in NAMES]
    be = Scripted(["###Excel: sum###", "###SheetAgent: sum B###\n###MailAgent: send it###"])
    res = HashManager(be, constrained=False).plan("Sum column B and mail the file to Bob", docs)
    assert res.error is None and res.agent == "SheetAgent"
    assert [s.agent for s in res.plan] == ["SheetAgent", "MailAgent"]
    retry_msg = be.seen[1][-1].content
    assert "unknown agent 'Excel'" in retry_msg and "SheetAgent, GoogleDrive, MailAgent" in retry_msg
    # Only the chosen documents are in the prompt.
    prompt = be.seen[0][0].content
    assert "Agent: GoogleDrive" in prompt and "Agent: CalcAgent" not in prompt


def test_second_failure_is_reported_not_dropped(pool) -> None:
    docs = [pool.get(n) for n in NAMES]
    be = Scripted(["garbage", "###SheetAgent: a###\n###SheetAgent: b###"])
    res = HashManager(be, constrained=False).plan("task", docs)
    assert res.agent is None and res.plan == []
    assert "no line of the form" in res.error and "two subtasks in a row" in res.error


def test_state_is_rendered_into_prompt(pool) -> None:
    be = Scripted(["###SheetAgent: x###"])
    HashManager(be, constrained=False).plan("task", [pool.get("SheetAgent")], state="Calc window with sales.xlsx open")
    assert "Calc window with sales.xlsx open" in be.seen[0][0].content


def test_constrained_is_the_default_and_needs_a_grammar_backend(pool) -> None:
    """A manager made without saying so decodes inside the plan grammar; a backend that cannot
    is refused up front with the way out (--unconstrained), not asked by prompt behind the user's back."""
    from agentlab.errors import ConfigError

    with pytest.raises(ConfigError, match="--unconstrained"):
        HashManager(Scripted([]))
    assert HashManager(Scripted([]), constrained=False).settings()["constrained"] is False


class GrammarRecorder(Scripted):
    """A backend that declares grammar support and records the grammar each call carried."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.grammars: list[object] = []

    @property
    def capabilities(self):  # type: ignore[override]
        import dataclasses

        return dataclasses.replace(super().capabilities, plan_grammar=True)

    def chat(self, messages, params=None):  # type: ignore[override]
        self.grammars.append(params.grammar if params else None)
        return super().chat(messages, params)


def test_default_manager_sends_the_top_k_grammar(pool) -> None:
    be = GrammarRecorder(["###SheetAgent: sum B###\n###MailAgent: send it###\n"])
    res = HashManager(be).plan("Sum column B and mail the file to Bob", [pool.get(n) for n in NAMES])
    (grammar,) = be.grammars
    assert grammar is not None and grammar.agents == tuple(NAMES) and grammar.max_steps == 3
    assert [s.agent for s in res.plan] == ["SheetAgent", "MailAgent"]


@pytest.mark.slow
def test_real_model_gives_plan_or_clear_failure(backend, pool) -> None:
    docs = [pool.get(n) for n in NAMES[:2]]
    res = HashManager(backend, max_new_tokens=24, max_demos=1, constrained=False).plan("Compute totals in sales.xlsx and upload it to Drive", docs)
    if res.agent is None:
        assert res.error and "retry" in res.error
    else:
        assert res.plan and all(s.agent in NAMES[:2] for s in res.plan)


@pytest.mark.slow
def test_real_model_constrained_plan_names_only_candidates(backend, pool) -> None:
    docs = [pool.get(n) for n in NAMES]
    res = HashManager(backend, max_new_tokens=64, max_demos=1).plan("Compute totals in sales.xlsx and email them to Bob", docs)
    assert res.error is None and 1 <= len(res.plan) <= 3
    assert all(s.agent in NAMES and s.subtask for s in res.plan)
    assert all(a.agent != b.agent for a, b in zip(res.plan, res.plan[1:]))
