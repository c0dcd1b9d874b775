"""Any OpenAI-compatible chat endpoint: vLLM, ``transformers serve``, a hosted API.

For users with bigger hardware: the same :class:`LLMBackend` interface as the local model,
so self-instruct, the ICL/manager MetaAgent and the AppAgent agent run unchanged against a
strong model. The API key is read from the environment variable the config names.

Images travel as OpenAI content parts (a text part, then one ``image_url`` part per image
holding a base64 PNG data URL), only when the configuration says the endpoint accepts them
(``llm.images: true``); a message without images stays a plain string, which every server takes.
"""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agentlab.errors import BackendError, ConfigError
from agentlab.llm.base import (
    Capabilities,
    ChatMessage,
    LLMBackend,
    SamplingParams,
    refuse_images,
    truncate_at_stop,
)
from agentlab.llm.config import LLMConfig
from agentlab.llm.plan_grammar import refuse_grammar

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

log = logging.getLogger(__name__)

T = TypeVar("T")


def png_data_url(image: Image.Image) -> str:
    """``image`` as a ``data:image/png;base64,...`` URL (PNG: lossless, so pixels arrive intact)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def wire_message(message: ChatMessage) -> dict[str, Any]:
    """One message as the chat-completions API takes it: plain text, or content parts
    (the text first, then the images in order) when the message carries images."""
    if not message.images:
        return message.as_dict()
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts += [{"type": "image_url", "image_url": {"url": png_data_url(img)}} for img in message.images]
    return {"role": message.role, "content": parts}


def call_line(name: str, arguments: str) -> str:
    """An OpenAI function call as one call line (``name(key='value', ...)``), as a specialist writes it."""
    import json

    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


class OpenAICompatBackend(LLMBackend):
    """Chat completions over HTTP with the official ``openai`` client."""

    def __init__(self, config: LLMConfig) -> None:
        import openai

        if not config.base_url:
            raise ConfigError("llm.kind=openai needs llm.base_url (e.g. http://127.0.0.1:8000/v1)")
        self.config = config
        self.model_id = config.model
        self._openai = openai
        #: tokens the server reported so far (prompt, completion); agents read the difference
        self.tokens_in = 0
        self.tokens_out = 0
        # no automatic retries: a server that accepted the connection and never answered would
        # cost every retry's full read timeout; a refused connection is retried once in _call
        self.client = openai.OpenAI(
            base_url=config.base_url, api_key=config.api_key(), max_retries=0,
            timeout=openai.Timeout(config.timeout_s, connect=config.connect_timeout_s),
        )

    @property
    def capabilities(self) -> Capabilities:
        """Declared by configuration: a server does not say what it accepts."""
        return Capabilities(context_length=self.config.context_length, images=self.config.images,
                            plan_grammar=self.config.guided_regex, tool_calls=self.config.tool_calls)

    def _guided(self, params: SamplingParams) -> dict[str, object]:
        """vLLM's regex-guided decoding for a plan grammar (only when the config says the server takes it)."""
        if params.grammar is None:
            return {}
        if not self.config.guided_regex:
            refuse_grammar(self, params.grammar)
        return {"extra_body": {"guided_regex": params.grammar.regex()}}

    def _call(self, fn: Callable[..., T], **kwargs: Any) -> T:
        for attempt in range(2):
            try:
                return fn(**kwargs)
            except self._openai.APITimeoutError as exc:
                if type(exc.__cause__).__name__ == "ConnectTimeout":  # httpx's or httpx2's, by the client's version
                    raise BackendError(
                        f"the server at {self.config.base_url} did not accept a connection within "
                        f"{self.config.connect_timeout_s:g} s (llm.connect_timeout_s); is it running and reachable?"
                    ) from None
                raise BackendError(
                    f"the server at {self.config.base_url} accepted the connection but sent no reply within "
                    f"{self.config.timeout_s:g} s (llm.timeout_s); it may be overloaded or hung, or the reply "
                    "needs more time (raise llm.timeout_s)"
                ) from None
            except self._openai.APIConnectionError:
                if attempt == 0:
                    continue  # a refused or reset connection is tried once more
                raise BackendError(
                    f"cannot reach the OpenAI-compatible server at {self.config.base_url} (connection refused "
                    "or reset); is it running?"
                ) from None
            except self._openai.APIStatusError as exc:
                raise BackendError(
                    f"server at {self.config.base_url} answered HTTP {exc.status_code} for model "
                    f"'{self.model_id}': {str(exc.message)[:200]}"
                ) from None
        raise AssertionError("unreachable")  # the loop returns or raises

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        params = params or SamplingParams()
        if not self.capabilities.images:
            try:
                refuse_images(self, messages)
            except ConfigError as exc:
                raise ConfigError(f"{exc.message}; if the server at {self.config.base_url} serves a "
                                  "vision model, set llm.images: true") from None
        wire = [wire_message(m) for m in messages]
        out: list[str] = []
        # Not every server honours n>1, so ask one at a time.
        for i in range(params.n):
            kwargs: dict[str, object] = {
                "model": self.model_id,
                "messages": wire,
                "max_tokens": params.max_new_tokens,
                "temperature": params.temperature,
                "top_p": params.top_p,
            }
            if params.stop:
                kwargs["stop"] = list(params.stop)
            if params.seed is not None:
                kwargs["seed"] = params.seed + i
            if params.tools and self.config.tool_calls:  # function calling: the calls come back as call lines
                kwargs["tools"] = list(params.tools)
            else:
                kwargs.update(self._guided(params))
            resp = self._call(self.client.chat.completions.create, **kwargs)
            if not resp.choices:
                raise BackendError(f"server at {self.config.base_url} returned no choices")
            message = resp.choices[0].message
            text = message.content or ""
            calls = [c for c in getattr(message, "tool_calls", None) or [] if getattr(c, "function", None) is not None]
            if calls:
                text = "\n".join(call_line(c.function.name, c.function.arguments) for c in calls)
            usage = getattr(resp, "usage", None)
            if usage is not None:
                self.tokens_in += int(getattr(usage, "prompt_tokens", 0) or 0)
                self.tokens_out += int(getattr(usage, "completion_tokens", 0) or 0)
            out.append(truncate_at_stop(text, params.stop))
        return out

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        """Raw completion via ``/completions`` when enabled, else the prompt as one user turn."""
        params = params or SamplingParams()
        if not self.config.use_completions_endpoint:
            return self.chat([ChatMessage("user", prompt)], params)
        out: list[str] = []
        for _ in range(params.n):
            resp = self._call(
                self.client.completions.create,
                model=self.model_id,
                prompt=prompt,
                max_tokens=params.max_new_tokens,
                temperature=params.temperature,
                top_p=params.top_p,
                stop=list(params.stop) or None,
                **self._guided(params),
            )
            out.append(truncate_at_stop(resp.choices[0].text or "", params.stop))
        return out

    def close(self) -> None:
        self.client.close()
