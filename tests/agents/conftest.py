"""Agent tests drive the fake adb server (the root conftest's ``fake_adb``) with a scripted backend."""

from __future__ import annotations

import pytest

from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams


class ScriptedBackend(LLMBackend):
    """TEST DOUBLE, not a model: replays canned replies in order (for deterministic branch
    tests of the agent loop). The end-to-end tests use the real embedded SmolLM2 instead."""

    model_id = "scripted-test-double"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[list[ChatMessage]] = []
        self.params: list[SamplingParams] = []

    def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
        self.prompts.append(list(messages))
        self.params.append(params or SamplingParams())
        if not self.replies:
            raise AssertionError("scripted backend ran out of replies")
        return [self.replies.pop(0)]

    def complete(self, prompt, params=None):  # type: ignore[no-untyped-def]
        raise AssertionError("the agent only uses chat()")


@pytest.fixture
def scripted():
    return ScriptedBackend
