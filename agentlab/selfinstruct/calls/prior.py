"""Fit each tool specialist's tool prior on its synthesized (request -> calls) pairs.

The label of a pair is the tool of its first call; the features are the request's
all-MiniLM-L6-v2 embedding (:mod:`agentlab.toolkits.prior` says why and how the prior is used).
Only self-instructed pairs are read, never an evaluation task; the card records the pairs file's
sha256, so a prior can be traced to the data it was fitted on. Seconds per agent on one thread.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from agentlab.fileio import read_jsonl
from agentlab.toolkits.prior import ToolPrior, fit

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.llm.similarity import SentenceEncoder

log = logging.getLogger(__name__)


def first_tool(reply: str) -> str:
    """The tool a pair's reply calls first (``update_value('a.xlsx', ...)`` -> ``update_value``)."""
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    return line.split("(", 1)[0].strip()


#: pairs whose request sits closer than this (MiniLM cosine, the ``max_cosine`` the synthesis
#: recorded against every evaluation instruction) are not fitted on: stricter than the synthesis'
#: own 0.9 cut, so that the prior learns tools from wording, not from near-copies of a test set
MAX_COSINE = 0.8


def fit_prior(pairs_file: Path, encoder: SentenceEncoder, *, l2: float = 1e-3,
              max_cosine: float = MAX_COSINE) -> ToolPrior:
    """The tool prior of one specialist from its pairs file (one JSON object per line with
    ``request``, ``reply`` and ``max_cosine``), leaving out pairs above ``max_cosine``."""
    t0 = time.perf_counter()
    everything = read_jsonl(pairs_file)
    pairs = [p for p in everything if first_tool(str(p.get("reply", ""))) not in ("", "done", "fail")
             and float(p.get("max_cosine", 0.0)) <= max_cosine]
    if not pairs:
        raise ValueError(f"{pairs_file}: no pair with a tool call")
    vectors = encoder.encode([str(p["request"]) for p in pairs])
    card = {"encoder": encoder.model_id, "pairs": pairs_file.name,
            "pairs_sha256": hashlib.sha256(pairs_file.read_bytes()).hexdigest(),
            "agent": pairs_file.stem, "toolkit": str(pairs[0].get("toolkit", "")), "max_cosine": max_cosine,
            "left_out_near_evaluation": sum(float(p.get("max_cosine", 0.0)) > max_cosine for p in everything)}
    prior = fit(vectors, [first_tool(str(p["reply"])) for p in pairs], l2=l2, card=card)
    prior.card["train_seconds"] = round(time.perf_counter() - t0, 2)
    return prior


def fit_priors(pairs_dir: Path, out_dir: Path, agents: list[str], encoder: SentenceEncoder, *,
               max_cosine: float = MAX_COSINE) -> dict[str, ToolPrior]:
    """Fit and save ``out_dir/<Agent>/`` for every agent of ``agents`` that has ``pairs_dir/<Agent>.jsonl``."""
    made: dict[str, ToolPrior] = {}
    for agent in agents:
        pairs = pairs_dir / f"{agent}.jsonl"
        if not pairs.is_file():
            log.info("%s: no pairs at %s; no tool prior", agent, pairs)
            continue
        made[agent] = fit_prior(pairs, encoder, max_cosine=max_cosine)
        made[agent].save(out_dir / agent)
        log.info("%s: tool prior over %d tools from %d pairs, training accuracy %.3f", agent,
                 len(made[agent].names), made[agent].card["examples"], made[agent].card["train_accuracy"])
    return made
