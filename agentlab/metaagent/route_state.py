"""The hidden state of ONE new task, as cheaply as the backbone allows: AgentToken's cold route.

A task routed alone, with nothing cached for it, pays one forward pass of the frozen backbone.
Almost all of that pass is matrix products over the task's own tokens, so the only work worth
removing is work that is *not* the task's:

- the prompt head every task without a state shares (the fixed prefix, plus the first tokens of
  the rest, e.g. ``The task is:``) is run once, when the router is first used, and kept as a
  key/value cache; a task runs only the tokens after the longest run of ids it shares with that
  head (compared as token ids, so a task whose tokens differ just falls back to the prefix);
- the cache is not deep-copied per task: each task's cache starts as *views* of the shared one
  and ``torch.cat`` in the attention layers writes the task's own keys into new tensors, so the
  shared head is never modified;
- only ``h`` is read (the routing decision needs ``W_V h`` once, in the decoder; the
  ``logsumexp`` that training needs is not computed);
- the words the model may write before an agent token continue from this task's cache, one
  token per step, instead of re-running ``prefix + task + words`` each step.

The result is the same state the batched path computes (same token ids, same positions, the same
model), up to floating-point summation order; ``tests/metaagent/test_route_state.py`` checks that
the rankings of the routing set are identical and the probabilities agree to 1e-4.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import torch

from agentlab.llm.kv_cache import returned_cache, with_cache

if TYPE_CHECKING:
    from agentlab.metaagent.features import Query, TextFeatureExtractor

log = logging.getLogger(__name__)


def shared_head(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two id lists."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class TaskRun:
    """One task's forward pass over the shared head; :meth:`extend` appends one decoded token."""

    def __init__(self, model: Any, cache: Any, length: int, h: torch.Tensor, device: torch.device) -> None:
        self._model, self._cache, self.length, self._device = model, cache, length, device
        #: final-norm hidden state at the last position (fp32, CPU, ``[d]``)
        self.h = h

    @torch.no_grad()
    def extend(self, token: int) -> torch.Tensor:
        """h after one more token (the greedy word the model preferred to an agent token)."""
        out = self._model.base_model(
            input_ids=torch.tensor([[token]], device=self._device),
            position_ids=torch.tensor([[self.length]], device=self._device),
            **with_cache(self._model.base_model, self._cache),
            use_cache=True,
        )
        self.length += 1
        self.h = out.last_hidden_state[0, -1].float().cpu()
        return self.h


class RouteStates:
    """Single-task hidden states over a once-computed prompt head (see the module docstring).

    ``supported`` is False for what the shortcut does not cover (a pooled or intermediate-layer
    feature, a cache with sliding-window layers such as Gemma 3's): callers then use the batched
    path, which gives the same states, only slower."""

    def __init__(self, fx: TextFeatureExtractor) -> None:
        self.fx = fx
        self.model = fx.model
        self._head_ids: list[int] | None = None
        self._kv: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self.supported = fx.spec.is_next_token

    def _head(self) -> list[int]:
        """Prefix + the tokens every state-less task's rest starts with (two dummy tasks agree on them)."""
        a, b = self.fx.rest_ids("Open the settings."), self.fx.rest_ids("Zoom to 150 percent.")
        return self.fx.prefix_ids + a[: shared_head(a, b)]

    @torch.no_grad()
    def warm(self) -> None:
        """Run the shared head once (task-independent: counted when the router loads, not per route)."""
        if self._kv is not None or not self.supported:
            return
        from transformers.cache_utils import DynamicLayer

        head = self._head()
        out = self.model.base_model(input_ids=torch.tensor([head], device=self.fx.device), use_cache=True)
        cache = returned_cache(out)
        layers = getattr(cache, "layers", None)
        if not layers or any(type(layer) is not DynamicLayer for layer in layers):
            log.info("%s: the cache has non-full-attention layers; single-task routing uses the batched path",
                     self.fx.model_id)
            self.supported = False
            return
        self._head_ids, self._kv = head, [(layer.keys, layer.values) for layer in layers]

    def _cache_of(self, length: int) -> Any:
        """A fresh cache whose layers *view* the first ``length`` positions of the shared head."""
        from transformers.cache_utils import DynamicCache

        assert self._kv is not None
        cache = DynamicCache(config=self.model.config)
        for layer, (k, v) in zip(cache.layers, self._kv):
            layer.lazy_initialization(k, v)
            layer.keys, layer.values = k[..., :length, :], v[..., :length, :]
        return cache

    def _split(self, query: Query) -> tuple[list[int], int]:
        """The query's ids (``prefix + rest``, as :meth:`TextFeatureExtractor.query_ids`) and how many
        of them the shared head already holds (at least the last token runs: its state is h)."""
        assert self._head_ids is not None
        ids = self.fx.prefix_ids + self.fx.check_length([query])[0]
        return ids, max(0, min(shared_head(ids, self._head_ids), len(ids) - 1))

    def tokens_to_run(self, query: Query) -> int:
        """How many tokens a cold route of ``query`` runs through the backbone (its own, after the head)."""
        self.warm()
        if not self.supported or self._head_ids is None:
            return len(self.fx.prefix_ids + self.fx.check_length([query])[0])
        ids, shared = self._split(query)
        return len(ids) - shared

    @torch.no_grad()
    def run(self, query: Query) -> TaskRun:
        """The forward pass of one query (``prefix + rest`` token ids, as :meth:`TextFeatureExtractor.query_ids`)."""
        self.warm()
        if not self.supported or self._kv is None or self._head_ids is None:
            raise RuntimeError("RouteStates.run on an unsupported backbone or feature; check .supported first")
        ids, shared = self._split(query)
        todo = ids[shared:]
        cache = self._cache_of(shared)
        device = self.fx.device
        out = self.model.base_model(
            input_ids=torch.tensor([todo], device=device),
            position_ids=torch.arange(shared, len(ids), device=device).unsqueeze(0),
            **with_cache(self.model.base_model, cache),
            use_cache=True,
        )
        return TaskRun(self.model, cache, len(ids), out.last_hidden_state[0, -1].float().cpu(), device)
