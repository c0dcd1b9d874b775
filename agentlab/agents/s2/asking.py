"""How every Agent S2 role asks the model: one template, the screenshot when the role's backend
takes images, the dialogue layer's retry loop, and one sampling schedule for the whole episode.

Each role asks its own model (:data:`MODEL_ROLES`: ``manager``, ``worker``, ``grounder``), given by
the episode (``ctx.llm(role)``); a role without a model of its own uses the run's model. The
episode's meters count the calls and tokens (by role), not this class.

The manager, the worker and the visual expert's point question all go through :meth:`Asker.ask`
(:func:`~agentlab.dialogue.ask.ask_until_parsed`): greedy first, sampled retries with the
problems fed back through ``s2/feedback``; at most ``max_retries`` retries per question.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from agentlab.agents.s2.config import S2Config
from agentlab.dialogue.ask import AskResult, Attempt, Check, RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template, template_hashes
from agentlab.llm.base import ChatMessage, LLMBackend
from agentlab.llm.screens import DEFAULT_MAX_IMAGE_SIDE

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

T = TypeVar("T")

#: every template Agent S2 fills; their hashes go into the trajectory header
PROMPT_NAMES = ("s2/system", "s2/manager", "s2/worker", "s2/feedback", "s2/ground_point")


def prompt_hashes() -> dict[str, str]:
    return template_hashes(PROMPT_NAMES)


#: the role a system prompt speaks to -> the model role it asks (``roles:`` in an LLM config file)
MODEL_ROLES = {"manager": "manager", "worker": "worker", "grounding expert": "grounder"}


class Asker:
    """The models by role and the run's sampling settings."""

    def __init__(self, llm: Callable[[str], LLMBackend] | LLMBackend, config: S2Config,
                 image_side: Callable[[str], int] | None = None) -> None:
        #: role -> its model (one backend given: every role asks it)
        self.llm_for: Callable[[str], LLMBackend] = llm if callable(llm) else (lambda _role: llm)
        #: model role -> the longest side its screenshots are sent at (the episode's, :meth:`RunContext.image_side`)
        self.side_for: Callable[[str], int] = image_side or (lambda _role: DEFAULT_MAX_IMAGE_SIDE)
        self.config = config
        self._sampling = RetrySampling(config.max_new_tokens, config.temperature, config.retry_temperature, config.seed)

    def model_role(self, role: str) -> str:
        """The model role (``roles:`` name) a system-prompt role asks."""
        return MODEL_ROLES.get(role, role)

    def sees_images(self, role: str = "worker") -> bool:
        """Does ``role``'s backend take screenshots? (Else it gets the text observation.)"""
        return bool(self.llm_for(self.model_role(role)).capabilities.images)

    def image_side(self, role: str) -> int:
        """The longest side of the screenshot ``role``'s model is sent."""
        return self.side_for(self.model_role(role))

    def ask(self, role: str, prompt: str, fields: Mapping[str, str], parse: Callable[[str], T], *,
            checks: Sequence[Check[T]] = (), image: Image.Image | None = None,
            on_attempt: Callable[[Attempt[T]], None] | None = None) -> AskResult[T]:
        """Ask with template ``prompt`` (it has a ``{feedback}`` field) until the reply is usable.

        ``image`` is attached to the user turn only when the backend declares images.
        """
        system = load_template("s2/system").render(role=role).strip() + "\n"
        llm = self.llm_for(MODEL_ROLES.get(role, role))
        images = (image,) if image is not None and llm.capabilities.images else ()

        def build(feedback: str) -> list[ChatMessage]:
            user = load_template(prompt).render(**fields, feedback=f"\n{feedback}\n" if feedback else "")
            return [ChatMessage("system", system), ChatMessage("user", user.strip() + "\n", images=images)]

        return ask_until_parsed(llm, build, parse, checks=checks, max_attempts=self.config.max_retries + 1,
                                params=self._sampling, correction=load_template("s2/feedback"),
                                on_attempt=on_attempt, label=prompt)
