"""How often a specialist writes exactly the target calls for synthesized pairs it was not trained on.

A diagnostic beside the task measurements: it separates "the adapter learned the synthesized
distribution" from "it transfers to requests written by people". Each pair's start state is
regenerated from its family and seed, the ToolAgent's first prompt is rendered as in training, and
the reply is decoded greedily under the same call grammar an episode uses; a pair counts when the
calls (``done()`` aside) equal the target's.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from agentlab.llm.base import LLMBackend, SamplingParams
from agentlab.selfinstruct.calls.build import DOMAINS
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.slots import merge, request_values, workspace_values

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.agents.tools import ToolAgent


def _calls(text: str) -> list[str]:
    return [" ".join(ln.split()) for ln in text.splitlines() if ln.strip() and ln.strip() != "done()"]


def exact_match(agent: ToolAgent, llm: LLMBackend, pairs: Sequence[dict[str, Any]], *, progress: bool = True) -> float:
    """The share of ``pairs`` whose greedy, grammar-constrained reply has exactly the target calls."""
    hits = 0
    for p in tqdm(pairs, desc=f"validate {agent.document.name}", disable=not progress):
        gen = DOMAINS[p["toolkit"]][p["family"].split(".", 1)[1]]
        with tempfile.TemporaryDirectory(prefix="agentlab-validate-") as tmp:
            folder = Path(tmp)
            gen(random.Random(p["seed"]), folder)
            values = merge(request_values(p["request"]), workspace_values(folder, agent.kit))
        grammar = CallGrammar.build(agent.kit, values, max_calls=agent.options.max_calls, names=list(p["shown"]),
                                    allow_done=False)
        messages = agent.first_messages(p["request"], p["observation"], list(p["shown"]))
        reply = llm.chat(messages, SamplingParams(max_new_tokens=agent.options.max_new_tokens, grammar=grammar))[0]
        hits += _calls(reply) == _calls(p["reply"])
    return hits / len(pairs) if pairs else 0.0
