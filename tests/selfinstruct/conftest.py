"""Fixtures for self-instruct tests: the exact fast BERTScore on the real MiniLM, and a
scripted generator backend for the behaviours a real model cannot be made to show on demand
(nothing usable for k rounds)."""

from __future__ import annotations

import pytest

from agentlab.llm.base import LLMBackend, SamplingParams


@pytest.fixture(scope="session")
def fast(scorer):  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.fastscore import FastBertScore

    return FastBertScore(scorer)


class ScriptedBackend(LLMBackend):
    """Returns the next scripted text for every requested sequence; records the prompts."""

    model_id = "scripted"

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)
        self.calls = 0
        self.prompts: list[str] = []

    def _next(self) -> str:
        text = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return text

    def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
        params = params or SamplingParams()
        return [self._next() for _ in range(params.n)]

    def complete(self, prompt, params=None):  # type: ignore[no-untyped-def]
        self.prompts.append(prompt)
        params = params or SamplingParams()
        return [self._next() for _ in range(params.n)]
