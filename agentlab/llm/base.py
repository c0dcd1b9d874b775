"""The one small interface every language-model backend offers, and what each can do beyond it.

Callers (self-instruct, the ICL/manager MetaAgent, the agents) only need text in, text out.
Some need more: token counting and the context length (to refuse a prompt that cannot
fit), the chat template as text (to cache a shared prefix), the frozen model's hidden
states and output head (AgentToken and the adapter baselines), or image inputs. A backend
*declares* these in :attr:`LLMBackend.capabilities`; callers check the declaration instead
of probing attributes, so a new backend states once what it offers.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from agentlab.errors import ContextOverflowError

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

Role = Literal["system", "user", "assistant"]
T = TypeVar("T")


@dataclass(frozen=True)
class ChatMessage:
    """One turn. ``images`` (PIL images, e.g. a screenshot) go only to a backend whose
    :attr:`Capabilities.images` is true; agents check that and send text otherwise."""

    role: Role
    content: str
    images: tuple[Image.Image, ...] = ()

    def as_dict(self) -> dict[str, str]:
        """The text-only form chat templates and text endpoints take (images are not in it)."""
        return {"role": self.role, "content": self.content}


def has_images(messages: list[ChatMessage]) -> bool:
    return any(m.images for m in messages)


def refuse_images(backend: LLMBackend, messages: list[ChatMessage]) -> None:
    """A clear error instead of silently dropping a screenshot a caller meant the model to see."""
    if has_images(messages):
        from agentlab.errors import ConfigError

        raise ConfigError(f"{type(backend).__name__} ({backend.model_id}) does not accept images "
                          "(capabilities.images is false); send the text observation instead")


class DecodingGrammar(Protocol):
    """What a reply may be, for constrained decoding: Lark text for llguidance (local models
    through the logits processor, and servers running the same engine), and a regular expression
    (servers with regex-guided decoding only). Plans
    (:class:`~agentlab.llm.plan_grammar.PlanGrammar`) and tool calls
    (:class:`~agentlab.toolkits.grammar.CallGrammar`) are grammars."""

    def lark(self) -> str: ...

    def regex(self) -> str: ...

    def logits_processor(self, tokenizer: Any) -> Any: ...


@dataclass(frozen=True)
class SamplingParams:
    """Decoding settings shared by all backends (greedy when ``temperature == 0``)."""

    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    stop: tuple[str, ...] = field(default_factory=tuple)
    seed: int | None = None
    #: restrict decoding to a grammar (only backends declaring ``capabilities.plan_grammar``)
    grammar: DecodingGrammar | None = None
    #: OpenAI function-calling descriptions of the tools a reply may call (servers with ``llm.tool_calls``)
    tools: tuple[dict[str, Any], ...] = ()
    #: stop a reply once it repeats itself (:mod:`agentlab.llm.loops`; local decoding)
    loop_guard: bool = True

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


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers beyond chat and completion (all off unless declared)."""

    #: :meth:`LLMBackend.count_tokens` gives the model's own token count.
    token_counting: bool = False
    #: Tokens the model can attend to (prompt + answer); ``None`` when unknown.
    context_length: int | None = None
    #: :meth:`LLMBackend.chat_prompt` renders the chat template locally as text.
    chat_template: bool = False
    #: Hidden states and the output head of a frozen local model (AgentToken, adapters, scoring).
    hidden_states: bool = False
    #: Messages may carry images (OpenAI-style content parts or a local processor).
    images: bool = False
    #: Decoding can be restricted to a grammar (``SamplingParams.grammar``: plans, tool calls).
    plan_grammar: bool = False
    #: The server answers with OpenAI function calls for ``SamplingParams.tools`` (rendered back as call lines).
    tool_calls: bool = False


class LLMBackend(ABC):
    """Chat and plain completion with sampling parameters."""

    #: Stable identifier recorded with everything the backend produced.
    model_id: str

    @property
    def capabilities(self) -> Capabilities:
        """What this backend declares it can do beyond chat/complete (default: nothing)."""
        return Capabilities()

    def count_tokens(self, text: str) -> int:
        """The model's token count for ``text`` (only when ``capabilities.token_counting``)."""
        raise NotImplementedError(f"{type(self).__name__} does not count tokens (capabilities.token_counting is false)")

    def chat_prompt(self, messages: list[ChatMessage]) -> str:
        """The chat template applied to ``messages`` as text (only when ``capabilities.chat_template``)."""
        raise NotImplementedError(f"{type(self).__name__} has no local chat template (capabilities.chat_template is false)")

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


