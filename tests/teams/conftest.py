"""COLA tests: a scripted model (a test double) playing the planner, the reviewer and the agents."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.pool import AgentPool

#: a canned reply, or a function computing it from the messages sent
Reply = str | Callable[[list[ChatMessage]], str]

PLANNER_START = "You are the planner"
REVIEWER_START = "You review one"  # a step (cola/reviewer) or an action (cola/action_reviewer)
SCHEDULER_START = "You are the task scheduler"


def role_of(messages: list[ChatMessage]) -> str:
    """Who is asking: the COLA planner, the reviewer, or a decision agent (the code runner)."""
    first = messages[0].content
    if first.startswith(PLANNER_START):
        return "planner"
    if first.startswith(REVIEWER_START):
        return "reviewer"
    if first.startswith(SCHEDULER_START):
        return "scheduler"
    return "agent"


class TeamScript(LLMBackend):
    """TEST DOUBLE, not a model: one queue of canned replies per role; keeps every prompt per role."""

    model_id = "scripted-team-double"

    def __init__(self, planner: list[Reply], agent: list[Reply], reviewer: list[Reply] | None = None,
                 scheduler: list[Reply] | None = None) -> None:
        self.queues: dict[str, list[Reply]] = {"planner": list(planner), "agent": list(agent), "reviewer": list(reviewer or []),
                                               "scheduler": list(scheduler or [])}
        self.prompts: dict[str, list[list[ChatMessage]]] = {"planner": [], "agent": [], "reviewer": [], "scheduler": []}

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        role = role_of(messages)
        self.prompts[role].append(list(messages))
        if not self.queues[role]:
            raise AssertionError(f"scripted {role} ran out of replies")
        reply = self.queues[role].pop(0)
        return [reply(messages) if callable(reply) else reply]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("the team only uses chat()")

    def first_user_text(self, role: str, k: int) -> str:
        """The task text of the k-th conversation a role started (the agent's: its step instruction)."""
        starts = [p for p in self.prompts[role] if len(p) <= 2]
        return starts[k][-1].content


def py(code: str, end: str = "DONE") -> str:
    return f"Here is the program.\n```python\n{code.rstrip()}\n```\n{end}".rstrip()


@pytest.fixture(scope="session")
def pool() -> AgentPool:
    return AgentPool.from_dir(None)
