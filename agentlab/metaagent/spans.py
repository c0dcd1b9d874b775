"""Which applications a request's *phrases* belong to: two-application detection from what is asked for.

Why: the store sends a request to a general agent when it needs two applications of one device,
but it could only tell that when the request *named* both ("in LibreOffice Calc ... in Writer",
:mod:`~agentlab.metaagent.mentions`) or when its clauses, cut at every joint, routed to two
domains (:mod:`~agentlab.metaagent.multiapp`). People name the things instead: "turn the bullet
list in the meeting notes into slides", "resize the team photo and put it at the top of the
newsletter" -- one clause, no product name, two applications (notes → a document, slides → a
deck). On the blind requests of ``data/requests`` the store's default sent 1 of 52 such requests
to a general agent.

How (:class:`SpanDetector`): every short window of the request's words (:func:`windows`) is
embedded with the sentence encoder and given a distribution over the device's specialist domains
by a multinomial logistic regression trained on windows of single-application demonstrations,
each labelled with its demonstration's domain. A window that says nothing about an application
("and then save it") is spread over many domains; "into slides" is not. A domain's *evidence* is
its best window; a request's score is the evidence of its *second* domain (both must be
present). It needs two applications when the score passes ``threshold``.

Fitted on demonstrations only, never on an evaluation set (:func:`fit_spans`): the classifier on
the documents' seed demonstrations and half of the self-instruct ones; the threshold on the other
half, as the score at which at most ``budget`` of those single-application requests would be
called two-application.
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agentlab.errors import DataError
from agentlab.fileio import atomic_write_text
from agentlab.pool import AgentPool
from agentlab.pool.document import DOMAINS

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.llm.similarity import SentenceEncoder

log = logging.getLogger(__name__)

#: window lengths in words, and the stride between windows of one length
SIZES: tuple[int, ...] = (2, 4)
STRIDE = 1
_WORD = re.compile(r"[\w'’.@/-]+")


def windows(text: str, sizes: Sequence[int] = SIZES, stride: int = STRIDE) -> list[str]:
    """The request's word windows of each length in ``sizes`` (the whole text when it is shorter)."""
    words = _WORD.findall(text)
    out: list[str] = []
    for n in sizes:
        if len(words) <= n:
            out.append(" ".join(words))
            continue
        out.extend(" ".join(words[i:i + n]) for i in range(0, len(words) - n + 1, stride))
    return list(dict.fromkeys(w for w in out if w))


def specialist_domains(platform: str) -> tuple[str, ...]:
    """A device's application domains (its catch-all domain, the generalists', left out)."""
    return DOMAINS[platform][:-1]


