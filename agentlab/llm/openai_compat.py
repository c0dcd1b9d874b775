"""Any OpenAI-compatible chat endpoint: vLLM, ``transformers serve``, a hosted API.

For users with bigger hardware: the same :class:`LLMBackend` interface as the local model,
so self-instruct, the ICL/manager MetaAgent and the AppAgent agent run unchanged against a
strong model. The API key is read from the environment variable the config names.

Images travel as OpenAI content parts (a text part, then one ``image_url`` part per image
holding a base64 PNG data URL), only when the configuration says the endpoint accepts them
(``llm.images: true``); a message without images stays a plain string, which every server takes.

A reply is read as bytes and checked here, not by the client: an empty body, bytes that are not
UTF-8, JSON that is cut short, ``null``, or an object without ``choices[0].message`` is a
malformed reply, asked again ``llm.retries`` times (with a backoff), then one
:class:`~agentlab.errors.BackendError` naming the endpoint and the model (the task's harness-error
row; the run goes on). The whole reply must arrive within ``llm.timeout_s`` and before the task's
deadline (:mod:`agentlab.llm.deadline`), however slowly the server sends it.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agentlab.errors import BackendError, ConfigError, TimeLimitExceeded
from agentlab.llm.base import (
    Capabilities,
    ChatMessage,
    LLMBackend,
    SamplingParams,
    refuse_images,
    truncate_at_stop,
)
from agentlab.llm.config import LLMConfig
from agentlab.llm.loops import cut_text_loop
from agentlab.llm.deadline import bound_client, call_deadline, task_time_left
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


def call_line(name: str, arguments: str | dict[str, Any]) -> str:
    """An OpenAI function call as one call line (``name(key='value', ...)``), as a specialist writes it."""
    try:
        args = arguments if isinstance(arguments, dict) else json.loads(arguments or "{}")
    except ValueError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


class Malformed(Exception):
    """A reply that is not a chat-completions answer: asked again (``why``: one phrase for the message)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Unreachable(Exception):
    """A refused or reset connection: asked again."""


def json_object(body: bytes) -> dict[str, Any]:
    """The JSON object a reply's body holds; anything else raises :class:`Malformed` saying what it is."""
    if not body.strip():
        raise Malformed("an empty body")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"a body that is not UTF-8 (byte 0x{body[exc.start]:02x} at offset {exc.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = "; cut short?" if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated") else ""
        raise Malformed(f"a body that is not JSON ({exc.msg}: character {exc.pos} of {len(text)}{cut})") from None
    if not isinstance(obj, dict):
        kind = json.dumps(obj) if obj is None or isinstance(obj, bool) else f"a JSON {type(obj).__name__}"
        raise Malformed(f"{kind} where a completion object belongs")
    return obj


