"""How a role of a hierarchical agent asks its model (Agent S2's and PC-Agent's roles alike).

One question: the architecture's system template spoken to the role, the question's template
filled with its fields, the screenshots attached only when the role's backend declares images
(a text model gets the text observation in the fields instead), and the dialogue layer's retry
loop (:func:`~agentlab.dialogue.ask.ask_until_parsed`): greedy first, sampled retries with the
problems quoted back through the architecture's correction template, ``max_retries`` of them per
question, one sampling schedule for the whole episode. Each role asks its own model
(``ctx.llm(role)``; a role without one uses the run's model); the episode meters the calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from agentlab.dialogue.ask import AskResult, Attempt, Check, RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template
from agentlab.llm.base import ChatMessage, LLMBackend
from agentlab.llm.screens import DEFAULT_MAX_IMAGE_SIDE

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

T = TypeVar("T")


class AskSettings(Protocol):
    """What the asker reads of an architecture's run settings."""

    max_new_tokens: int
    max_retries: int
    temperature: float
    retry_temperature: float
    seed: int


C = TypeVar("C", bound=AskSettings)


class RoleAsker(Generic[C]):
    """The models by role, the run's settings and the architecture's two templates.

    ``system`` is rendered with the asking role's name; ``correction`` quotes a rejected reply's
    problems. ``model_roles`` maps a role as the prompts name it to its model role (``roles:`` in an
    LLM config file) where they differ (S2's "grounding expert" asks the ``grounder``)."""

    def __init__(self, llm: Callable[[str], LLMBackend] | LLMBackend, config: C, *, system: str, correction: str,
                 model_roles: Mapping[str, str] | None = None, image_side: Callable[[str], int] | None = None) -> None:
        #: model role -> its model (one backend given: every role asks it)
        self.llm_for: Callable[[str], LLMBackend] = llm if callable(llm) else (lambda _role: llm)
        #: model role -> the longest side its screenshots are sent at (the episode's, :meth:`RunContext.image_side`)
        self.side_for: Callable[[str], int] = image_side or (lambda _role: DEFAULT_MAX_IMAGE_SIDE)
        self.config = config
        self.system, self.correction, self.model_roles = system, correction, dict(model_roles or {})
        self._sampling = RetrySampling(config.max_new_tokens, config.temperature, config.retry_temperature, config.seed)

    @property
    def calls(self) -> int:
        """Questions asked so far (the sampling schedule's count; the episode meters tokens)."""
        return self._sampling.calls

    def model_role(self, role: str) -> str:
        """The model role (``roles:`` name) a prompt's role asks."""
        return self.model_roles.get(role, role)

    def sees_images(self, role: str) -> bool:
        """Does ``role``'s backend take screenshots? (Else it gets the text observation.)"""
        return bool(getattr(self.llm_for(self.model_role(role)).capabilities, "images", False))

    def image_side(self, role: str) -> int:
        """The longest side of the screenshot ``role``'s model is sent."""
        return self.side_for(self.model_role(role))

    def ask(self, role: str, prompt: str, fields: Mapping[str, str], parse: Callable[[str], T], *,
            checks: Sequence[Check[T]] = (), images: Sequence[Image.Image | None] = (),
            on_attempt: Callable[[Attempt[T]], None] | None = None,
            constraint: Mapping[str, Any] | None = None) -> AskResult[T]:
        """Ask template ``prompt`` (filled with ``fields`` and ``{feedback}``) until ``parse`` and
        ``checks`` accept; ``images`` (a missing one is skipped) ride along when the backend takes them."""
        system = load_template(self.system).render(role=role).strip() + "\n"
        template = load_template(prompt)
        llm = self.llm_for(self.model_role(role))
        shots = tuple(i for i in images if i is not None) if llm.capabilities.images else ()

        def build(feedback: str) -> list[ChatMessage]:
            user = template.render(**fields, feedback=f"\n{feedback}\n" if feedback else "").strip() + "\n"
            return [ChatMessage("system", system), ChatMessage("user", user, images=shots)]

        return ask_until_parsed(llm, build, parse, checks=checks, max_attempts=self.config.max_retries + 1,
                                params=((lambda i: dataclasses.replace(self._sampling(i), **constraint))
                                        if constraint else self._sampling),
                                correction=load_template(self.correction),
                                on_attempt=on_attempt, label=prompt)
