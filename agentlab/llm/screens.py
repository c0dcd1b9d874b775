"""Screenshots on their way to a model: downscaled to the role's size, counted, or withheld.

Why here and not in each agent: every agent that shows the screen (AppAgent, Agent S2's worker
and grounder, PC-Agent's decision and reflection agents, the phone agents, COLA's decision
agents) attaches the full screenshot to a :class:`~agentlab.llm.base.ChatMessage`; the episode
wraps each role's model in :class:`ImageFit`, so one place makes every image fit the role's
``max_image_side`` and counts what was sent (images and PNG bytes, in ``usage_by_role``).
A grounder that must turn a point on the sent image back into screen pixels computes the same
size with :func:`fitted_size`.

:class:`TextOnly` is a vision model told ``vision: false``: it declares no images, so the
agents send it the text observation (accessibility elements, OCR lines) as for a text model.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams, WrappedBackend

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

#: the longest side of a sent screenshot when nothing else is configured (``llm.max_image_side``)
DEFAULT_MAX_IMAGE_SIDE = 1280


def fitted_size(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    """``size`` scaled down (aspect kept, at least 1 px) so its longer side is at most ``max_side``."""
    w, h = size
    longest = max(w, h)
    if longest <= max_side or longest == 0:
        return w, h
    scale = max_side / longest
    return max(1, round(w * scale)), max(1, round(h * scale))


def fit_image(image: Image.Image, max_side: int) -> Image.Image:
    """``image`` itself when it fits, else a downscaled copy (Lanczos: text on a screen stays legible)."""
    from PIL import Image as PILImage

    size = fitted_size(image.size, max_side)
    return image if size == image.size else image.resize(size, PILImage.Resampling.LANCZOS)


def png_size(image: Image.Image) -> int:
    """The bytes ``image`` takes as PNG (what an endpoint receives, before base64)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.tell()


@dataclass(frozen=True)
class ImageSides:
    """The longest image side per role (``roles:`` entries' ``max_image_side``), ``default`` for the rest."""

    default: int = DEFAULT_MAX_IMAGE_SIDE
    roles: Mapping[str, int] = field(default_factory=dict)

    def of(self, role: str) -> int:
        return self.roles.get(role, self.default)


class ImageFit(WrappedBackend):
    """``inner`` with every attached image downscaled to ``max_side`` and counted (images, PNG bytes)."""

    def __init__(self, inner: LLMBackend, max_side: int = DEFAULT_MAX_IMAGE_SIDE) -> None:
        super().__init__(inner)
        self.max_side = max_side
        self.images_sent = 0
        self.image_bytes = 0

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        if any(m.images for m in messages):
            messages = [self._fit(m) for m in messages]
        return super().chat(messages, params)

    def _fit(self, message: ChatMessage) -> ChatMessage:
        if not message.images:
            return message
        images = tuple(fit_image(img, self.max_side) for img in message.images)
        self.images_sent += len(images)
        self.image_bytes += sum(png_size(img) for img in images)
        return dataclasses.replace(message, images=images)


class TextOnly(WrappedBackend):
    """A backend that could take images, declared without them (``vision: false``): agents send it text."""

    @property
    def capabilities(self) -> Capabilities:
        return dataclasses.replace(self.inner.capabilities, images=False)
