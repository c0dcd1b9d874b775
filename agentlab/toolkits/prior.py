"""A prior over which tool a request starts with, learnt from synthesized (request -> calls) pairs.

A 135M specialist often writes a well-formed call to the *wrong* tool while the right one is on
its list (``update_value`` for "make the codes capital letters", ``delete_row`` for "delete that
sheet"). Which tool a request needs is a text-classification question that a sentence encoder
answers better than the small model's first tokens: a multinomial logistic regression over the
request's sentence embedding (all-MiniLM-L6-v2), fitted on the specialist's self-instructed pairs
(the first call's tool is the label; no evaluation task is ever a training example).

At decoding time the prior is one more expert: :class:`~agentlab.toolkits.grammar.CallGrammar`
adds ``weight * log p(tool | request)`` along the trie of tool names of a reply's first call, so
the model's own preference and the prior multiply (a product of experts); the arguments stay
the model's alone. Files: ``prior.safetensors`` (weights) and ``prior.json`` (tool names, the
encoder, the pairs' sha256, settings, training accuracy).
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentlab.errors import ConfigError
from agentlab.fileio import atomic_path, atomic_write_json

WEIGHTS = "prior.safetensors"
CARD = "prior.json"
#: the card's ``features`` when each request's words are read beside its embedding
WORDS = "embedding+words"
#: buckets the words are hashed into (crc32: the same on every machine and Python)
WORD_BUCKETS = 1024


def word_features(text: str) -> np.ndarray:
    """The request's lower-cased words, each a 1 in its crc32 bucket, scaled to unit length.

    Why beside the sentence embedding: all-MiniLM-L6-v2 weighs a request's names and setting more
    than its verb ("In Thunderbird's Local Folders inbox, star the message 'Invoice 4471'" sat
    nearer the synthesized *delete* and *open* requests about "Invoice 2291" than the *star*
    ones). A linear model over the words learns "star", "flag", "bin" from the pairs, and words
    that come with every skill (values, context phrases) get no weight."""
    v = np.zeros(WORD_BUCKETS)
    for w in set(re.findall(r"[a-z]+", text.lower())):
        v[zlib.crc32(w.encode()) % WORD_BUCKETS] = 1.0
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


@dataclass(frozen=True)
class ToolPrior:
    """``p(tool | request)`` as softmax(``W·e + b``) over ``names``, ``e`` the request's embedding."""

    names: tuple[str, ...]
    weight: np.ndarray  # (dim, len(names))
    bias: np.ndarray  # (len(names),)
    card: dict[str, Any] = field(default_factory=dict)

    @property
    def encoder(self) -> str:
        return str(self.card.get("encoder", ""))

    def features(self, vector: np.ndarray, text: str) -> np.ndarray:
        """What the prior reads of one request: its embedding, and its words when fitted so
        (the card's ``features`` is :data:`WORDS`)."""
        if self.card.get("features") == WORDS:
            return np.concatenate([np.asarray(vector, dtype=np.float64), word_features(text)])
        return np.asarray(vector)

    def probs(self, vector: np.ndarray) -> dict[str, float]:
        """Each tool's probability for one request's features (:meth:`features`); a length the
        weights were not fitted on (a card edited by hand, another encoder) is one line."""
        if np.shape(vector) != (self.weight.shape[0],):
            raise ConfigError(f"tool prior reads {self.weight.shape[0]} features, got {np.shape(vector)}: "
                              f"fit it again (card features: {self.card.get('features', 'embedding')})")
        logits = np.asarray(vector, dtype=np.float64) @ self.weight.astype(np.float64) + self.bias
        logits -= logits.max()
        p = np.exp(logits)
        p /= p.sum()
        return {n: float(v) for n, v in zip(self.names, p)}

    def log_bias(self, vector: np.ndarray, allowed: list[str], weight: float = 1.0) -> dict[str, float]:
        """``weight * log p`` renormalised over ``allowed`` (the tools a grammar may call); a name the
        prior never saw (``fail``) gets the smallest known probability, so the prior never prefers it."""
        p = self.probs(vector)
        floor = min(p.values()) if p else 1.0
        raw = {n: p.get(n, floor) for n in allowed}
        total = sum(raw.values()) or 1.0
        return {n: weight * math.log(max(v / total, 1e-12)) for n, v in raw.items()}

    def save(self, folder: str | Path) -> Path:
        from safetensors.numpy import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(folder / WEIGHTS) as tmp:
            save_file({"weight": np.ascontiguousarray(self.weight, dtype=np.float32),
                       "bias": np.ascontiguousarray(self.bias, dtype=np.float32)}, str(tmp))
        atomic_write_json(folder / CARD, {**self.card, "names": list(self.names)})
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> ToolPrior:
        """The prior saved in ``folder``; a missing or unreadable one is a :class:`ConfigError` naming it."""
        from safetensors.numpy import load_file

        folder = Path(folder)
        try:
            card = json.loads((folder / CARD).read_text(encoding="utf-8"))
            tensors = load_file(str(folder / WEIGHTS))
            names = tuple(str(n) for n in card.pop("names"))
            weight, bias = tensors["weight"], tensors["bias"]
        except Exception as exc:  # a missing file, bad JSON, or safetensors' own header errors
            raise ConfigError(f"tool prior unreadable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", where=str(folder)) from None
        if weight.ndim != 2 or weight.shape[1] != len(names) or bias.shape != (len(names),):
            raise ConfigError(f"tool prior shapes {weight.shape}/{bias.shape} do not fit {len(names)} tools",
                              where=str(folder))
        return cls(names, weight, bias, card)


