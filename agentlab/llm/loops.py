"""Cutting replies that repeat themselves: an n-gram loop guard for decoding and for replies.

Why: a small model that starts to repeat a line or a phrase keeps repeating it until the token
cap (measured on the embedded 135M model: the code agent's replies ran to the cap in about 186 s
per task, ``a ``` block is not closed``). Once the end of a sequence is the same block several
times over, nothing new will come: decoding stops there, the reply keeps one copy of the block,
and the caller is told (``LocalHFBackend.loop_cuts``; the episode row's ``loop_cuts``).

"Certain" means: the last ``max(repeats * p, min_span)`` items are periodic with a period ``p``
of at most ``max_period`` items. With the defaults (3 repeats, a span of at least 24 tokens) a
legitimately repeated short pattern ("0, 0, 0") needs eight or more copies in a row before it is
cut, and a repeated line three.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class LoopRule:
    """When the end of a sequence counts as a loop."""

    max_period: int = 64
    repeats: int = 3
    min_span: int = 24

    def loop_start(self, seq: Sequence[T]) -> int | None:
        """Where the repeated tail of ``seq`` should be cut (one copy of the block kept), or None.

        Checks each period from the end, giving up on a period at its first mismatch, so the
        usual cost per call is a handful of comparisons."""
        n = len(seq)
        for p in range(1, min(self.max_period, n // self.repeats) + 1):
            span = max(self.repeats * p, self.min_span)
            if span > n:
                break
            if all(seq[i] == seq[i - p] for i in range(n - 1, n - span + p - 1, -1)):
                start = n - span
                while start > 0 and seq[start - 1] == seq[start - 1 + p]:
                    start -= 1  # the loop began earlier than the span that proved it
                return start + p
        return None


DEFAULT_RULE = LoopRule()


def cut_text_loop(text: str, rule: LoopRule | None = None) -> tuple[str, bool]:
    """``text`` cut after the first copy of a block it ends by repeating (whitespace-separated
    words; for replies that arrive whole, e.g. from an endpoint), and whether it was cut."""
    rule = rule or LoopRule(max_period=48, repeats=3, min_span=18)
    words = text.split()
    cut = rule.loop_start(words)
    if cut is None:
        return text, False
    # the character offset of word ``cut``: walk the words through the text
    pos = 0
    for w in words[:cut]:
        pos = text.index(w, pos) + len(w)
    return text[:pos], True


def stopping_criteria(prompt_len: int, rule: LoopRule | None = None) -> Any:
    """A transformers ``StoppingCriteria`` that ends each sequence once its new tokens loop."""
    import torch
    from transformers import StoppingCriteria

    guard = rule or DEFAULT_RULE

    class LoopGuard(StoppingCriteria):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
            done = [guard.loop_start(row[prompt_len:].tolist()) is not None for row in input_ids]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return LoopGuard()
