"""Language-model backends behind one interface (local Hugging Face model, local vision-language
model, or OpenAI-compatible server)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.llm.config import EMBEDDED_BACKBONE, EMBEDDED_GEMMA, EMBEDDED_MODELS, LLMConfig

if TYPE_CHECKING:
    from agentlab.llm.local import LocalHFBackend

__all__ = [
    "EMBEDDED_BACKBONE",
    "EMBEDDED_GEMMA",
    "EMBEDDED_MODELS",
    "ChatMessage",
    "LLMBackend",
    "LLMConfig",
    "SamplingParams",
    "load_backend",
    "load_local",
]


def load_backend(config: LLMConfig | None = None) -> LLMBackend:
    """Build the backend a config names (default: :meth:`LLMConfig.from_env`)."""
    config = config or LLMConfig.from_env()
    if config.kind == "openai":
        from agentlab.llm.openai_compat import OpenAICompatBackend

        # an endpoint does not say whether it takes images: ``vision`` (when given) says it for ``images``
        return OpenAICompatBackend(config if config.vision is None else config.model_copy(update={"images": config.vision}))
    if config.vision and config.kind == "local":
        from agentlab.errors import ConfigError

        raise ConfigError("llm.vision: true, but llm.kind: local is a text model; use kind: vision (a local "
                          "vision-language model folder) or kind: openai with a vision model behind it")
    if config.kind == "vision":
        from agentlab.llm.vision import VisionHFBackend

        backend: LLMBackend = VisionHFBackend(config)
        if config.vision is False:  # the ablation: a vision model kept on the text observation
            from agentlab.llm.screens import TextOnly

            backend = TextOnly(backend)
        return backend
    return load_local(config)


@lru_cache(maxsize=4)
def _cached_local(config_json: str) -> LocalHFBackend:
    from agentlab.llm.local import LocalHFBackend

    return LocalHFBackend(LLMConfig.model_validate_json(config_json))


def load_local(config: LLMConfig | None = None) -> LocalHFBackend:
    """The local backend for a config, shared within a process (models are frozen)."""
    from agentlab.errors import ConfigError

    config = config or LLMConfig.from_env()
    if config.kind != "local":
        raise ConfigError(
            "this step needs a local model (hidden states / output head); "
            f"llm.kind is '{config.kind}'. Set llm.kind=local and llm.model to a model folder"
        )
    return _cached_local(config.model_dump_json())
