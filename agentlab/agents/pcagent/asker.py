"""How PC-Agent's four roles ask the model: one template per question, one retry loop, one counter.

Every role (manager, decision, reflection, progress) renders its template from
``data/prompts/pcagent/`` under the shared system prompt and goes through the dialogue
layer's :func:`~agentlab.dialogue.ask.ask_until_parsed`: greedy first, sampled retries with the
problems quoted back (``pcagent/correction``). Screenshots ride along as images only when the
backend declares ``capabilities.images``; a text-only backend gets the text observation alone.
Each role asks its own model (``ctx.llm(role)``: ``manager``, ``decision``, ``reflection``,
``progress``; a role without a model of its own uses the run's model); the episode's meters
count the calls and tokens by role.
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


#: PC-Agent's roles, each of which may have a model of its own
MODEL_ROLES = ("manager", "decision", "reflection", "progress")


class RoleAsker:
    """The models by role and the settings, shared by the roles."""

    def __init__(self, llm: Callable[[str], LLMBackend] | LLMBackend, config: PCAgentConfig) -> None:
        #: role -> its model (one backend given: every role asks it)
        self.llm_for: Callable[[str], LLMBackend] = llm if callable(llm) else (lambda _role: llm)
        self.config = config
        self._sampling = RetrySampling(config.max_new_tokens, config.temperature, config.retry_temperature, config.seed)

    @property
    def calls(self) -> int:
        """Questions asked so far (the sampling schedule's count; the episode meters tokens)."""
        return self._sampling.calls

    def sees_images(self, role: str) -> bool:
        return bool(getattr(self.llm_for(role).capabilities, "images", False))

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
        llm = self.llm_for(role)
        shots = tuple(images) if llm.capabilities.images else ()

        def build(feedback: str) -> list[ChatMessage]:
            user = template.render(**fields, feedback=f"\n{feedback}\n" if feedback else "").strip() + "\n"
            return [ChatMessage("system", system), ChatMessage("user", user, images=shots)]  # type: ignore[arg-type]

        return ask_until_parsed(
            llm, build, parse, checks=checks, max_attempts=self.config.max_retries + 1,
            params=self._sampling, correction=load_template("pcagent/correction"), on_attempt=on_attempt,
            label=prompt,
        )