@dataclass
class SpanDetector:
    """A fitted window classifier and threshold (see the module docstring)."""

    domains: list[str]
    #: [len(domains), dim] and [len(domains)]: the logistic regression over window embeddings
    coef: np.ndarray
    intercept: np.ndarray
    threshold: float
    encoder: str
    #: what it was fitted on and how it scored there (for the record, never read back to decide)
    fit: dict[str, object]

    def _probs(self, vectors: np.ndarray, platform: str | None) -> tuple[list[str], np.ndarray]:
        keep = [i for i, d in enumerate(self.domains) if platform is None or d in specialist_domains(platform)]
        logits = vectors @ self.coef[keep].T + self.intercept[keep]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return [self.domains[i] for i in keep], p / p.sum(axis=1, keepdims=True)

    def evidence(self, text: str, platform: str | None, encoder: SentenceEncoder | None = None,
                 vectors: np.ndarray | None = None) -> dict[str, float]:
        """Domain -> its best window's probability (``platform``: only that device's domains)."""
        if vectors is None:
            vectors = (encoder or _encoder(self.encoder)).encode(windows(text))
        if not any(platform is None or d in specialist_domains(platform) for d in self.domains):
            return {}  # fitted on none of this device's applications: no evidence for any
        names, p = self._probs(vectors, platform)
        best = p.max(axis=0)
        return {d: float(v) for d, v in zip(names, best)}

    def score(self, text: str, platform: str | None = None, encoder: SentenceEncoder | None = None,
              vectors: np.ndarray | None = None) -> float:
        """The second domain's evidence: high only when two applications each have a phrase of their own."""
        if platform is None:  # a request runs on one device: the better of the two (its windows embedded once)
            if vectors is None:
                vectors = (encoder or _encoder(self.encoder)).encode(windows(text))
            return max(self.score(text, p, encoder, vectors) for p in DOMAINS)
        ev = sorted(self.evidence(text, platform, encoder, vectors).values(), reverse=True)
        return ev[1] if len(ev) > 1 else 0.0

    def is_multi(self, text: str, platform: str | None = None, encoder: SentenceEncoder | None = None) -> bool:
        return self.score(text, platform, encoder) > self.threshold

    def save(self, path: Path) -> Path:
        data = {"domains": self.domains, "coef": np.round(self.coef, 6).tolist(),
                "intercept": np.round(self.intercept, 6).tolist(), "threshold": self.threshold,
                "encoder": self.encoder, "sizes": list(SIZES), "stride": STRIDE, "fit": self.fit}
        atomic_write_text(path, json.dumps(data, indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: Path) -> SpanDetector:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            det = cls(list(data["domains"]), np.asarray(data["coef"], dtype=np.float32),
                      np.asarray(data["intercept"], dtype=np.float32), float(data["threshold"]),
                      str(data["encoder"]), dict(data.get("fit") or {}))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DataError(f"not a span detector ({type(exc).__name__}: {exc})", where=str(path)) from None
        if det.coef.shape != (len(det.domains), det.coef.shape[1]) or det.intercept.shape != (len(det.domains),):
            raise DataError("span detector: coef/intercept do not match its domains", where=str(path))
        if (list(data.get("sizes", SIZES)), int(data.get("stride", STRIDE))) != (list(SIZES), STRIDE):
            raise DataError(f"span detector fitted on windows {data.get('sizes')} (stride {data.get('stride')}), "
                            f"this code makes {list(SIZES)} (stride {STRIDE}): refit it", where=str(path))
        return det


def _encoder(model_id: str) -> SentenceEncoder:
    from agentlab.llm.similarity import default_encoder

    enc = default_encoder()
    if enc.model_id != model_id:
        raise DataError(f"span detector fitted on {model_id!r} embeddings, not {enc.model_id!r}")
    return enc


def fit_spans(pool: AgentPool, *, budget: float = 0.01, seed: int = 0, c: float = 1.0,
              encoder: SentenceEncoder | None = None, per_domain: int | None = None,
              max_held_out: int | None = None) -> tuple[SpanDetector, list[tuple[str, str, str]]]:
    """Fit on ``pool``'s specialists' demonstrations: the classifier on the seeds and half the
    self-instruct ones, the threshold on the other half at ``budget``. Returns the detector and the
    held-out single-application requests (text, domain, platform) its threshold was fitted on."""
    from sklearn.linear_model import LogisticRegression

    from agentlab.metaagent.data import load_training_set
    from agentlab.metaagent.store_policy import is_generalist

    from agentlab.llm.similarity import default_encoder

    enc = encoder or default_encoder()
    data = load_training_set(pool, source="all", seed=seed)
    seeds = {(d.name, x.text.lower()) for d in pool for x in d.demonstrations}
    train: list[tuple[str, str]] = []
    held: list[tuple[str, str, str]] = []  # (text, domain, platform)
    rng = random.Random(seed)
    for text, y in zip(data.texts, data.labels):
        doc = pool.get(data.agents[y])
        if is_generalist(doc) or doc.platform not in DOMAINS or doc.domain not in specialist_domains(doc.platform):
            continue
        if (doc.name, text.lower()) in seeds or rng.random() < 0.5:
            train.append((text, doc.domain))
        else:
            held.append((text, doc.domain, doc.platform))
    if per_domain is not None:
        seen: dict[str, int] = {}
        kept = []
        for text_, d in train:
            seen[d] = seen.get(d, 0) + 1
            if seen[d] <= per_domain:
                kept.append((text_, d))
        train = kept
    if max_held_out is not None and len(held) > max_held_out:
        held = rng.sample(held, max_held_out)
    domains = sorted({d for _, d in train})
    win_text, win_label = [], []
    for text, dom in train:
        for w in windows(text):
            win_text.append(w)
            win_label.append(domains.index(dom))
    log.info("spans: %d windows of %d demonstrations over %d domains; threshold on %d held-out ones",
             len(win_text), len(train), len(domains), len(held))
    x = enc.encode(win_text)
    clf = LogisticRegression(C=c, max_iter=2000)
    clf.fit(x, np.asarray(win_label))
    det = SpanDetector(domains, clf.coef_.astype(np.float32), clf.intercept_.astype(np.float32), 0.0, enc.model_id, {})
    platform_of = {d.domain: d.platform for d in pool}
    scores = sorted(det.score(t, p, enc) for t, _, p in held)
    k = int(np.floor(budget * len(scores)))
    det.threshold = float(scores[len(scores) - 1 - k]) if k < len(scores) else 0.0
    det.fit = {"train_demonstrations": len(train), "train_windows": len(win_text), "held_out": len(held),
               "budget": budget, "held_out_flagged": sum(s > det.threshold for s in scores) / len(scores),
               "c": c, "seed": seed, "domains_platform": {d: platform_of.get(d) for d in domains}}
    return det, held
