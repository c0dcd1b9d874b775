"""PC-Agent tests: a scripted backend that answers each role from its own script, a pool document,
and a real X server with the GTK demo app (as ``tests/envs/desktop/conftest.py`` provides for its
own folder: one Xvfb + session bus per module, the app per test)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest


from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.pool import parse_document
from agentlab.pool.document import AgentDocument

#: a canned reply, or one computed from the messages sent (numbers read off the screen listing)
Reply = str | Callable[[list[ChatMessage]], str]

DOC = """---
name: PCTestAgent
platform: desktop
interface: GUI
modality: single
base_model: open
domain: os
supports_extension: false
runner: pcagent
---
# Applications
Any desktop application

# Capabilities
Operates desktop applications with a manager, progress, decision and reflection agent.

# Limitations
Only what the screen shows.

# Demonstrations
1. Type a name into the form and press Greet.
"""


# TEST DOUBLE
class RoleScripted(LLMBackend):
    """TEST DOUBLE, not a model: each PC-Agent role (read off the system prompt) replays its own
    script in order; every call is kept as ``(role, messages)`` so tests can count who was asked."""

    model_id = "scripted-test-double"

    def __init__(self, **scripts: list[Reply]) -> None:
        self.scripts = {role: list(replies) for role, replies in scripts.items()}
        self.calls: list[tuple[str, list[ChatMessage]]] = []
        self.params: list[SamplingParams] = []

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        m = re.search(r"You are the (\w+) agent", messages[0].content)
        assert m, messages[0].content
        role = m.group(1)
        self.calls.append((role, list(messages)))
        self.params.append(params or SamplingParams())
        queue = self.scripts.get(role)
        if not queue:
            raise AssertionError(f"the scripted {role} agent ran out of replies")
        reply = queue.pop(0)
        return [reply(messages) if callable(reply) else reply]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("PC-Agent only uses chat()")

    def asked(self, role: str) -> list[str]:
        """The user prompts sent to ``role``, in order."""
        return [msgs[-1].content for r, msgs in self.calls if r == role]


@pytest.fixture
def pc_doc() -> AgentDocument:
    doc, problems = parse_document(DOC, Path("PCTestAgent.md"))
    assert doc is not None and not problems, problems
    return doc


@pytest.fixture
def role_scripted() -> type[RoleScripted]:
    return RoleScripted


@pytest.fixture
def pc_pool_dir(tmp_path: Path) -> Path:
    """A pool folder holding only the ``runner: pcagent`` document."""
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "PCTestAgent.md").write_text(DOC)
    return folder
