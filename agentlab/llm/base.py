"""The one small interface every language-model backend offers.

Callers (self-instruct, the ICL/manager MetaAgent, the AppAgent agent) only need text in,
text out. The AgentToken router additionally needs the frozen model's hidden states and
output head; only :class:`~agentlab.llm.local.LocalHFBackend` offers those.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class SamplingParams:
    """Decoding settings shared by all backends (greedy when ``temperature == 0``)."""

    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    stop: tuple[str, ...] = field(default_factory=tuple)
    seed: int | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0


def truncate_at_stop(text: str, stop: tuple[str, ...]) -> str:
    """Cut ``text`` at the first stop string (backends that cannot stop server-side)."""
    cut = len(text)
    for s in stop:
        idx = text.find(s)
        if idx != -1:
            cut = min(cut, idx)
    return text[:cut]


class LLMBackend(ABC):
    """Chat and plain completion with sampling parameters."""

    #: Stable identifier recorded with everything the backend produced.
    model_id: str

    @abstractmethod
    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        """Return ``params.n`` assistant replies to the conversation."""

    @abstractmethod
    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        """Return ``params.n`` continuations of a raw prompt (no chat template)."""

    def complete_batch(
        self, prompts: list[str], params: SamplingParams | None = None
    ) -> list[list[str]]:
        """Continuations for several prompts; backends override this when they can batch."""
        return [self.complete(p, params) for p in prompts]

    def close(self) -> None:  # pragma: no cover - default no-op
        """Release resources (HTTP sessions, GPU memory)."""
