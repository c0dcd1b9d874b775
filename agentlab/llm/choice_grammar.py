"""A reply that is exactly one of a few names: the grammar of a choice.

Why: a model asked to pick one agent (COLA's task scheduler choosing among the decision agents'
capability descriptions) must answer with a name the caller knows; a 135M model left free
writes a sentence about it. Decoded under this grammar a local model can only emit one of the
``choices`` verbatim, and an OpenAI-compatible server running llguidance (``guided_grammar``)
or regex-guided decoding (``guided_regex``) gets the same constraint (:mod:`agentlab.llm.guidance`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentlab.errors import ConfigError
from agentlab.llm.guidance import GrammarProcessor, alternatives


@dataclass(frozen=True)
class ChoiceGrammar:
    """Exactly one of ``choices``, then the end of the reply."""

    choices: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.choices:
            raise ConfigError("a choice grammar needs at least one choice")

    def lark(self) -> str:
        return f"start: {alternatives(self.choices)}\n"

    def regex(self) -> str:
        return "(" + "|".join(re.escape(c) for c in dict.fromkeys(self.choices)) + ")"

    def logits_processor(self, tokenizer: Any) -> GrammarProcessor:
        return GrammarProcessor(tokenizer, self.lark())


__all__ = ["ChoiceGrammar"]
