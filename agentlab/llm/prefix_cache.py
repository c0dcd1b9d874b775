"""A long prompt prefix shared by many queries, encoded once: the ICL router and ICL manager need it.

In the ICL baselines every task's prompt starts with the same instructions and *all*
agent documents (~7,500 tokens for 30 agents) and differs only in the last few dozen
tokens. :class:`PrefixLM` encodes that prefix once into a key/value cache, then scores
candidate answers (:mod:`agentlab.llm.scoring`) or generates greedily on top of it, cropping the cache
back after every query.

The cache layers append into a preallocated buffer (:class:`BufferedLayer`) instead of
``torch.cat``-ing a fresh ~12 MB tensor per layer at every generated token: on this CPU the
copies cost more than the model itself (0.47 s of a 0.77 s decoding step, measured).
:class:`PrefixCachedBackend` wraps a local backend so code that only knows
:class:`~agentlab.llm.base.LLMBackend` (the hash-manager) gets the same saving.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams, truncate_at_stop
from agentlab.llm.kv_cache import rollbackable, with_cache
from agentlab.llm.scoring import candidate_logprobs, forward_packed, pack

log = logging.getLogger(__name__)


class BufferedLayer(DynamicLayer):
    """A cache layer (batch size 1 or fixed) that grows in place inside a reserved buffer."""

    def __init__(self, capacity: int = 1024, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.capacity = capacity
        self._kv: tuple[torch.Tensor, torch.Tensor] | None = None  # the reserved key and value buffers
        self._n = 0

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        n = self._n + key_states.shape[-2]
        if self._kv is None or n > self._kv[0].shape[-2]:
            cap = max(n, 2 * self._n, self.capacity)
            shape = (*key_states.shape[:2], cap, key_states.shape[-1])
            k, v = key_states.new_empty(shape), value_states.new_empty((*shape[:3], value_states.shape[-1]))
            if self._kv is not None and self._n:
                k[..., : self._n, :] = self._kv[0][..., : self._n, :]
                v[..., : self._n, :] = self._kv[1][..., : self._n, :]
            self._kv = (k, v)
        k, v = self._kv
        k[..., self._n : n, :] = key_states
        v[..., self._n : n, :] = value_states
        self._n = n
        self.keys, self.values = k[..., :n, :], v[..., :n, :]
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self._n

    def crop(self, tokens_to_remove: int) -> None:
        if tokens_to_remove < 0 and self._kv is not None:
            self._n = max(0, self._n + tokens_to_remove)
            k, v = self._kv
            self.keys, self.values = k[..., : self._n, :], v[..., : self._n, :]


def make_cache(model: torch.nn.Module, capacity: int) -> DynamicCache:
    """A DynamicCache whose full-attention layers are :class:`BufferedLayer` (others unchanged)."""
    cache = DynamicCache(config=model.config)
    cache.layers = [
        BufferedLayer(capacity=capacity) if type(layer) is DynamicLayer else layer for layer in cache.layers
    ]
    return cache


def crop_to(cache: DynamicCache, length: int) -> None:
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


class PrefixLM:
    """Scoring and greedy generation after a fixed prefix whose cache is computed once."""

    def __init__(self, backend: Any, prefix_ids: list[int], *, chunk: int = 1024) -> None:
        self.backend = backend
        self.prefix_ids = list(prefix_ids)
        self.chunk = chunk
        self._cache: DynamicCache | None = None
        self.prefill_seconds = 0.0

    @property
    def past_len(self) -> int:
        return len(self.prefix_ids)

    @property
    def cache(self) -> DynamicCache:
        if self._cache is None:
            self._prefill()
        assert self._cache is not None
        return self._cache

    @torch.no_grad()
    def _prefill(self) -> None:
        t0 = time.perf_counter()
        model = self.backend.model
        cache = make_cache(model, capacity=self.backend.context_length)
        ids = torch.tensor([self.prefix_ids], device=self.backend.device)
        for s in range(0, ids.shape[1], self.chunk):
            model(input_ids=ids[:, s : s + self.chunk], **with_cache(model, cache), use_cache=True, logits_to_keep=1)
        self._cache = rollbackable(cache)  # every query is cropped off again
        self.prefill_seconds = time.perf_counter() - t0
        log.info("encoded a %d-token prefix in %.1fs", self.past_len, self.prefill_seconds)

    @torch.no_grad()
    def score(self, query_ids: list[int], cands: list[list[int]]) -> torch.Tensor:
        """Summed log-prob of each candidate after ``prefix + query`` (``[len(cands)]``)."""
        cache = self.cache
        if any(getattr(layer, "is_sliding", False) for layer in getattr(cache, "layers", ())):
            return self._score_one_by_one(query_ids, cands)
        packed = pack([query_ids], [cands], pad_id=self.backend.tokenizer.pad_token_id, past_len=self.past_len)
        try:
            logits = forward_packed(self.backend.model, packed, past_key_values=cache)
        finally:
            crop_to(cache, self.past_len)
        return candidate_logprobs(logits, packed)[0].cpu()

    @torch.no_grad()
    def _score_one_by_one(self, query_ids: list[int], cands: list[list[int]]) -> torch.Tensor:
        """:meth:`score` for a model with sliding-window layers (Gemma 3). The packed batch's own 4-D
        mask spans the whole prefix, but a sliding layer's cache holds only its window, so the two
        disagree; here each candidate runs after the query with the model's ordinary causal mask. A
        sliding layer can be rolled back only once after it recorded (it keeps just its window), so
        every forward is ``query + candidate`` and is cropped straight back to the prefix."""
        model, cache, device = self.backend.model, self.cache, self.backend.device
        sums = []
        try:
            for c in cands:
                out = model(input_ids=torch.tensor([query_ids + c[:-1]], device=device), **with_cache(model, cache),
                            use_cache=True, logits_to_keep=len(c))
                crop_to(cache, self.past_len)
                logp = torch.log_softmax(out.logits[0, -len(c):].float(), dim=-1)
                sums.append(logp[torch.arange(len(c)), torch.tensor(c, device=logp.device)].sum())
        finally:
            crop_to(cache, self.past_len)
        return torch.stack(sums).cpu()

    @torch.no_grad()
    def generate(
        self, suffix_ids: list[int], max_new_tokens: int, stop: Callable[[str], bool] | None = None,
        grammar: Any = None,
    ) -> str:
        """Greedy continuation of ``prefix + suffix``; ends at EOS, ``stop(text)`` or the budget.

        ``grammar`` (a :class:`~agentlab.llm.plan_grammar.PlanGrammar`, or anything with
        ``logits_processor(tokenizer)``) masks each step's logits as ``generate`` would, so the
        constrained ICL manager keeps the cached documents prefix instead of re-encoding it per task."""
        cache, tok, model = self.cache, self.backend.tokenizer, self.backend.model
        eos = {i for i in (tok.eos_token_id,) if i is not None}
        ids = torch.tensor([suffix_ids], device=self.backend.device)
        mask = grammar.logits_processor(tok) if grammar is not None else None
        out: list[int] = []
        try:
            for _ in range(max_new_tokens):
                logits = model(input_ids=ids, **with_cache(model, cache), use_cache=True, logits_to_keep=1).logits
                step = logits[:, -1]
                if mask is not None:  # the processor reads the sequence so far (its length and last token)
                    step = mask(torch.tensor([suffix_ids + out], device=self.backend.device), step)
                nxt = int(step[0].argmax())
                if nxt in eos:
                    break
                out.append(nxt)
                if stop is not None and stop(tok.decode(out, skip_special_tokens=True)):
                    break
                ids = torch.tensor([[nxt]], device=self.backend.device)
        finally:
            crop_to(cache, self.past_len)
        return tok.decode(out, skip_special_tokens=True)


class PrefixCachedBackend(LLMBackend):
    """A local backend whose greedy calls reuse the cache of one known prompt prefix.

    Prompts that do not start with ``prefix_text`` (or sampled calls) go to the wrapped
    backend unchanged, so behaviour never depends on the cache, only speed does.
    """

    def __init__(self, backend: Any, prefix_text: str, *, chunk: int = 1024) -> None:
        self.inner = backend
        self.model_id = backend.model_id
        self.prefix_text = prefix_text
        self.lm = PrefixLM(backend, self._encode(prefix_text), chunk=chunk)
        self.hits = 0
        self.misses = 0

    def _encode(self, text: str) -> list[int]:
        return list(self.inner.tokenizer(text, add_special_tokens=False)["input_ids"])

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped backend's: the cache changes speed, never what the model can do."""
        caps: Capabilities = self.inner.capabilities
        return caps

    @property
    def context_length(self) -> int:
        return int(self.inner.context_length)

    def chat_prompt(self, messages: list[ChatMessage]) -> str:
        return str(self.inner.chat_prompt(messages))

    def count_tokens(self, text: str) -> int:
        if text.startswith(self.prefix_text):
            return self.lm.past_len + len(self._encode(text[len(self.prefix_text) :]))
        return int(self.inner.count_tokens(text))

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        return self.complete(self.inner.chat_prompt(messages), params)

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        params = params or SamplingParams()
        if not params.greedy or not prompt.startswith(self.prefix_text):
            self.misses += 1
            return self.inner.complete(prompt, params)
        self.hits += 1
        stop = (lambda t: any(s in t for s in params.stop)) if params.stop else None
        text = self.lm.generate(self._encode(prompt[len(self.prefix_text) :]), params.max_new_tokens, stop,
                                grammar=params.grammar)
        return [truncate_at_stop(text, params.stop)] * params.n
