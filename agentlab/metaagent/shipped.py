"""Which shipped AgentToken checkpoint fits which backbone.

A token checkpoint is only valid on the backbone it was trained on (it records that backbone's
weights fingerprint and is refused on another). The repository ships one per embedded backbone:
``data/tokens`` for SmolLM2-135M-Instruct (the default) and ``data/tokens/gemma3-270m`` for
Gemma 3 270M. Commands that load tokens without ``--tokens`` take the one for the configured
backbone (:func:`shipped_tokens`); when a checkpoint is refused, :func:`hint_for` names the shipped
checkpoint that does fit the loaded backbone, found by its recorded fingerprint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentlab.llm.config import EMBEDDED_BACKBONE, EMBEDDED_GEMMA, LLMConfig
from agentlab.paths import data_dir

#: embedded backbone -> its shipped checkpoint, relative to ``data/``
SHIPPED: dict[str, str] = {EMBEDDED_BACKBONE: "tokens", EMBEDDED_GEMMA: "tokens/gemma3-270m"}


def shipped_tokens(llm: LLMConfig | None = None) -> Path:
    """The shipped checkpoint for ``llm`` (None: the configured backend, ``AGENTLAB_LLM_*``); a backbone
    without one gets ``data/tokens``, which its loader then refuses with :func:`hint_for`'s line."""
    model = (llm or LLMConfig.from_env()).model
    return data_dir() / SHIPPED.get(model, "tokens")


def shipped_for(fingerprint: str) -> Path | None:
    """The shipped checkpoint trained on the backbone with this weights fingerprint (the mapped
    folders first, then any other under ``data/tokens``), or None."""
    root = data_dir()
    candidates = [root / rel for rel in SHIPPED.values()]
    candidates += sorted(p.parent for p in (root / "tokens").rglob("tokens.json") if p.parent not in candidates)
    for folder in candidates:
        try:
            meta = json.loads((folder / "tokens.json").read_text(encoding="utf-8"))
            if str(meta["backbone"]["fingerprint"]) == fingerprint:
                return folder
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def hint_for(fingerprint: str, refused: Path) -> str:
    """What to pass instead of a refused checkpoint: the shipped one for this backbone, or how to train one."""
    found = shipped_for(fingerprint)
    if found is not None and found.resolve() != refused.resolve():
        try:
            shown = os.path.relpath(found)
        except ValueError:  # another drive (Windows)
            shown = str(found)
        if shown.startswith(".."):
            shown = str(found)
        return f"the shipped checkpoint for this backbone is {shown}: pass --tokens {shown}"
    return "retrain with `agentlab train --out DIR` for this backbone and pass --tokens DIR"
