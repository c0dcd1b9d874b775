"""AgentToken checkpoints: ``W_A`` in safetensors plus a JSON sidecar that says what it fits.

``tokens.safetensors`` holds ``W_A [|A|, d]`` (and ``b_A [|A|]`` when the head has a per-agent
bias, :mod:`agentlab.metaagent.discriminant`; checkpoints without it load with none); ``tokens.json`` names the agents (row order),
the backbone (id + fingerprint), the router template (name + SHA-256), the feature spec,
the training config and metrics. Both are written atomically (sidecar last, so a sidecar
never points at a missing or older weight file: it records the weights' SHA-256).
Loading checks each of those against the current backbone, template and pool and fails
with one line naming the file and the mismatch.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from agentlab.dialogue.templates import PromptTemplate, check_recorded
from agentlab.errors import CheckpointError
from agentlab.fileio import atomic_path, atomic_write_json
from agentlab.llm.identity import SCHEME as IDENTITY_SCHEME

FORMAT = "agentlab-agenttoken/1"


@dataclass
class TokenCheckpoint:
    weight: torch.Tensor
    agents: list[str]
    backbone_id: str
    backbone_fingerprint: str
    template_name: str
    template_sha256: str
    feature: dict[str, Any]
    logit_bias: float = 0.0
    #: softmax temperature of the agent ranking (calibrated, or 1.0)
    temperature: float = 1.0
    train_config: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)  # enrolment steps
    #: per-agent bias ``b_A`` (None: the paper's head, no per-agent bias)
    bias: torch.Tensor | None = None
    #: rule that computed ``backbone_fingerprint`` (:data:`agentlab.llm.identity.SCHEME`);
    #: ``None`` for checkpoints stamped before identities came from the weights alone
    backbone_identity: str | None = IDENTITY_SCHEME


def paths_for(path: str | Path) -> tuple[Path, Path]:
    """(weights, sidecar) for a checkpoint given as a folder, a ``.safetensors`` or a ``.json`` path."""
    path = Path(path)
    if path.suffix in (".safetensors", ".json"):
        stem = path.with_suffix("")
        return stem.with_suffix(".safetensors"), stem.with_suffix(".json")
    return path / "tokens.safetensors", path / "tokens.json"


def save_checkpoint(ckpt: TokenCheckpoint, path: str | Path) -> Path:
    """Write weights then sidecar atomically; return the sidecar path."""
    from safetensors.torch import save_file

    wpath, jpath = paths_for(path)
    if ckpt.weight.shape[0] != len(ckpt.agents):
        raise CheckpointError(f"{ckpt.weight.shape[0]} rows for {len(ckpt.agents)} agents", where=wpath)
    if ckpt.bias is not None and tuple(ckpt.bias.shape) != (len(ckpt.agents),):
        raise CheckpointError(f"b_A has shape {tuple(ckpt.bias.shape)} for {len(ckpt.agents)} agents", where=wpath)
    tensors = {"W_A": ckpt.weight.detach().float().contiguous().cpu()}
    if ckpt.bias is not None:
        tensors["b_A"] = ckpt.bias.detach().float().contiguous().cpu()
    with atomic_path(wpath, suffix=".safetensors") as tmp:
        save_file(tensors, str(tmp), metadata={"format": FORMAT})
    sidecar = {
        "format": FORMAT,
        "weights": wpath.name,
        "weights_sha256": hashlib.sha256(wpath.read_bytes()).hexdigest(),
        "agents": ckpt.agents,
        "dim": int(ckpt.weight.shape[1]),
        "backbone": {"id": ckpt.backbone_id, "fingerprint": ckpt.backbone_fingerprint, "identity": ckpt.backbone_identity},
        "template": {"name": ckpt.template_name, "sha256": ckpt.template_sha256},
        "feature": ckpt.feature,
        "logit_bias": ckpt.logit_bias,
        "temperature": ckpt.temperature,
        "train_config": ckpt.train_config,
        "metrics": ckpt.metrics,
        "history": ckpt.history,
    }
    atomic_write_json(jpath, sidecar)
    return jpath


def load_checkpoint(path: str | Path) -> TokenCheckpoint:
    """Read and integrity-check a checkpoint (not yet against a backbone; see :func:`check_compatible`)."""
    wpath, jpath = paths_for(path)
    if not jpath.is_file():
        if wpath.is_file():
            raise CheckpointError("sidecar tokens.json is missing next to the weights; retrain or restore it", where=jpath)
        raise CheckpointError("checkpoint not found", where=Path(path))
    try:
        meta = json.loads(jpath.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise CheckpointError(f"not an AgentToken checkpoint sidecar (format {meta.get('format')!r})", where=jpath)
        agents = list(meta["agents"])
        backbone, template = meta["backbone"], meta["template"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CheckpointError(f"corrupt sidecar ({type(exc).__name__}: {exc})", where=jpath) from None
    if not wpath.is_file():
        raise CheckpointError("weights file is missing", where=wpath)
    if hashlib.sha256(wpath.read_bytes()).hexdigest() != meta.get("weights_sha256"):
        raise CheckpointError("weights do not match the sidecar's checksum (corrupt or replaced file)", where=wpath)
    try:
        from safetensors.torch import load_file

        tensors = load_file(str(wpath))
        weight = tensors["W_A"].float()
        bias = tensors["b_A"].float() if "b_A" in tensors else None
    except Exception as exc:
        raise CheckpointError(f"corrupt weights ({type(exc).__name__}: {exc})", where=wpath) from None
    if tuple(weight.shape) != (len(agents), int(meta.get("dim", weight.shape[1]))):
        raise CheckpointError(f"W_A has shape {tuple(weight.shape)} but the sidecar lists {len(agents)} agents", where=wpath)
    if bias is not None and tuple(bias.shape) != (len(agents),):
        raise CheckpointError(f"b_A has shape {tuple(bias.shape)} but the sidecar lists {len(agents)} agents", where=wpath)
    return TokenCheckpoint(
        weight=weight,
        bias=bias,
        agents=agents,
        backbone_id=str(backbone["id"]),
        backbone_fingerprint=str(backbone["fingerprint"]),
        template_name=str(template["name"]),
        template_sha256=str(template["sha256"]),
        feature=dict(meta.get("feature", {})),
        logit_bias=float(meta.get("logit_bias", 0.0)),
        temperature=float(meta.get("temperature", 1.0)),
        train_config=dict(meta.get("train_config", {})),
        metrics=dict(meta.get("metrics", {})),
        history=list(meta.get("history", [])),
        backbone_identity=backbone.get("identity"),
    )


def check_compatible(
    ckpt: TokenCheckpoint, path: str | Path, *, backbone_id: str, fingerprint: str, template: PromptTemplate, pool_names: list[str]
) -> None:
    """Fail with one line when the checkpoint does not fit this backbone, template or pool."""
    _, jpath = paths_for(path)
    if ckpt.backbone_fingerprint != fingerprint and ckpt.backbone_identity != IDENTITY_SCHEME:
        raise CheckpointError(
            f"trained on backbone {ckpt.backbone_id} ({ckpt.backbone_fingerprint}), a fingerprint of an older agentlab "
            "hashed from config.json, which changes with every transformers release, so it cannot be matched to the loaded "
            f"backbone {backbone_id} ({fingerprint}, from its weights); retrain it with `agentlab train` "
            "(minutes on a laptop), which records the weights-based identity",
            where=jpath,
        )
    if ckpt.backbone_fingerprint != fingerprint:
        from agentlab.metaagent.shipped import hint_for

        raise CheckpointError(
            f"trained on backbone {ckpt.backbone_id} ({ckpt.backbone_fingerprint}) but the loaded backbone is "
            f"{backbone_id} ({fingerprint}); {hint_for(fingerprint, jpath.parent)}",
            where=jpath,
        )
    check_recorded(
        ckpt.template_name, ckpt.template_sha256, template, where=jpath, since="training",
        redo="retrain with `agentlab train` (the new hash is recorded then)",
    )
    unknown = [a for a in ckpt.agents if a not in pool_names]
    if unknown:
        raise CheckpointError(
            f"checkpoint has agent(s) not in the pool: {', '.join(unknown)}; enrol them or retrain", where=jpath
        )
