"""The ask-until-the-reply-parses loop with scripted replies: what is sent, kept and fed back."""

from __future__ import annotations

import pytest

from agentlab.dialogue.ask import ask_until_parsed
from agentlab.dialogue.templates import PromptTemplate
from agentlab.errors import ActionParseError, DeviceDisconnectedError
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams


class Scripted(LLMBackend):
    """Replies from a fixed list; records every conversation and sampling setting it was given."""

    model_id = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[list[ChatMessage], SamplingParams]] = []

    def chat(self, messages, params=None):  # type: ignore[override]
        self.seen.append((list(messages), params))
        return [self.replies.pop(0)]

    def complete(self, prompt, params=None):  # type: ignore[override]
        raise AssertionError("chat only")


def parse_int(reply: str) -> int:
    try:
        return int(reply.strip())
    except ValueError:
        raise ActionParseError(f"not a number: {reply!r}") from None


def even(n: int) -> str | None:
    return None if n % 2 == 0 else f"{n} is odd"


CORRECTION = PromptTemplate("fix", "That did not work: {problems}. Say an even {what}.\n")
GREEDY, SAMPLED = SamplingParams(temperature=0.0), SamplingParams(temperature=0.7, top_p=0.95)


def test_success_first_try() -> None:
    llm = Scripted(["4"])
    res = ask_until_parsed(llm, [ChatMessage("user", "a number?")], parse_int, checks=[even], max_attempts=3,
                           params=GREEDY, correction=CORRECTION, correction_fields={"what": "number"})
    assert res.ok and res.value == 4 and res.reply == "4"
    assert len(res.attempts) == 1 and res.problems == [[]] and len(llm.seen) == 1


def test_conversation_continues_with_the_validators_message() -> None:
    llm = Scripted(["3", "4"])
    res = ask_until_parsed(llm, [ChatMessage("user", "a number?")], parse_int, checks=[even], max_attempts=3,
                           params=GREEDY, correction=CORRECTION, correction_fields={"what": "number"})
    assert res.ok and res.value == 4
    first, second = res.attempts
    assert first.problems == ["3 is odd"] and first.value == 3 and first.reply == "3"
    sent = llm.seen[1][0]
    assert [m.role for m in sent] == ["user", "assistant", "user"] and sent[1].content == "3"
    assert sent[2].content == "That did not work: 3 is odd. Say an even number."
    assert second.messages == sent and second.ok


def test_builder_refills_the_prompt_and_params_follow_the_attempt() -> None:
    llm = Scripted(["x", "5", "6"])
    built: list[str] = []

    def build(feedback: str) -> list[ChatMessage]:
        built.append(feedback)
        return [ChatMessage("user", f"a number?{feedback}")]

    res = ask_until_parsed(llm, build, parse_int, checks=[even], max_attempts=3,
                           params=lambda i: GREEDY if i == 0 else SAMPLED,
                           correction=CORRECTION, correction_fields={"what": "one"})
    assert res.value == 6
    assert built == ["", "That did not work: not a number: 'x'. Say an even one.",
                     "That did not work: 5 is odd. Say an even one."]
    assert [p for _, p in llm.seen] == [GREEDY, SAMPLED, SAMPLED]
    assert all(len(m) == 1 for m, _ in llm.seen)  # each attempt is a fresh exchange


def test_budget_exhausted_keeps_every_attempt() -> None:
    llm = Scripted(["x", "1", "3"])
    seen: list[int] = []
    res = ask_until_parsed(llm, lambda fb: [ChatMessage("user", "n?" + fb)], parse_int, checks=[even],
                           max_attempts=3, params=GREEDY, on_attempt=lambda a: seen.append(a.index))
    assert not res.ok and res.value is None and seen == [0, 1, 2]
    assert res.problems == [["not a number: 'x'"], ["1 is odd"], ["3 is odd"]]
    assert [a.reply for a in res.attempts] == ["x", "1", "3"] and res.reply == "3"
    assert [a.value for a in res.attempts] == [None, 1, 3]
    assert llm.seen[1][0][0].content == "n?"  # no correction template: the same question again


def test_checks_stop_at_the_first_problem_and_lists_join() -> None:
    ran: list[str] = []

    def many(n: int) -> list[str]:
        ran.append("many")
        return ["too big", "too odd"] if n > 2 else []

    def acts(n: int) -> None:
        ran.append("acts")

    llm = Scripted(["3", "2"])
    res = ask_until_parsed(llm, [ChatMessage("user", "n?")], parse_int, checks=[many, acts], max_attempts=2,
                           params=GREEDY, correction=PromptTemplate("c", "{problems}"))
    assert ran == ["many", "many", "acts"] and res.value == 2
    assert res.attempts[0].problem == "too big; too odd" and llm.seen[1][0][-1].content == "too big; too odd"


def test_other_errors_propagate() -> None:
    def gone(n: int) -> None:
        raise DeviceDisconnectedError("device went away")

    with pytest.raises(DeviceDisconnectedError):
        ask_until_parsed(Scripted(["2"]), [ChatMessage("user", "n?")], parse_int, checks=[gone], max_attempts=2,
                         params=GREEDY, correction=CORRECTION, correction_fields={"what": "n"})


def test_a_check_may_raise_the_reply_error() -> None:
    from agentlab.errors import InvalidActionError

    def refuse(n: int) -> None:
        if n == 2:
            raise InvalidActionError("element 2 does not exist")

    res = ask_until_parsed(Scripted(["2", "4"]), lambda fb: [ChatMessage("user", "n?" + fb)], parse_int,
                           checks=[refuse], max_attempts=2, params=GREEDY)
    assert res.value == 4 and res.attempts[0].problems == ["element 2 does not exist"] and res.attempts[0].value == 2


def test_retry_sampling_is_greedy_first_then_samples_and_counts_calls() -> None:
    from agentlab.dialogue.ask import RetrySampling

    s = RetrySampling(max_new_tokens=32, temperature=0.0, retry_temperature=0.7, seed=5)
    first, retry = s(0), s(1)
    assert (first.temperature, first.top_p, first.seed, first.max_new_tokens) == (0.0, 1.0, 5, 32)
    assert (retry.temperature, retry.top_p, retry.seed) == (0.7, 0.95, 6)  # a retry can differ from what it replaces
    assert s.calls == 2
