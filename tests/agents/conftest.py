"""Agent tests use the fake adb server (agentlab.envs.testing), plus a scripted backend."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")

from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice  # noqa: E402
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams  # noqa: E402


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
def fake_adb():
    with FakeAdbServer(FakeDevice()) as server:
        yield server


@pytest.fixture
def scripted():
    return ScriptedBackend
