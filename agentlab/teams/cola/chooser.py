"""COLA's task scheduler as a model: it reads the candidate agents' capability descriptions and
names the one that should take the subtask.

In the COLA paper the scheduler is itself an LLM agent that assigns each subtask to a decision
agent from their self-descriptions. The team's default scheduler is a router's ranking
(:mod:`agentlab.teams.cola.scheduler`: fast, and the strongest choice on the embedded model);
``--team-option scheduler=model`` asks the ``scheduler`` role's model instead (:class:`ModelChooser`):
the subtask and, for each of the router's ``scheduler_candidates`` best agents able to act here,
its name and capability description (``cola/scheduler``); the reply is one name, decoded under a
:class:`~agentlab.llm.choice_grammar.ChoiceGrammar` where the backend can (a local model, an
llguidance or regex-guided server) and read off the reply otherwise. The chosen agent goes first;
the router's order stays behind it for reassignments. A reply that names no candidate after the
retries leaves the router's order as it was, and the scheduler's message says so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from agentlab.dialogue.ask import RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template
from agentlab.errors import ActionParseError
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.llm.choice_grammar import ChoiceGrammar
from agentlab.pool.store import AgentPool

PROMPTS = ("cola/scheduler", "cola/reask")


def parse_choice(reply: str, candidates: Sequence[str]) -> str:
    """The candidate ``reply`` names (the longest name written as a whole word, case-insensitive)."""
    named = [c for c in sorted(candidates, key=len, reverse=True)
             if re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", reply or "", re.IGNORECASE)]
    if not named:
        raise ActionParseError(f"the reply names none of the agents ({', '.join(candidates)})")
    return named[0]


class ModelChooser:
    """Asks ``llm`` which of the candidates takes a subtask."""

    def __init__(self, llm: LLMBackend, pool: AgentPool, *, max_attempts: int = 2, sampling: RetrySampling) -> None:
        self.llm, self.pool, self.max_attempts, self.sampling = llm, pool, max_attempts, sampling
        self.template = load_template("cola/scheduler")

    def describe(self, name: str) -> str:
        """One candidate as the prompt lists it: its name and capability description, on one line."""
        return f"- {name}: {' '.join(self.pool.get(name).capabilities.split())}"

    def __call__(self, subtask: str, candidates: Sequence[str]) -> tuple[str | None, str]:
        """The chosen candidate (None: no usable reply) and the last reply."""
        if not candidates:
            return None, ""
        agents = "\n".join(self.describe(c) for c in candidates)

        def prompt(feedback: str) -> list[ChatMessage]:  # a re-ask is the question again, with the problem
            return [ChatMessage("user", self.template.render(
                subtask=subtask, agents=agents, feedback=f"\n{feedback}\n" if feedback else "").strip())]
        grammar = ChoiceGrammar(tuple(candidates)) if self.llm.capabilities.plan_grammar else None

        def params(i: int) -> SamplingParams:
            return dataclasses.replace(self.sampling(i), grammar=grammar) if grammar is not None else self.sampling(i)

        asked = ask_until_parsed(self.llm, prompt, lambda text: parse_choice(text, candidates),
                                 max_attempts=self.max_attempts, params=params, correction=load_template("cola/reask"), label="cola scheduler")
        return asked.value, asked.reply


__all__ = ["ModelChooser", "PROMPTS", "parse_choice"]
