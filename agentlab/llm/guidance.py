"""Constrained decoding on a maintained engine: llguidance, from a Lark grammar.

Every grammar the project decodes under -- a specialist's call sequence
(:class:`~agentlab.toolkits.grammar.CallGrammar`), the manager's plan
(:class:`~agentlab.llm.plan_grammar.PlanGrammar`), the typed GUI action space -- is written once, as
Lark text (:meth:`lark` on each), and handed to llguidance: locally through
:class:`GrammarProcessor` (a ``transformers`` logits processor), and to an OpenAI-compatible server
that runs the same engine (vLLM with ``guided_decoding_backend=guidance``, SGLang, llama.cpp) as
``guided_grammar``. So a local model and a served one are held to the same grammar, and the
engine -- not hand-written token walkers -- decides which tokens keep a reply inside it (any
tokenization of the same text is allowed, forced pieces included).

The one thing a grammar cannot say is a *preference*: the tool and element priors multiply into the
model's choice (:mod:`agentlab.toolkits.prior`). That stays here as a small, text-level hook
(``bias``): given the text decoded so far and the tokens the engine allows next, it returns a
log-bias per token. Working on text, not on one tokenization's trie, it stays right whichever
tokens the engine lets through.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from agentlab.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import torch

log = logging.getLogger(__name__)

#: ``bias(text_so_far, allowed_token_ids, token_texts) -> {token id: log-bias}`` (missing: 0)
Bias = Callable[[str, "np.ndarray", list[str]], dict[int, float]]

_TOKENIZERS: dict[tuple[int, int], Any] = {}
_TEXTS: dict[int, tuple[Any, list[str]]] = {}


def lit(text: str) -> str:
    """``text`` as a Lark string literal (JSON escapes, which llguidance's Lark reads)."""
    return json.dumps(text, ensure_ascii=False)


def alternatives(texts: Iterable[str]) -> str:
    """A group matching exactly one of ``texts`` (distinct, in order)."""
    seen = list(dict.fromkeys(texts))
    if not seen:
        raise ConfigError("a grammar choice needs at least one alternative")
    return "(" + " | ".join(lit(t) for t in seen) + ")"


def lse(values: Iterable[float]) -> float:
    """log(sum(exp(v))) without overflow; ``-inf`` for no values."""
    vals = list(values)
    top = max(vals, default=-math.inf)
    return top + math.log(sum(math.exp(v - top) for v in vals)) if top > -math.inf else -math.inf


def token_texts(tokenizer: Any) -> list[str]:
    """The decoded text of every token id (computed once per tokenizer; the bias hooks read it)."""
    key = id(tokenizer)
    if key not in _TEXTS:
        _TEXTS[key] = (tokenizer, tokenizer.batch_decode([[i] for i in range(len(tokenizer))], skip_special_tokens=False))
    return _TEXTS[key][1]


def ll_tokenizer(tokenizer: Any, n_vocab: int) -> Any:
    """llguidance's view of a Hugging Face fast tokenizer (about 0.5 s to build, so kept per
    tokenizer and logits width: a model's output may be wider than its tokenizer)."""
    key = (id(tokenizer), n_vocab)
    if key not in _TOKENIZERS:
        import llguidance.hf

        try:  # the tokenizer is kept beside it, so its id cannot be reused by another one
            _TOKENIZERS[key] = (tokenizer, llguidance.hf.from_tokenizer(tokenizer, n_vocab=n_vocab))
        except ValueError as exc:  # a slow (Python) tokenizer
            raise ConfigError(f"constrained decoding needs a fast tokenizer ({type(tokenizer).__name__}): {exc}") from None
    return _TOKENIZERS[key][1]


def check_grammar(lark: str) -> None:
    """Raise one ConfigError line when llguidance cannot compile ``lark`` (a bug in a generator)."""
    import llguidance

    is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(lark)
    if is_error:
        raise ConfigError(f"grammar does not compile: {' / '.join(messages)[:300]}")


class GrammarProcessor:
    """A ``transformers`` logits processor keeping every sequence of a batch inside a Lark grammar.

    Built per ``generate`` call: one llguidance matcher per row, fed each row's last token on every
    step; tokens outside the grammar get ``-inf``. A row that has ended (EOS consumed) may only
    repeat EOS, which is what ``generate`` pads finished rows with. ``bias`` (see :data:`Bias`)
    adds a prior to the tokens the grammar allows."""

    def __init__(self, tokenizer: Any, lark: str, bias: Bias | None = None) -> None:
        self.tokenizer = tokenizer
        self.lark = lark
        self.bias = bias
        self.eos = int(tokenizer.eos_token_id)
        self.matchers: list[Any] | None = None
        self.prompt_len = 0
        self.generated: list[list[int]] = []

    def _start(self, rows: int, n_vocab: int) -> None:
        import llguidance

        tok = ll_tokenizer(self.tokenizer, n_vocab)
        self.matchers = []
        for _ in range(rows):
            m = llguidance.LLMatcher(tok, self.lark, log_level=0)
            if m.is_error():
                raise ConfigError(f"grammar does not compile: {m.get_error().splitlines()[0][:300]}")
            self.matchers.append(m)
        self.generated = [[] for _ in range(rows)]

    def _allowed(self, matcher: Any, n_vocab: int) -> np.ndarray:
        words = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint32)
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:n_vocab]
        return bits.astype(bool)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        rows, n_vocab = scores.shape
        if self.matchers is None or len(self.matchers) != rows:
            self._start(rows, n_vocab)
            self.prompt_len = input_ids.shape[1]
        elif input_ids.shape[1] > self.prompt_len:
            for i, tok in enumerate(input_ids[:, -1].tolist()):
                m = self.matchers[i]
                if m.is_stopped() or m.is_error():
                    continue  # a finished row: generate pads it
                self.generated[i].append(int(tok))
                if not m.consume_token(int(tok)):
                    log.warning("grammar: token %d left the grammar (%s); the row ends", tok, m.get_error()[:200])
        assert self.matchers is not None
        mask = np.zeros((rows, n_vocab), dtype=bool)
        bias = torch.zeros_like(scores) if self.bias is not None else None
        for i, m in enumerate(self.matchers):
            if m.is_stopped() or m.is_error():
                mask[i, self.eos] = True
                continue
            mask[i] = self._allowed(m, n_vocab)
            if bias is not None and self.bias is not None:
                allowed = np.flatnonzero(mask[i])
                text = self.tokenizer.decode(self.generated[i], skip_special_tokens=True)
                for tok, value in self.bias(text, allowed, token_texts(self.tokenizer)).items():
                    bias[i, tok] = value if value > -math.inf else -1e4
        out = scores if bias is None else scores + bias
        return out.masked_fill(~torch.from_numpy(mask).to(scores.device), float("-inf"))

