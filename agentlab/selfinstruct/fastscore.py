"""Exact BERTScore F1 matrices, fast enough to run Algorithm 1 and leakage checks every round.

``BertScorer.matrix`` (bert-score's own code) expands ``m x n`` sentence pairs and pads every
batch of 64 pairs in Python: on this machine ~2-3 ms per pair, i.e. minutes per round once the
set holds ~100 items and the leakage check looks at ~400 benchmark tasks. This module reuses
the very same truncated MiniLM, tokenisation (``bert_score.utils.sent_encode``) and weights
(1 per word piece, 0 for [CLS]/[SEP]), but

- embeds every distinct sentence once and keeps its normalised token vectors in a cache, and
- does the greedy matching for all pairs at once: one ``[tokens_c, tokens_r]`` cosine matrix,
  then segment-wise maxima and weighted means.

The numbers agree with ``BertScorer.matrix`` to float precision (tested). One bert-score quirk
is not copied: it multiplies padded positions into the similarity matrix as zeros, so a token
whose every cosine is negative gets a max of 0 when its pair happened to be padded. Scores here
do not depend on what else is in the batch.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import torch

from agentlab.llm.similarity import BertScorer


class FastBertScore:
    """BERTScore F1 (no idf, no baseline rescaling) with a per-sentence embedding cache."""

    def __init__(self, scorer: BertScorer, *, cache_size: int = 50_000, batch_size: int = 64) -> None:
        inner = scorer._scorer  # the bert_score.BERTScorer: model already cut to num_layers
        self.base = scorer
        self.model = inner._model
        self.tokenizer = inner._tokenizer
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, tuple[torch.Tensor, torch.Tensor]] = OrderedDict()
        self._special = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id}

    def describe(self) -> dict[str, Any]:
        return self.base.describe()

    # ------------------------------------------------------------------ embeddings
    @torch.no_grad()
    def _embed_missing(self, texts: list[str]) -> None:
        from bert_score.utils import sent_encode

        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not todo:
            return
        empty = [self.tokenizer.cls_token_id, self.tokenizer.sep_token_id]
        # bert-score's sent_encode("") fails on transformers 5; an empty sentence is [CLS][SEP]
        ids = [sent_encode(self.tokenizer, t) if t.strip() else empty for t in todo]
        order = sorted(range(len(todo)), key=lambda i: -len(ids[i]))
        pad = self.tokenizer.pad_token_id
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            longest = max(len(ids[i]) for i in chunk)
            x = torch.full((len(chunk), longest), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), longest), dtype=torch.long)
            for r, i in enumerate(chunk):
                x[r, : len(ids[i])] = torch.tensor(ids[i])
                mask[r, : len(ids[i])] = 1
            dev = next(self.model.parameters()).device
            out = self.model(x.to(dev), attention_mask=mask.to(dev))[0].float().cpu()
            for r, i in enumerate(chunk):
                n = len(ids[i])
                e = out[r, :n]
                e = e / e.norm(dim=-1, keepdim=True)
                w = torch.tensor([0.0 if t in self._special else 1.0 for t in ids[i]])
                w = w / w.sum() if w.sum() > 0 else w
                self._cache[todo[i]] = (e, w)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _stack(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        embs, ws, seg = [], [], []
        for k, t in enumerate(texts):
            e, w = self._cache[t]
            embs.append(e)
            ws.append(w)
            seg.append(torch.full((e.shape[0],), k, dtype=torch.long))
        return torch.cat(embs), torch.cat(ws), torch.cat(seg)

    # ------------------------------------------------------------------ scores
    def matrix(self, cands: list[str], refs: list[str], *, chunk: int = 256) -> np.ndarray:
        """F1 of every candidate against every reference: ``[len(cands), len(refs)]``."""
        return self.prf(cands, refs, chunk=chunk)[2]

    def degenerate(self, cands: list[str], refs: list[str]) -> np.ndarray:
        """Pairs where precision or recall is <= 0, so the F1 formula ``2PR/(P+R)`` is meaningless.

        MiniLM token cosines can be negative; for unrelated sentences P and R can straddle 0 and
        bert-score's F1 then takes any value (P=0.026, R=-0.027 gives F1=1.157). The pipeline keeps
        bert-score's F1 as is (faithful); this is for diagnostics and reports.
        """
        p, r, _ = self.prf(cands, refs)
        return (p <= 0) | (r <= 0)

    @torch.no_grad()
    def prf(self, cands: list[str], refs: list[str], *, chunk: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Precision, recall and F1 matrices, each ``[len(cands), len(refs)]``."""
        if not cands or not refs:
            z = np.zeros((len(cands), len(refs)), dtype=np.float32)
            return z, z, z
        self._embed_missing(list(cands) + list(refs))
        R, wr, sr = self._stack(refs)
        n = len(refs)
        ps, rs, fs = [], [], []
        for start in range(0, len(cands), chunk):
            part = cands[start : start + chunk]
            C, wc, sc = self._stack(part)
            m = len(part)
            S = C @ R.T  # [Tc, Tr] token cosines
            # precision: each candidate token's best match inside each reference sentence
            best_in_ref = torch.full((S.shape[0], n), -torch.inf).scatter_reduce(
                1, sr.expand(S.shape[0], -1), S, reduce="amax", include_self=True
            )
            P = torch.zeros((m, n)).index_add_(0, sc, best_in_ref * wc[:, None])
            # recall: each reference token's best match inside each candidate sentence
            best_in_cand = torch.full((m, S.shape[1]), -torch.inf).scatter_reduce(
                0, sc[:, None].expand(-1, S.shape[1]), S, reduce="amax", include_self=True
            )
            Rr = torch.zeros((n, m)).index_add_(0, sr, (best_in_cand * wr[None, :]).T).T
            F = 2 * P * Rr / (P + Rr)
            F = torch.nan_to_num(F, nan=0.0)
            # empty sentences ([CLS][SEP] only) score 0, as in bert-score
            F[wc.new_zeros(m).index_add_(0, sc, wc) == 0] = 0.0
            F[:, wr.new_zeros(n).index_add_(0, sr, wr) == 0] = 0.0
            ps.append(P)
            rs.append(Rr)
            fs.append(F)
        as_np = lambda xs: torch.cat(xs).numpy().astype(np.float32)  # noqa: E731
        return as_np(ps), as_np(rs), as_np(fs)

    def pairs(self, cands: list[str], refs: list[str]) -> np.ndarray:
        """F1 for aligned pairs (computed from the matrix of distinct sentences)."""
        if len(cands) != len(refs):
            raise ValueError("cands and refs must have the same length")
        uc, ur = list(dict.fromkeys(cands)), list(dict.fromkeys(refs))
        mat = self.matrix(uc, ur)
        ic, ir = {t: i for i, t in enumerate(uc)}, {t: i for i, t in enumerate(ur)}
        return np.array([mat[ic[c], ir[r]] for c, r in zip(cands, refs)], dtype=np.float32)
