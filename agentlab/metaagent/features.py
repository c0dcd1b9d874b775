"""What the frozen backbone contributes to AgentToken: the hidden state h that the head multiplies.

:class:`FeatureExtractor` is the seam between the MetaAgent and its backbone. The text
extractor here renders the router prompt around a task (and a text rendering of the initial
state), runs the frozen causal LM and returns, per query, ``h`` (the final hidden state
after the last norm, i.e. exactly what the LM head sees) and ``vocab_lse = logsumexp(W_V h)``.
A vision-language backbone would implement the same protocol from (image, text).

The router prompt is the same for every task up to the first placeholder, so its key/value
cache is computed once and reused for every batch (prefix caching); the token sequence of a
query is therefore defined as ``tokens(prefix) + tokens(rest)``. Training, routing and the
naive reference in the tests all use that same sequence.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import torch
from pydantic import BaseModel, ConfigDict

from agentlab.dialogue.templates import PromptTemplate, load_template
from agentlab.errors import DataError
from agentlab.llm.kv_cache import returned_cache, with_cache
from agentlab.metaagent.manager import render_state

if TYPE_CHECKING:
    from agentlab.llm.local import LocalHFBackend

log = logging.getLogger(__name__)

SENTINEL = "\x00AGENTLAB_USER\x00"


@dataclass(frozen=True)
class Query:
    """One routing input: the task, and optionally the initial state (text and/or image)."""

    task: str
    state: str | None = None
    image: Path | None = None  # for a future VLM extractor; the text extractor ignores it


@dataclass
class Features:
    """``h [n, d]`` and ``vocab_lse [n]`` (fp32, CPU), one row per query."""

    h: torch.Tensor
    vocab_lse: torch.Tensor


class FeatureSpec(BaseModel):
    """Which hidden state is h.

    ``layer=None, pool="last"`` is the paper's AgentToken: the final-norm state at the last
    prompt position, so ``[W_V; W_A]·h`` is a genuine next-token distribution and decoding can
    continue with word tokens. Other settings (an intermediate layer, or the mean over the
    task's tokens) pass that state through the model's final norm and the same head: a
    variant for the tuning study that only supports first-position ranking.
    ``chat=True`` wraps the prompt in the model's chat template (a user turn, then the
    assistant turn starts); on SmolLM2-135M that routed worse than the raw prompt, whose
    last words ask the model for the application name (see the tuning study).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    layer: int | None = None
    pool: Literal["last", "mean"] = "last"
    chat: bool = False

    @property
    def is_next_token(self) -> bool:
        return self.layer is None and self.pool == "last"

    def key(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True)


