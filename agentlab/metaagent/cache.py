"""Disk cache of frozen-backbone features, so each prefix is run through the model once.

The backbone never changes during AgentToken training, so ``h`` and ``logsumexp(W_V h)`` of
a query depend only on (model fingerprint, router template hash, feature spec, text). They
are stored as safetensors shards under ``cache_dir()/hidden/<namespace>/``; each shard
lists its query keys in its metadata. New features are computed in chunks and each chunk is
written atomically, so an interrupted run keeps what it finished. A shard that cannot be
read is reported and ignored (its queries are recomputed). The cache is optional: when its
folder cannot be written, one warning says where and why, and features are kept in memory
for this run only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm

from agentlab.fileio import atomic_path
from agentlab.metaagent.features import FeatureExtractor, Features, Query
from agentlab.paths import cache_dir, unwritable

log = logging.getLogger(__name__)


def query_key(q: Query) -> str:
    raw = json.dumps([q.task.strip(), q.state or "", str(q.image or "")])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class HiddenCache:
    """Features for queries, computed once per namespace and kept on disk."""

    def __init__(self, extractor: FeatureExtractor, root: Path | None = None, chunk: int = 64) -> None:
        self.extractor = extractor
        self.folder = (root or cache_dir() / "hidden") / extractor.cache_namespace()
        self.chunk = chunk
        self._rows: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self._loaded = False
        self.computed = 0  # queries run through the backbone by this object (for tests/benchmarks)
        self.writable: bool | None = None  # checked before the first write

    def _can_write(self) -> bool:
        if self.writable is None:
            why = unwritable(self.folder)
            self.writable = why is None
            if why:
                log.warning("%s: hidden-state cache not writable (%s); features are computed without caching "
                            "(set AGENTLAB_CACHE to a writable folder to keep them)", self.folder, why)
        return self.writable

    def _load(self) -> None:
        if self._loaded:
            return
        from safetensors import safe_open

        for shard in sorted(self.folder.glob("shard-*.safetensors")):
            try:
                with safe_open(str(shard), framework="pt") as f:
                    keys = json.loads((f.metadata() or {})["keys"])
                    h, lse = f.get_tensor("h"), f.get_tensor("vocab_lse")
            except Exception as exc:
                log.warning("%s: unreadable cache shard ignored (%s); its entries will be recomputed", shard, exc)
                continue
            for i, k in enumerate(keys):
                self._rows[k] = (h[i], lse[i])
        self._loaded = True

    def _write(self, keys: list[str], feats: Features) -> None:
        from safetensors.torch import save_file

        if not self._can_write():
            return
        name = f"shard-{time.time_ns()}-{hashlib.sha256(''.join(keys).encode()).hexdigest()[:8]}.safetensors"
        try:
            with atomic_path(self.folder / name, suffix=".safetensors") as tmp:
                save_file(
                    {"h": feats.h.contiguous(), "vocab_lse": feats.vocab_lse.contiguous()},
                    str(tmp),
                    metadata={"keys": json.dumps(keys), "namespace": self.extractor.cache_namespace()},
                )
        except OSError as exc:  # disk full, folder removed: the run goes on without the cache
            self.writable = False
            log.warning("%s: cannot write the hidden-state cache (%s); continuing without it", self.folder, exc.strerror or exc)

    def get(self, queries: list[Query], *, batch_size: int = 16, progress: bool = True) -> Features:
        """Features for every query, in order; only unseen queries reach the backbone."""
        self._load()
        keys = [query_key(q) for q in queries]
        todo: dict[str, Query] = {}
        for k, q in zip(keys, queries):
            if k not in self._rows and k not in todo:
                todo[k] = q
        if todo:
            self._can_write()  # warn before the work, not after it
            pending = list(todo.items())
            bar = tqdm(total=len(pending), desc="hidden states", unit="prompt", disable=not progress)
            for s in range(0, len(pending), self.chunk):
                part = pending[s : s + self.chunk]
                feats = self.extractor.features([q for _, q in part], batch_size=batch_size)
                self._write([k for k, _ in part], feats)
                for i, (k, _) in enumerate(part):
                    self._rows[k] = (feats.h[i], feats.vocab_lse[i])
                self.computed += len(part)
                bar.update(len(part))
            bar.close()
        if not keys:
            return Features(torch.empty(0, 0), torch.empty(0))
        return Features(
            h=torch.stack([self._rows[k][0] for k in keys]),
            vocab_lse=torch.stack([self._rows[k][1] for k in keys]),
        )
