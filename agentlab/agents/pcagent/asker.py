"""How PC-Agent's four roles ask the model: one template per question, one retry loop, one counter.

Every role (manager, decision, reflection, progress) renders its template from
``data/prompts/pcagent/`` under the shared system prompt and goes through the dialogue
layer's :func:`~agentlab.dialogue.ask.ask_until_parsed`: greedy first, sampled retries with the
problems quoted back (``pcagent/correction``). Screenshots ride along as images only when the
backend declares ``capabilities.images``; a text-only backend gets the text observation alone.
The model calls of all roles are counted here, so the runner reports one total.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.dialogue.ask import AskResult, Attempt, Check, RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template, template_hashes
from agentlab.llm.base import ChatMessage, LLMBackend

T = TypeVar("T")

#: every template PC-Agent fills; their hashes go into the trajectory header
PROMPT_NAMES = (
    "pcagent/system",
    "pcagent/manager",
    "pcagent/decision",
    "pcagent/reflection",
    "pcagent/progress",
    "pcagent/correction",
)


def prompt_hashes() -> dict[str, str]:
    return template_hashes(PROMPT_NAMES)


class RoleAsker:
    """The backend, the settings and the running count of model calls, shared by the roles."""

    def __init__(self, llm: LLMBackend, config: PCAgentConfig) -> None:
        self.llm = llm
        self.config = config
        self._sampling = RetrySampling(config.max_new_tokens, config.temperature, config.retry_temperature, config.seed)

    @property
    def sees_images(self) -> bool:
        return bool(getattr(self.llm.capabilities, "images", False))

    @property
    def calls(self) -> int:
        return self._sampling.calls

    def ask(
        self,
        prompt: str,
        parse: Callable[[str], T],
        fields: Mapping[str, str],
        *,
        role: str,
        images: Sequence[object] = (),
        checks: Sequence[Check[T]] = (),
        on_attempt: Callable[[Attempt[T]], None] | None = None,
    ) -> AskResult[T]:
        """Ask template ``prompt`` (filled with ``fields`` and ``{feedback}``) until ``parse`` and ``checks`` accept."""
        system = load_template("pcagent/system").render(role=role).strip() + "\n"
        template = load_template(prompt)
        shots = tuple(images) if self.sees_images else ()

        def build(feedback: str) -> list[ChatMessage]:
            user = template.render(**fields, feedback=f"\n{feedback}\n" if feedback else "").strip() + "\n"
            return [ChatMessage("system", system), ChatMessage("user", user, images=shots)]  # type: ignore[arg-type]

        return ask_until_parsed(
            self.llm, build, parse, checks=checks, max_attempts=self.config.max_retries + 1,
            params=self._sampling, correction=load_template("pcagent/correction"), on_attempt=on_attempt,
            label=prompt,
        )
