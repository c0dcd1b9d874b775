"""Plans well-formed by construction: decoding restricted to the manager's plan grammar.

A :class:`PlanGrammar` says what a plan may look like::

    plan := step{min_steps..max_steps} EOS
    step := "###" NAME ":" SUBTASK "###" "\\n"

with NAME one of the candidate agents (the router's top-K) and never the previous step's
agent, SUBTASK free text without ``#`` or a line break, 1..``max_subtask_tokens`` tokens
(optionally only words of ``copy_from``, the task's own text). The grammar is Lark text
(:meth:`PlanGrammar.lark`, "not the previous agent" spelled out as one rule per previous agent
and step) that llguidance enforces (:mod:`agentlab.llm.guidance`). A backend that can honour it
declares ``Capabilities.plan_grammar`` and reads ``SamplingParams.grammar``:

* :class:`~agentlab.llm.local.LocalHFBackend` decodes under it, so every answer parses;
* an OpenAI-compatible server running the same engine (``llm.guided_grammar: true``: vLLM with the
  ``guidance`` backend, SGLang) gets the same text as ``guided_grammar``; one configured with
  ``llm.guided_regex: true`` gets :meth:`PlanGrammar.regex`, which cannot say "not the previous
  agent", so that rule is left to the manager's check and retry there;
* every other backend refuses a grammar with one :class:`~agentlab.errors.ConfigError` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentlab.errors import ConfigError
from agentlab.llm.guidance import GrammarProcessor, lit


@dataclass(frozen=True)
class PlanGrammar:
    """The shape of a plan the decoder may produce."""

    agents: tuple[str, ...]
    max_steps: int = 3
    min_steps: int = 1
    max_subtask_tokens: int = 40
    #: restrict subtask words to this text's words (the task instruction); None: any text
    copy_from: str | None = None

    def __post_init__(self) -> None:
        if not self.agents:
            raise ConfigError("a plan grammar needs at least one candidate agent")
        if not 1 <= self.min_steps <= self.max_steps:
            raise ConfigError(f"plan grammar: need 1 <= min_steps ({self.min_steps}) <= max_steps ({self.max_steps})")
        if len(self.agents) == 1 and self.max_steps > 1:  # no agent twice in a row: one agent makes one step
            object.__setattr__(self, "max_steps", 1)
            object.__setattr__(self, "min_steps", 1)

    def regex(self) -> str:
        """The grammar as a regular expression (for servers with regex-guided decoding; it
        cannot forbid the same agent twice in a row)."""
        names = "|".join(re.escape(a) for a in self.agents)
        step = rf"###({names}):[^#\n]{{1,{4 * self.max_subtask_tokens}}}###\n"
        return rf"({step}){{{self.min_steps},{self.max_steps}}}"

    def lark(self) -> str:
        """The grammar as Lark text for llguidance. ``s_<p>_<i>``: what may follow ``i`` steps
        whose last agent was ``p`` (``p = 0``: none yet); a step never repeats the last agent."""
        agents = list(self.agents)
        rules = ["start: s0_0"]
        for i in range(self.max_steps):
            for p in range(1, len(agents) + 1) if i else [0]:
                alts = []
                for a, name in enumerate(agents, start=1):
                    if a == p:
                        continue
                    step = f"{lit('###' + name + ':')} sub {lit('###' + chr(10))}"
                    alts.append(step + (f" s{a}_{i + 1}" if i + 1 < self.max_steps else ""))
                body = "(" + " | ".join(alts) + ")"
                rules.append(f"s{p}_{i}: {body}" + ("?" if i >= self.min_steps else ""))
        rules.append(f"sub[max_tokens={self.max_subtask_tokens}]: /{self._subtask_regex()}/")
        return "\n".join(rules) + "\n"

    def _subtask_regex(self) -> str:
        """A subtask's text: no ``#`` or line break; with ``copy_from``, only the task's own words
        (as written, lower-case or capitalised), each after at most one space."""
        if self.copy_from is None:
            return r"[^#\n\r]+"
        words = {w.lower() for w in re.findall(r"[\w'.,/-]+|[^\s#]", self.copy_from)}
        words |= {w.rstrip(".,") for w in words if w.rstrip(".,")} | {".", ","}
        forms = sorted({f for w in words for f in (w, w.capitalize(), w.upper())}, key=lambda f: (-len(f), f))
        alt = "|".join(re.escape(f).replace("/", "\\/") for f in forms)
        return rf"( ?({alt}))+"

    def logits_processor(self, tokenizer: Any) -> GrammarProcessor:
        """The local decoder's constraint for this grammar (llguidance over :meth:`lark`)."""
        return GrammarProcessor(tokenizer, self.lark())


def refuse_grammar(backend: Any, grammar: Any) -> None:
    """Raise the one-line ConfigError a backend without grammar support gives for a grammar."""
    if grammar is not None:
        raise ConfigError(f"{type(backend).__name__} ({getattr(backend, 'model_id', '?')}) cannot constrain decoding to the plan "
                          "grammar (capabilities.plan_grammar is false); use the embedded/local model, an OpenAI-compatible "
                          "server with llm.guided_grammar: true (llguidance) or llm.guided_regex: true (vLLM), or the unconstrained manager (--unconstrained)")