def first_choice(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj["choices"][0]`` (a server's own ``error`` object is quoted when there is no choice)."""
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        said = obj.get("error")
        said = said.get("message", said) if isinstance(said, dict) else said
        raise Malformed("an object without choices[0]" + (f" (the server said: {str(said)[:200]})" if said else ""))
    return choices[0]


def chat_text(obj: dict[str, Any]) -> str:
    """The assistant text of a chat completion, or its function calls as call lines."""
    message = first_choice(obj).get("message")
    if not isinstance(message, dict):
        raise Malformed("choices[0] without a message")
    content = message.get("content")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or (content is not None and not isinstance(content, str)):
        raise Malformed("choices[0].message with content that is not text")
    if "content" not in message and not calls:
        raise Malformed("choices[0].message without content")
    lines = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if fn is None:
            continue  # not a function call: nothing a specialist can run
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise Malformed("a tool call without a function name")
        args = fn.get("arguments")
        lines.append(call_line(fn["name"], args if isinstance(args, (str, dict)) else ""))
    return "\n".join(lines) if lines else content or ""


def completion_text(obj: dict[str, Any]) -> str:
    """The text of a ``/completions`` answer."""
    text = first_choice(obj).get("text")
    if not isinstance(text, str):
        raise Malformed("choices[0] without text")
    return text


class OpenAICompatBackend(LLMBackend):
    """Chat completions over HTTP with the official ``openai`` client (replies checked here)."""

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
        #: replies cut for repeating themselves (:func:`~agentlab.llm.loops.cut_text_loop`): a
        #: server decodes to the token cap, so the guard applies to the reply once it has arrived
        self.loop_cuts = 0
        #: what a failure names: the endpoint and the model
        self.endpoint = f"{config.base_url} (model '{config.model}')"
        # the client's own retries are off: a server that accepted the connection and never
        # answered would cost every retry's full timeout; _call retries what may go better again
        timeout = openai.Timeout(config.timeout_s, connect=config.connect_timeout_s)
        http = openai.DefaultHttpxClient(timeout=timeout)
        bound_client(http)  # the whole reply within its deadline, not each read
        self.client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key(), max_retries=0,
                                    timeout=timeout, http_client=http)

    @property
    def capabilities(self) -> Capabilities:
        """Declared by configuration: a server does not say what it accepts."""
        return Capabilities(context_length=self.config.context_length, images=self.config.images,
                            plan_grammar=self.config.guided_regex or self.config.guided_grammar, tool_calls=self.config.tool_calls)

    def _guided(self, params: SamplingParams) -> dict[str, object]:
        """A grammar for a server that says (by configuration) it can hold one: the Lark text itself
        for an llguidance server, else the grammar as a regex."""
        if params.grammar is None:
            return {}
        if self.config.guided_grammar:
            return {"extra_body": {"guided_grammar": params.grammar.lark()}}
        if not self.config.guided_regex:
            refuse_grammar(self, params.grammar)
        return {"extra_body": {"guided_regex": params.grammar.regex()}}

    def _call(self, create: Callable[..., Any], parse: Callable[[dict[str, Any]], T], **kwargs: Any) -> T:
        """One request, asked again up to ``llm.retries`` times (after 1, 2, 4 ... x ``retry_backoff_s``)
        while the reply is malformed or the connection refused or reset; what ``parse`` makes of it."""
        cfg = self.config
        attempts = cfg.retries + 1
        why = ""
        for attempt in range(attempts):
            if attempt:
                pause = cfg.retry_backoff_s * 2 ** (attempt - 1)
                log.warning("%s sent %s; asking again in %.1f s (%d of %d)", self.endpoint, why, pause, attempt, cfg.retries)
                time.sleep(max(0.0, min(pause, task_time_left())))
            try:
                obj = self._attempt(create, kwargs)
                value = parse(obj)
            except Malformed as exc:
                why = exc.why
                continue
            except _Unreachable:
                why = "no reply (connection refused or reset)"
                continue
            self._count(obj.get("usage"))
            return value
        if why.startswith("no reply"):
            raise BackendError(f"cannot reach the OpenAI-compatible server at {self.endpoint} (connection refused "
                               f"or reset, {attempts} attempt(s)); is it running?")
        raise BackendError(f"the OpenAI-compatible server at {self.endpoint} sent a malformed reply {attempts} time(s) "
                           f"(last: {why}); check that base_url is a chat-completions endpoint (llm.retries={cfg.retries})")

    def _attempt(self, create: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """One request with its deadline (the whole reply within ``llm.timeout_s``, before the task's
        deadline); the reply's JSON object."""
        cfg, openai = self.config, self._openai
        task_left = task_time_left()
        if task_left <= 0:
            raise TimeLimitExceeded(f"the task's wall-time limit ran out before a model call to {self.endpoint}")
        by_task = task_left < cfg.timeout_s
        with call_deadline(time.monotonic() + min(cfg.timeout_s, task_left)) as budget:
            try:
                raw = create(**kwargs)
                return json_object(raw.content)
            except openai.APITimeoutError as exc:
                if by_task and budget.left() <= 0.05:
                    raise TimeLimitExceeded(f"the task's wall-time limit ran out during a model call to {self.endpoint} "
                                            f"({budget.received} reply bytes had arrived)") from None
                if type(exc.__cause__).__name__ == "ConnectTimeout" and budget.received == 0 and budget.left() > 0.05:
                    raise BackendError(
                        f"the server at {self.endpoint} did not accept a connection within "
                        f"{cfg.connect_timeout_s:g} s (llm.connect_timeout_s); is it running and reachable?"
                    ) from None
                if budget.received == 0:
                    raise BackendError(
                        f"the server at {self.endpoint} accepted the connection but sent no reply within "
                        f"{cfg.timeout_s:g} s (llm.timeout_s); it may be overloaded or hung, or the reply "
                        "needs more time (raise llm.timeout_s)"
                    ) from None
                raise BackendError(
                    f"the server at {self.endpoint} did not finish its reply within {cfg.timeout_s:g} s (llm.timeout_s; "
                    f"{budget.received} bytes arrived); it may be overloaded or hung, or the reply needs more time "
                    "(raise llm.timeout_s)"
                ) from None
            except openai.APIConnectionError:
                if budget.received:  # the server answered, then closed before the reply was whole
                    raise Malformed(f"a reply cut off after {budget.received} bytes (the connection closed early)") from None
                raise _Unreachable() from None
            except openai.APIStatusError as exc:
                raise BackendError(
                    f"server at {self.endpoint} answered HTTP {exc.status_code}: {' '.join(str(exc.message).split())[:200]}"
                ) from None

    def _count(self, usage: object) -> None:
        """Add the tokens a reply reports (a server may report none, or nonsense: then nothing)."""
        if not isinstance(usage, dict):
            return
        for attr, key in (("tokens_in", "prompt_tokens"), ("tokens_out", "completion_tokens")):
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                setattr(self, attr, getattr(self, attr) + value)

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
            text = self._call(self.client.chat.completions.with_raw_response.create, chat_text, **kwargs)
            out.append(self._unlooped(truncate_at_stop(text, params.stop), params))
        return out

    def _unlooped(self, text: str, params: SamplingParams) -> str:
        """``text`` with a repeated tail cut (``params.loop_guard``), counted in :attr:`loop_cuts`."""
        if not params.loop_guard:
            return text
        text, cut = cut_text_loop(text)
        self.loop_cuts += int(cut)
        return text

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        """Raw completion via ``/completions`` when enabled, else the prompt as one user turn."""
        params = params or SamplingParams()
        if not self.config.use_completions_endpoint:
            return self.chat([ChatMessage("user", prompt)], params)
        out: list[str] = []
        for _ in range(params.n):
            text = self._call(
                self.client.completions.with_raw_response.create,
                completion_text,
                model=self.model_id,
                prompt=prompt,
                max_tokens=params.max_new_tokens,
                temperature=params.temperature,
                top_p=params.top_p,
                stop=list(params.stop) or None,
                **self._guided(params),
            )
            out.append(self._unlooped(truncate_at_stop(text, params.stop), params))
        return out

    def close(self) -> None:
        self.client.close()
