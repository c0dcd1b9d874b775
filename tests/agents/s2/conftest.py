"""Agent S2 tests: a scripted backend (a test double) driving the runner on real apps under Xvfb."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace


import pytest

from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams
from agentlab.pool.document import AgentDocument, Demonstration

#: a canned reply, or a function computing it from the messages sent (what a model reading the screen would say)
Reply = str | Callable[[list[ChatMessage]], str]


# TEST DOUBLE
class S2Scripted(LLMBackend):
    """TEST DOUBLE, not a model: replays canned replies in order, keeps what it was sent, and
    says whether it takes images (``images=True`` stands in for a vision-language endpoint)."""

    model_id = "scripted-test-double"

    def __init__(self, replies: list[Reply], *, images: bool = False) -> None:
        self.replies = list(replies)
        self.images = images
        self.prompts: list[list[ChatMessage]] = []
        self.params: list[SamplingParams] = []
        self.tokens_in = 0
        self.tokens_out = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(images=self.images)

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self.prompts.append(list(messages))
        self.params.append(params or SamplingParams())
        if not self.replies:
            raise AssertionError("scripted backend ran out of replies")
        reply = self.replies.pop(0)
        text = reply(messages) if callable(reply) else reply
        self.tokens_in += sum(len(m.content.split()) for m in messages)
        self.tokens_out += len(text.split())
        return [text]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("Agent S2 only uses chat()")

    def roles(self) -> list[str]:
        """Which role each call was asked as (from the system prompt)."""
        return [m[0].content.split("You are the ", 1)[1].split(" of ", 1)[0] for m in self.prompts]


def make_document(runner_options: dict | None = None) -> AgentDocument:
    """A small desktop GUI document whose runner is ``s2``."""
    return AgentDocument(
        name="AgentS2", platform="desktop", interface="GUI", modality="multi", base_model="closed", domain="os",
        supports_extension=True, applications="any desktop application",
        capabilities="plans subgoals and acts through the GUI", limitations="slow",
        demonstrations=(Demonstration("Press Add one twice."),), runner="s2",
        runner_options=dict(runner_options or {}))


def plan(*subgoals: str) -> str:
    return "Plan:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(subgoals, 1))


def act(action: str, thought: str = "next step") -> str:
    return f"Thought: {thought}\nAction: {action}"


@pytest.fixture
def s2() -> SimpleNamespace:
    """The helpers: ``Backend`` (the test double), ``doc(options)``, ``plan(*subgoals)``, ``act(call)``."""
    return SimpleNamespace(Backend=S2Scripted, doc=make_document, plan=plan, act=act)
