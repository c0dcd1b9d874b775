"""Test doubles shared by the ExecutionAcc and Table 1 studies' tests."""

from __future__ import annotations

from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.tasks.spec import ExecTask


class ReplayReference(LLMBackend):
    """TEST DOUBLE, not a model: the task's reference solution + DONE for tasks in ``solve``, else FAIL."""

    model_id = "scripted-reference-replay"

    def __init__(self, tasks: list[ExecTask], solve: set[str]) -> None:
        self.replies = {t.instruction: f"```{t.reference_solution.language}\n{t.reference_solution.code}\n```\nDONE"
                        for t in tasks if t.reference_solution is not None and t.id in solve}
        self.calls = 0

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self.calls += 1
        first = next(m.content for m in messages if m.role == "user")
        return [next((r for ins, r in self.replies.items() if ins in first), "FAIL")]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("the agents here only chat")
