"""The manifest of a self-instruct run folder (``<out>/manifest.json``, see :mod:`agentlab.record.manifest`).

Self-instruct resumes by its journal's header (prompt hash, generator, thresholds, seed
demonstrations: :meth:`agentlab.selfinstruct.store.Journal.start`), so its manifest records
what the demonstrations were made with and each resume's differences; it never refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentlab.llm.identity import weights_fingerprint
from agentlab.record.manifest import Manifest, backend_identity, build_manifest, config_identity, encoder_identity
from agentlab.pool import AgentPool
from agentlab.selfinstruct.config import SelfInstructConfig

#: config fields that say where and how long, not what is made
NOT_RESULTS = ("out_dir", "fresh", "time_budget_min", "torch_threads")


def selfinstruct_manifest(cfg: SelfInstructConfig, pool: AgentPool, backend: Any = None) -> Manifest:
    """The generator (the loaded ``backend``, else its config), the BERTScore encoder, every agent
    document, the seed and the config fields that change the demonstrations."""
    if cfg.scorer_model is None:
        encoder = encoder_identity()
    else:
        encoder = {"model_id": str(cfg.scorer_model), "fingerprint": weights_fingerprint(Path(cfg.scorer_model))
                   if Path(cfg.scorer_model).is_dir() else None}
    options = {k: v for k, v in cfg.model_dump(mode="json").items() if k not in NOT_RESULTS and k != "generator"}
    return build_manifest(
        "selfinstruct",
        models={"generator": backend_identity(backend) if backend is not None else config_identity(cfg.generator),
                "sentence_encoder": encoder},
        seeds=[cfg.seed],
        options=options,
        documents={d.name: d.path for d in pool.agents},
    )
