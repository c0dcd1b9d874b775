"""The embedded all-MiniLM-L6-v2 as a sentence encoder on torch, ``tokenizers`` and ``safetensors`` alone.

Why not sentence-transformers here: every tool agent's first step embeds its request (tool
retrieval), so every process that runs an episode -- each Ray worker of ``agentlab exec
--workers N`` included -- loads the encoder before its first task. Importing
sentence-transformers means importing ``transformers`` (its model-loading machinery, its
distributed and quantisation integrations) and scikit-learn: ~5 s of CPU in each process on this
machine, against ~1 s for torch alone. On two cores that load is most of what a Ray run pays
before its first episode (issue 43: the end-to-end speed-up of two workers).

MiniLM is a 6-layer BERT whose architecture is fixed and small, so its forward pass is written
out below, op for op as ``transformers``' ``BertModel`` (SDPA attention) computes it, followed by
sentence-transformers' pooling: mean over the attention mask, then the model's ``Normalize``
module, then ``encode(normalize_embeddings=True)``'s second normalisation. Inputs are sorted and
batched the way ``SentenceTransformer.encode`` does it. ``tests/llm/test_minilm.py`` checks that
the embeddings are *bit-identical* to sentence-transformers' on the project's texts, so no
routing, retrieval or score changes; any other encoder (a path given by the user) still goes
through sentence-transformers (:class:`agentlab.llm.similarity.SentenceEncoder`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

#: what this file's forward pass is written for; a folder whose config differs goes to sentence-transformers
ARCHITECTURE = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
POOLING = {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False, "pooling_mode_max_tokens": False,
           "pooling_mode_mean_sqrt_len_tokens": False}
MODULES = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
           "sentence_transformers.models.Normalize"]


def supports(path: Path) -> bool:
    """True when ``path`` is a BERT sentence-transformers folder this module computes exactly
    (mean pooling, then Normalize; absolute positions, exact GELU)."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        pooling_dir = next(m["path"] for m in modules if m["type"].endswith("Pooling"))
        pooling = json.loads((path / pooling_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, StopIteration):
        return False
    return (all(config.get(k) == v for k, v in ARCHITECTURE.items())
            and all(k in config for k in ("hidden_size", "num_attention_heads", "num_hidden_layers", "layer_norm_eps"))
            and [m["type"] for m in modules] == MODULES
            and all(pooling.get(k, False) == v for k, v in POOLING.items())
            and (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file())


class MiniLMEncoder:
    """Normalised sentence embeddings of a BERT sentence-transformers folder (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        self.path = path
        self.config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        st_file = path / "sentence_bert_config.json"  # optional in a sentence-transformers folder
        st_config = json.loads(st_file.read_text(encoding="utf-8")) if st_file.is_file() else {}
        self.max_length = int(st_config.get("max_seq_length") or self.config["max_position_embeddings"])
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer.enable_padding(pad_id=int(self.config.get("pad_token_id", 0)), pad_token="[PAD]")
        weights = load_file(str(path / "model.safetensors"))
        # checkpoints saved from BertModel have no prefix; ones saved from a task head have "bert."
        self.w: dict[str, Any] = {k.removeprefix("bert."): v.float() for k, v in weights.items()}
        self.heads = int(self.config["num_attention_heads"])
        self.layers = int(self.config["num_hidden_layers"])
        self.eps = float(self.config["layer_norm_eps"])
        self._torch = torch

    @property
    def dim(self) -> int:
        return int(self.config["hidden_size"])

    # -- the forward pass, op for op as BertModel's --------------------------------
    def _linear(self, x: Any, name: str) -> Any:
        return self._torch.nn.functional.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def _norm(self, x: Any, name: str) -> Any:
        return self._torch.nn.functional.layer_norm(x, (x.shape[-1],), self.w[f"{name}.weight"], self.w[f"{name}.bias"],
                                                    self.eps)

    def _token_states(self, ids: Any, mask: Any) -> Any:
        torch, F = self._torch, self._torch.nn.functional
        w = self.w
        b, n = ids.shape
        positions = torch.arange(n).unsqueeze(0)
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"]) + F.embedding(
            torch.zeros_like(ids), w["embeddings.token_type_embeddings.weight"])
        x = x + F.embedding(positions, w["embeddings.position_embeddings.weight"])
        x = self._norm(x, "embeddings.LayerNorm")
        # BertModel (SDPA): no mask when every position is real, else a boolean [b, 1, n, n] one
        attn_mask = None if bool(mask.all()) else mask.bool()[:, None, None, :].expand(b, 1, n, n)
        d = x.shape[-1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (self._linear(x, f"{p}.attention.self.{m}").view(b, n, -1, d).transpose(1, 2)
                       for m in ("query", "key", "value"))
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=0.0, scale=d ** -0.5,
                                               is_causal=False)
            a = a.transpose(1, 2).contiguous().reshape(b, n, -1).contiguous()
            x = self._norm(self._linear(a, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = F.gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = self._norm(self._linear(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x

    def _embed(self, texts: list[str]) -> Any:
        torch, F = self._torch, self._torch.nn.functional
        enc = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
        tokens = self._token_states(ids, mask)
        m = mask.unsqueeze(-1).to(tokens.dtype)  # sentence-transformers' mean pooling
        mean = (tokens * m).sum(dim=1, dtype=torch.float32) / torch.clamp(m.sum(dim=1, dtype=torch.float32), min=1e-9)
        mean = F.normalize(mean.to(tokens.dtype), p=2, dim=-1)  # the model's Normalize module
        return F.normalize(mean, p=2, dim=1)  # encode(normalize_embeddings=True)

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """``[len(texts), dim]`` float32, batched longest first as ``SentenceTransformer.encode``."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])
        out: list[Any] = []
        with self._torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                out.extend(self._embed([texts[i] for i in order[start:start + batch_size]]))
        back = np.argsort(order)
        return np.stack([out[i].numpy() for i in back]).astype(np.float32, copy=False)

