"""Execution tests: a scripted model (a test double) driving real workspaces and real task files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.llm.roles import Backends
from agentlab.pool import AgentPool
from agentlab.run.episode import ExecOptions, SuiteSummary
from agentlab.run.worker import EpisodeRecipe, RunSpec, Worker, execute


#: a canned reply, or a function computing it from the messages sent (ids read off the screen listing)
Reply = str | Callable[[list[ChatMessage]], str]


class ScriptedBackend(LLMBackend):
    """TEST DOUBLE, not a model: replays canned replies in order and keeps what it was sent."""

    model_id = "scripted-test-double"

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.prompts: list[list[ChatMessage]] = []
        self.params: list[SamplingParams] = []

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self.prompts.append(list(messages))
        self.params.append(params or SamplingParams())
        if not self.replies:
            raise AssertionError("scripted backend ran out of replies")
        reply = self.replies.pop(0)
        return [reply(messages) if callable(reply) else reply]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("the code agent only uses chat()")


def py(code: str, end: str = "") -> str:
    """A reply holding one python block (and an end line)."""
    return f"Here is the program.\n```python\n{code.rstrip()}\n```\n{end}".rstrip()


@pytest.fixture
def scripted() -> type[ScriptedBackend]:
    return ScriptedBackend


@pytest.fixture(scope="session")
def pool() -> AgentPool:
    return AgentPool.from_dir(None)


@pytest.fixture
def task() -> ExecTask:
    return load_task(tasks_dir() / "csv-sales-summary.json")


@pytest.fixture
def solution(task: ExecTask) -> str:
    assert task.reference_solution is not None
    return task.reference_solution.code


@pytest.fixture
def task_file() -> Path:
    return tasks_dir() / "csv-sales-summary.json"


def suite(tasks: list[ExecTask], *, pool: AgentPool, llm: LLMBackend, out_dir: Path, options: ExecOptions,
          agent: str | None = None, **spec: Any) -> SuiteSummary:
    """``tasks`` carried out as every caller does it -- a :class:`RunSpec` given to :func:`execute` --
    with an already built test model (``spec``: the spec's other fields, ``resume`` etc.)."""
    return execute(RunSpec(EpisodeRecipe(out_dir, options, agent=agent), **spec), list(tasks),
                   worker=Worker(pool, Backends(llm)), progress=False)
