"""Keeping synthesized requests away from the evaluation sets (the project tasks and the held-out sets).

The specialists are measured on ``data/tasks``, ``data/tasks_heldout``, ``data/tasks_heldout_v2`` and the
blind desktop GUI set ``data/tasks_desktop_heldout`` (issue #40); a training request that
is a near-copy of one of those instructions would measure memory, not skill. Each synthesized
request is compared with every evaluation instruction by MiniLM cosine similarity, and dropped
above ``threshold``. Only the ``instruction`` field of a task file is read (never its id,
evaluator, expected values or reference solution), and only here: the instructions are not
stored with the pairs, shown to a generator, or used to design the templates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agentlab.paths import data_dir

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.llm.similarity import SentenceEncoder

#: the evaluation task folders (relative to the data folder): nothing trains near their instructions
EVAL_SETS = ("tasks", "tasks_heldout", "tasks_heldout_v2", "tasks_desktop_heldout", "tasks_phone_heldout",
             "tasks_phone_heldout_v2")
#: the blind request sets (``data/requests/*.jsonl``, a ``request`` per line): never training data either
EVAL_REQUESTS = "requests"
#: MiniLM cosine above which a request counts as a near-copy of an evaluation instruction
THRESHOLD = 0.9


def evaluation_instructions(folders: Sequence[Path] | None = None) -> list[str]:
    """The ``instruction`` of every task file in ``folders`` and the ``request`` of every line of
    their ``*.jsonl`` files (default: the evaluation sets and the blind request sets)."""
    out: list[str] = []
    default = [data_dir() / name for name in (*EVAL_SETS, EVAL_REQUESTS)]
    for folder in folders if folders is not None else default:
        for path in sorted(Path(folder).glob("*.json")):
            text = json.loads(path.read_text(encoding="utf-8")).get("instruction")
            if isinstance(text, str) and text.strip():
                out.append(text)
        for path in sorted(Path(folder).glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                text = json.loads(line).get("request") if line.strip() else None
                if isinstance(text, str) and text.strip():
                    out.append(text)
    return out


@dataclass(frozen=True)
class Leakage:
    """Per request: its highest cosine with any evaluation instruction, and whether it is dropped."""

    max_cosine: np.ndarray
    leaked: np.ndarray


class NearCopyFilter:
    """Drops requests whose MiniLM cosine with an evaluation instruction exceeds ``threshold``."""

    def __init__(self, encoder: SentenceEncoder, references: Sequence[str], threshold: float = THRESHOLD) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold {threshold} must lie in (0, 1]")
        self.encoder = encoder
        self.threshold = threshold
        self.references = list(dict.fromkeys(r for r in references if r.strip()))
        self._refs = encoder.encode(self.references) if self.references else None

    def check(self, requests: Sequence[str]) -> Leakage:
        if not requests or self._refs is None:
            z = np.zeros(len(requests), dtype=np.float32)
            return Leakage(z, z.astype(bool))
        sims = self.encoder.encode(list(requests)) @ self._refs.T
        best = sims.max(axis=1)
        return Leakage(best, best > self.threshold)