def check_fits(backend: LLMBackend, prompt: str) -> None:
    """Raise :class:`ContextOverflowError` when ``prompt`` fills ``backend``'s context (when the
    backend counts tokens and knows its context): a model fed more than it can read spends
    minutes on a reply that cannot be right (issue #23), so the episode stops before the call."""
    caps = backend.capabilities
    if not (caps.token_counting and caps.context_length):
        return
    n = backend.count_tokens(prompt)
    if n >= caps.context_length:
        raise ContextOverflowError(f"a prompt of {n} tokens does not fit the {caps.context_length}-token context of "
                                   f"{backend.model_id}; shorten the task or use a model with a longer context")


class WrappedBackend(LLMBackend):
    """``inner`` with every call passed through; a subclass changes the sampling parameters
    (:meth:`_params`) or watches the calls (:meth:`_called`). Why one base: the wrappers the
    episode runner stacks (a reply cap, a meter) must each forward the whole backend interface,
    and the usage counters, capabilities and ``model_id`` stay the inner backend's."""

    def __init__(self, inner: LLMBackend) -> None:
        self.inner = inner
        self.model_id = inner.model_id

    def __getattr__(self, name: str) -> Any:  # tokens_in/tokens_out, images, ... of the inner backend
        if name == "inner":  # not set yet (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _params(self, params: SamplingParams | None) -> SamplingParams | None:
        return params

    def _called(self, n: int) -> None:
        """``n`` model calls are about to be made."""

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def chat_prompt(self, messages: list[ChatMessage]) -> str:
        return self.inner.chat_prompt(messages)

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self._called(1)
        return self.inner.chat(messages, self._params(params))

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        self._called(1)
        return self.inner.complete(prompt, self._params(params))

    def complete_batch(self, prompts: list[str], params: SamplingParams | None = None) -> list[list[str]]:
        self._called(len(prompts))
        return self.inner.complete_batch(prompts, self._params(params))

    def close(self) -> None:
        self.inner.close()


class ReplyCap(WrappedBackend):
    """``inner`` with every reply cut at ``max_new_tokens`` (whatever the caller asked for).

    Why: a small model rarely stops on its own, so a runner's generous default (the code
    agent asks for up to 1,024 tokens) makes a suite with the embedded model take hours.
    ``agentlab exec --max-new-tokens`` caps replies for every runner at once, without touching
    documents; everything else (usage counters, capabilities, ``model_id``) is the inner one's.
    """

    def __init__(self, inner: LLMBackend, max_new_tokens: int) -> None:
        super().__init__(inner)
        self.max_new_tokens = max_new_tokens

    def _params(self, params: SamplingParams | None) -> SamplingParams:
        params = params or SamplingParams()
        return dataclasses.replace(params, max_new_tokens=min(params.max_new_tokens, self.max_new_tokens))


class Metered(WrappedBackend):
    """``inner`` with the calls made through it and their tokens counted, call by call.

    Why: the episode owns every model an agent uses (:class:`agentlab.agents.context.Models`),
    one meter per role, so what an episode spent is known however it ended (a time limit
    returns no result) and by role. Tokens are the inner backend's counters read around each
    call (0 where a backend reports none), so two meters over one backend never count each
    other's calls. A prompt that fills a counting model's context is refused before the call
    (:func:`check_fits`).
    """

    def __init__(self, inner: LLMBackend) -> None:
        super().__init__(inner)
        self.calls = 0
        self.spent_in = 0
        self.spent_out = 0
        #: replies of this meter's calls that the backend cut for repeating themselves
        self.loop_cuts = 0

    def _usage(self) -> tuple[int, int, int]:
        inner = self.inner
        return (int(getattr(inner, "tokens_in", 0) or 0), int(getattr(inner, "tokens_out", 0) or 0),
                int(getattr(inner, "loop_cuts", 0) or 0))

    def _metered(self, n: int, call: Callable[[], T]) -> T:
        before = self._usage()
        self.calls += n
        try:
            return call()
        finally:
            after = self._usage()
            self.spent_in += after[0] - before[0]
            self.spent_out += after[1] - before[1]
            self.loop_cuts += after[2] - before[2]

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        caps = self.inner.capabilities
        if caps.token_counting and caps.chat_template and caps.context_length and not has_images(messages):
            try:
                prompt = self.inner.chat_prompt(messages)
            except NotImplementedError:
                prompt = None
            if prompt is not None:
                check_fits(self.inner, prompt)
        return self._metered(1, lambda: self.inner.chat(messages, params))

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        check_fits(self.inner, prompt)
        return self._metered(1, lambda: self.inner.complete(prompt, params))

    def complete_batch(self, prompts: list[str], params: SamplingParams | None = None) -> list[list[str]]:
        for prompt in prompts:
            check_fits(self.inner, prompt)
        return self._metered(len(prompts), lambda: self.inner.complete_batch(prompts, params))

    def spent(self) -> tuple[int, int, int]:
        """(calls, tokens in, tokens out) made through this meter."""
        return self.calls, self.spent_in, self.spent_out