def fit_logistic(x: np.ndarray, y: np.ndarray, classes: int, *, l2: float, max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights ``(dim, classes)`` and bias of the multinomial logistic regression of ``y`` on ``x``
    minimising the mean cross-entropy ``+ l2·|W|²`` (bias free): scikit-learn's L-BFGS from zero,
    deterministic. Two classes: its binary fit, the same optimum split into two opposite rows; a class
    without examples gets bias ``-inf`` (never predicted). Also the backbone probe's fitter
    (:mod:`agentlab.experiments.backbone_probe`)."""
    from sklearn.linear_model import LogisticRegression

    binary = len(np.unique(y)) == 2
    model = LogisticRegression(C=1.0 / ((1 if binary else 2) * len(y) * l2), max_iter=max_iter, tol=1e-10)
    model.fit(np.asarray(x, dtype=np.float64), y)
    w, b = model.coef_.T, model.intercept_
    if binary:
        w, b = np.hstack([-w / 2, w / 2]), np.concatenate([-b / 2, b / 2])
    weight, bias = np.zeros((w.shape[0], classes)), np.full(classes, -np.inf)
    weight[:, model.classes_], bias[model.classes_] = w, b
    return weight, bias


def fit(vectors: np.ndarray, labels: list[str], *, l2: float = 1e-3, max_iter: int = 300,
        card: dict[str, Any] | None = None, texts: list[str] | None = None) -> ToolPrior:
    """The tool prior of ``labels`` on ``vectors`` (:func:`fit_logistic`: deterministic).
    ``texts`` (the requests): their words are read too (:func:`word_features`; the card says
    ``features: embedding+words``, and :meth:`ToolPrior.features` builds the same input at use).
    The card records the training accuracy."""
    if len(vectors) != len(labels) or not labels or (texts is not None and len(texts) != len(labels)):
        raise ValueError("fit needs as many labels as vectors (and texts), and at least one")
    names = tuple(sorted(set(labels)))
    x = np.asarray(vectors, dtype=np.float64)
    if texts is not None:
        x = np.hstack([x, np.array([word_features(t) for t in texts])])
        card = {**(card or {}), "features": WORDS}
    y = np.array([names.index(label) for label in labels])
    w, b = fit_logistic(x, y, len(names), l2=l2, max_iter=max_iter)
    acc = float(((x @ w + b).argmax(-1) == y).mean())
    info = {**(card or {}), "l2": l2, "max_iter": max_iter, "examples": len(labels), "train_accuracy": round(acc, 4),
            "counts": {n: labels.count(n) for n in names}}
    return ToolPrior(names, w.astype(np.float32), b.astype(np.float32), info)
