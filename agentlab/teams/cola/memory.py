"""The COLA team's memory: past task summaries (long-term) and the last messages (short-term).

Long-term memory is a JSONL file of :class:`MemoryEntry` (one per finished task: the
instruction, the plan that ran, how it ended, a short summary). Before planning, the ``top_n``
entries most similar to the new task (cosine similarity of MiniLM sentence embeddings,
:func:`agentlab.llm.similarity.default_encoder`) go into the planner's prompt, so a team that
solved a similar task before can reuse its plan. The file lives in the run folder unless a
path is configured, so separate runs do not leak into each other by accident.

Short-term memory is the last ``m`` messages the team exchanged in this task (planner,
scheduler, reviewer, person), given to the planner and the reviewer as context. A backtrack
to step k drops the messages of the steps from k on: the dialogue is rolled back with the env.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agentlab.errors import DataError
from agentlab.fileio import append_jsonl, read_jsonl

log = logging.getLogger(__name__)


class Encoder(Protocol):
    """What retrieval needs of a sentence encoder: normalised embeddings, one row per text."""

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray: ...


@dataclass
class MemoryEntry:
    """One finished task as the team remembers it."""

    task_id: str
    instruction: str
    summary: str
    success: bool
    plan: list[dict[str, str]] = field(default_factory=list)
    time: float = field(default_factory=time.time)

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str) -> MemoryEntry:
        try:
            return cls(task_id=str(d["task_id"]), instruction=str(d["instruction"]), summary=str(d["summary"]),
                       success=bool(d["success"]), plan=list(d.get("plan", [])), time=float(d.get("time", 0.0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"not a memory entry ({exc})", where=where) from None

    def text(self) -> str:
        """What is embedded and shown to the planner."""
        return f"{self.instruction} -> {self.summary}"


@dataclass(frozen=True)
class Recalled:
    """A remembered entry and how similar its task is to the new one."""

    entry: MemoryEntry
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"task_id": self.entry.task_id, "summary": self.entry.summary, "success": self.entry.success,
                "score": round(self.score, 4)}


class LongTermMemory:
    """Past task summaries in ``path`` (JSONL), retrieved by embedding similarity."""

    def __init__(self, path: Path, encoder: Encoder | None = None, top_n: int = 3) -> None:
        self.path = Path(path)
        self.top_n = top_n
        self._encoder = encoder
        self._cache: dict[str, np.ndarray] = {}

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            from agentlab.llm.similarity import default_encoder

            self._encoder = default_encoder()
        return self._encoder

    def entries(self) -> list[MemoryEntry]:
        if not self.path.exists():
            return []
        return [MemoryEntry.from_dict(d, f"{self.path}:{i}") for i, d in enumerate(read_jsonl(self.path), 1)]

    def add(self, entry: MemoryEntry) -> None:
        append_jsonl(self.path, asdict(entry))

    def _embed(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            for t, v in zip(todo, self.encoder.encode(todo)):
                self._cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def recall(self, query: str, exclude: Sequence[str] = ()) -> list[Recalled]:
        """The ``top_n`` entries most similar to ``query`` (not those of tasks in ``exclude``), best first."""
        entries = [e for e in self.entries() if e.task_id not in exclude]
        if not entries or self.top_n <= 0:
            return []
        vecs = self._embed([query, *(e.text() for e in entries)])
        scores = vecs[1:] @ vecs[0]
        order = np.argsort(-scores, kind="stable")[: self.top_n]
        return [Recalled(entries[i], float(scores[i])) for i in order]


@dataclass(frozen=True)
class Message:
    """One message of the team's dialogue, tagged with the step (from 0) it belongs to."""

    role: str
    text: str
    step: int

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "step": self.step}


class ShortTermMemory:
    """The team's dialogue; :meth:`recent` gives the last ``size`` messages (0: none)."""

    def __init__(self, size: int = 6) -> None:
        self.size = size
        self.messages: list[Message] = []

    def add(self, role: str, text: str, step: int) -> None:
        self.messages.append(Message(role, text, step))

    def recent(self) -> list[Message]:
        return self.messages[-self.size:] if self.size > 0 else []

    def rollback(self, step: int) -> int:
        """Forget the messages of steps ``step`` and later (a backtrack); how many were dropped."""
        kept = [m for m in self.messages if m.step < step]
        dropped = len(self.messages) - len(kept)
        self.messages = kept
        return dropped

    def render(self) -> str:
        recent = self.recent()
        return "\n".join(f"- {m.role} (step {m.step + 1}): {m.text}" for m in recent) if recent else "(none)"
