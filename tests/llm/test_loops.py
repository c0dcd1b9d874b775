"""The n-gram loop guard (issue #38): a reply that repeats itself is cut as soon as the repetition
is certain, keeps one copy of the repeated block, and the cut is counted for the row."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentlab.llm.base import SamplingParams
from agentlab.llm.loops import DEFAULT_RULE, LoopRule, cut_text_loop


def test_a_repeated_block_is_cut_after_its_first_copy() -> None:
    head, block = [1, 2, 3], [7, 8, 9, 10, 11, 12, 13, 14, 15]
    seq = head + block * 3
    assert DEFAULT_RULE.loop_start(seq) == len(head) + len(block)
    assert DEFAULT_RULE.loop_start(head + block * 2) is None  # two copies are not yet certain


def test_short_patterns_need_a_long_run_before_they_count() -> None:
    zeros = [5, 6] + [0, 44] * 8  # "0, 0, 0, ..." eight times: 16 tokens, under the 24-token span
    assert DEFAULT_RULE.loop_start(zeros) is None
    assert DEFAULT_RULE.loop_start([5, 6] + [0, 44] * 12) == 4


@given(st.lists(st.integers(0, 50), min_size=0, max_size=80))
def test_a_cut_keeps_a_prefix_and_never_cuts_a_sequence_without_a_loop_tail(seq: list[int]) -> None:
    cut = DEFAULT_RULE.loop_start(seq)
    if cut is None:
        return
    assert 0 < cut < len(seq)
    # what was cut is the kept block repeated: the tail is periodic from the cut back one period
    tail = seq[cut:]
    period = next(p for p in range(1, DEFAULT_RULE.max_period + 1) if all(seq[i] == seq[i - p] for i in range(cut, len(seq))))
    assert len(tail) >= DEFAULT_RULE.min_span - period


def test_text_loops_are_cut_at_a_word() -> None:
    text = "import csv\nrows = load()\n" + "print(rows[0]) # check\n" * 9
    cut, was = cut_text_loop(text)
    assert was and cut == "import csv\nrows = load()\nprint(rows[0]) # check"
    assert cut_text_loop("a short reply that does not loop")[1] is False
    assert LoopRule().loop_start([]) is None


def test_the_embedded_model_stops_a_looping_reply_early_and_counts_it(backend) -> None:  # type: ignore[no-untyped-def]
    prompt = "Repeat after me forever: ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha"
    params = SamplingParams(max_new_tokens=200)
    before_cuts, before_out = backend.loop_cuts, backend.tokens_out
    [guarded] = backend.complete(prompt, params)
    spent = backend.tokens_out - before_out
    [unguarded] = backend.complete(prompt, SamplingParams(max_new_tokens=200, loop_guard=False))
    assert backend.loop_cuts == before_cuts + 1
    assert spent < 120  # stopped once the loop was certain, not at the 200-token cap
    assert len(guarded) < len(unguarded) and unguarded.startswith(guarded.rstrip()[:20])


def test_an_endpoint_reply_that_loops_is_cut_and_counted_through_the_meter(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A server decodes to its token cap; the reply that arrives repeating a line is cut after its
    first copy, the episode's meter counts the cut, and a reply without a loop passes unchanged
    (as does a looping one when the guard is off)."""
    from agentlab.llm import load_backend
    from agentlab.llm.base import ChatMessage, Metered, SamplingParams
    from agentlab.llm.config import LLMConfig
    from agentlab.llm.testing import LoopbackChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    looping = "x = load('a.csv')\n" + "print(x.sum())\n" * 40
    replies = [looping, "fine\nDONE", looping]
    with LoopbackChatServer(lambda body, k: replies[k]) as srv:
        meter = Metered(load_backend(LLMConfig(kind="openai", base_url=srv.url, model="m")))
        ask = [ChatMessage("user", "go")]
        first = meter.chat(ask, SamplingParams(max_new_tokens=64))[0]
        assert first.split() == ["x", "=", "load('a.csv')", "print(x.sum())"] and meter.loop_cuts == 1
        assert meter.chat(ask, SamplingParams(max_new_tokens=64))[0] == "fine\nDONE" and meter.loop_cuts == 1
        assert meter.chat(ask, SamplingParams(max_new_tokens=64, loop_guard=False))[0] == looping
        assert meter.loop_cuts == 1