class FeatureExtractor(Protocol):
    """What AgentToken needs from a backbone."""

    model_id: str
    fingerprint: str
    spec: FeatureSpec
    template: PromptTemplate

    def features(self, queries: list[Query], batch_size: int = 16) -> Features: ...

    def word_head(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The frozen word-token head ``W_V [|V|, d]`` and its bias (or None)."""
        ...

    def cache_namespace(self) -> str:
        """Identifies (model, template, feature spec): hidden states are cached under it."""
        ...


class TextFeatureExtractor:
    """Features from a local Hugging Face causal LM (:class:`~agentlab.llm.local.LocalHFBackend`)."""

    def __init__(
        self, backend: LocalHFBackend, template: str | PromptTemplate = "metaagent/router_agenttoken", spec: FeatureSpec | None = None
    ) -> None:
        self.backend = backend
        self.model = backend.model
        self.tokenizer = backend.tokenizer
        self.model_id = backend.model_id
        self.fingerprint = backend.fingerprint
        self.template = template if isinstance(template, PromptTemplate) else load_template(template)
        self.spec = spec or FeatureSpec()
        if not {"task"} <= self.template.fields <= {"task", "state"}:
            raise DataError(
                f"router template must use {{task}} (and optionally {{state}}), found {sorted(self.template.fields)}",
                where=self.template.path or self.template.name,
            )
        self._prefix_text, self._suffix_template = self._split()
        self.prefix_ids: list[int] = self.tokenizer(self._prefix_text)["input_ids"]
        self._prefix_cache = None
        self.device = next(self.model.parameters()).device

    # ------------------------------------------------------------------ prompt
    def _split(self) -> tuple[str, str]:
        """(fixed prefix, rest of the prompt with placeholders), chat-wrapped when configured."""
        text = self.template.text
        if self.spec.chat and self.backend.capabilities.chat_template:
            from agentlab.llm.base import ChatMessage

            wrapped = self.backend.chat_prompt([ChatMessage("user", SENTINEL)])
            before, after = wrapped.split(SENTINEL)
            text = before + text.rstrip("\n") + after
        first = min(text.index(f"{{{f}}}") for f in self.template.fields)
        cut = text.rfind("\n", 0, first) + 1  # split at a line start so BPE never merges across
        return text[:cut], text[cut:]

    def render(self, query: Query) -> str:
        """The full prompt text of a query (for display and the manager)."""
        return self._prefix_text + self._rest(query)

    def _rest(self, query: Query) -> str:
        rest = self._suffix_template.replace("{state}", render_state(query.state))
        return rest.replace("{task}", query.task.strip())

    def rest_ids(self, task: str) -> list[int]:
        """The token ids after the prefix for a state-less task (what single-task routes share the start of)."""
        return list(self.tokenizer(self._rest(Query(task)), add_special_tokens=False)["input_ids"])

    def query_ids(self, query: Query) -> list[int]:
        """The token ids the model reads for a query: prefix tokens + rest tokens."""
        return self.prefix_ids + self.tokenizer(self._rest(query), add_special_tokens=False)["input_ids"]

    def cache_namespace(self) -> str:
        raw = f"{self.fingerprint}|{self.template.sha256}|{self.spec.key()}"
        return hashlib.sha256(raw.encode()).hexdigest()[:20]

    def word_head(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        head = self.model.get_output_embeddings()
        return head.weight, getattr(head, "bias", None)

    # ------------------------------------------------------------------ forward
    def _norm(self) -> torch.nn.Module:
        base = self.model.base_model
        norm = getattr(base, "norm", None) or getattr(base, "final_layernorm", None)
        if norm is None:
            raise DataError(f"cannot find the final norm of {self.model_id} for layer={self.spec.layer}")
        return norm

    @torch.no_grad()
    def _prefix(self) -> Any:  # the model's key/value cache of the shared prefix
        if self._prefix_cache is None:
            ids = torch.tensor([self.prefix_ids], device=self.device)
            out = self.model.base_model(input_ids=ids, use_cache=True)
            self._prefix_cache = returned_cache(out)
        return self._prefix_cache

    @torch.no_grad()
    def hidden_for_ids(self, rests: list[list[int]]) -> torch.Tensor:
        """h for sequences ``prefix + rest`` under this extractor's spec."""
        return self.hidden_multi(rests, [self.spec])[0]

    @torch.no_grad()
    def hidden_multi(self, rests: list[list[int]], specs: list[FeatureSpec]) -> list[torch.Tensor]:
        """States for several specs from ONE forward pass (right-padded batch over the cached prefix)."""
        n, p = len(rests), len(self.prefix_ids)
        longest = max(len(r) for r in rests)
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.full((n, longest), pad, dtype=torch.long)
        mask = torch.zeros((n, p + longest), dtype=torch.long)
        mask[:, :p] = 1
        for i, r in enumerate(rests):
            ids[i, : len(r)] = torch.tensor(r)
            mask[i, p : p + len(r)] = 1
        cache = None
        if p:
            cache = copy.deepcopy(self._prefix())
            if n > 1:
                cache.batch_repeat_interleave(n)
        positions = torch.arange(p, p + longest).unsqueeze(0).expand(n, -1)
        out = self.model.base_model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            **with_cache(self.model.base_model, cache),
            use_cache=True,
            output_hidden_states=any(s.layer is not None for s in specs),
        )
        lengths = torch.tensor([len(r) for r in rests])
        valid = (torch.arange(longest).unsqueeze(0) < lengths.unsqueeze(1)).float().unsqueeze(-1)
        result = []
        for spec in specs:
            if spec.layer is None:
                states = out.last_hidden_state
            else:
                states = self._norm()(out.hidden_states[spec.layer])
            states = states.float().cpu()
            if spec.pool == "last":
                result.append(states[torch.arange(n), lengths - 1])
            else:
                result.append((states * valid).sum(1) / valid.sum(1))
        return result

    @torch.no_grad()
    def vocab_logits(self, h: torch.Tensor) -> torch.Tensor:
        w, b = self.word_head()
        logits = h.to(w.dtype).to(w.device) @ w.T
        if b is not None:
            logits = logits + b
        return logits.float().cpu()

    def check_length(self, queries: list[Query]) -> list[list[int]]:
        """Token ids after the prefix; a prompt longer than the context is a one-line error."""
        limit = self.backend.capabilities.context_length or 2048
        out = []
        for q in queries:
            rest = self.tokenizer(self._rest(q), add_special_tokens=False)["input_ids"]
            if len(self.prefix_ids) + len(rest) + 8 > limit:
                raise DataError(
                    f"task of {len(rest)} tokens does not fit the {limit}-token context of {self.model_id}: "
                    f"'{q.task[:60]}...'; shorten it"
                )
            out.append(rest)
        return out

    def features(self, queries: list[Query], batch_size: int = 16) -> Features:
        rests = self.check_length(queries)
        hs: list[torch.Tensor] = []
        # Sort by length so batches carry little padding; restore order at the end.
        order = sorted(range(len(rests)), key=lambda i: len(rests[i]))
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            hs.append(self.hidden_for_ids([rests[i] for i in idx]))
        if not hs:
            d = self.model.config.hidden_size
            return Features(torch.empty(0, d), torch.empty(0))
        h_sorted = torch.cat(hs)
        h = torch.empty_like(h_sorted)
        h[torch.tensor(order)] = h_sorted
        lse = torch.logsumexp(self.vocab_logits(h), dim=-1)
        return Features(h=h, vocab_lse=lse)
