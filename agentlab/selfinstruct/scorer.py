"""The BERTScore scorer self-instruct uses everywhere: one loader shared by calibration and the pipeline."""

from __future__ import annotations

from agentlab.selfinstruct.config import SelfInstructConfig
from agentlab.selfinstruct.fastscore import FastBertScore


def load_scorer(cfg: SelfInstructConfig) -> FastBertScore:
    """The exact batched BERTScore used everywhere in self-instruct (MiniLM unless configured)."""
    from agentlab.llm.similarity import BertScorer, default_scorer

    base = (
        BertScorer(cfg.scorer_model, num_layers=cfg.scorer_layers)
        if cfg.scorer_model is not None
        else default_scorer(cfg.scorer_layers)
    )
    return FastBertScore(base)
