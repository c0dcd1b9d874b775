"""A model's identity comes from its weights: library metadata never changes it (issue #27)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from agentlab.llm.identity import SCHEME, model_fingerprint, safetensors_fingerprint, weights_fingerprint


def _tensors() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {"a.weight": torch.randn(300, 200, generator=g), "b.bias": torch.randn(7, generator=g)}


def test_safetensors_identity_ignores_metadata_and_order(tmp_path: Path) -> None:
    t = _tensors()
    save_file(t, str(tmp_path / "x.safetensors"), metadata={"format": "pt", "writer": "lib 1.0"})
    save_file(dict(reversed(list(t.items()))), str(tmp_path / "y.safetensors"), metadata={"writer": "lib 2.0"})
    assert safetensors_fingerprint(tmp_path / "x.safetensors") == safetensors_fingerprint(tmp_path / "y.safetensors")


@pytest.mark.parametrize("change", ["value_at_start", "value_at_end", "name", "shape", "dtype"])
def test_safetensors_identity_follows_the_numbers(tmp_path: Path, change: str) -> None:
    t = _tensors()
    save_file(t, str(tmp_path / "x.safetensors"))
    u = {k: v.clone() for k, v in t.items()}
    if change == "value_at_start":
        u["a.weight"][0, 0] += 1
    elif change == "value_at_end":
        u["a.weight"][-1, -1] += 1
    elif change == "name":
        u["c.bias"] = u.pop("b.bias")
    elif change == "shape":
        u["a.weight"] = u["a.weight"].reshape(200, 300)
    else:
        u["b.bias"] = u["b.bias"].double()
    save_file(u, str(tmp_path / "y.safetensors"))
    assert safetensors_fingerprint(tmp_path / "x.safetensors") != safetensors_fingerprint(tmp_path / "y.safetensors")


def test_folder_identity_reads_weights_not_configuration(tmp_path: Path) -> None:
    save_file(_tensors(), str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"transformers_version": "5.23.0"}))
    before = model_fingerprint(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"transformers_version": "9.9.9", "new_default": True}))
    (tmp_path / "generation_config.json").write_text("{}")
    assert model_fingerprint(tmp_path) == before == weights_fingerprint(tmp_path)
    assert len(before) == 16 and SCHEME == "weights/1"


def _relabelled_backbone(tmp_path: Path) -> Path:
    """A copy of the converted embedded backbone whose metadata a newer library rewrote (the
    weights file is linked, not copied)."""
    from agentlab.llm.embedded import converted_smollm2_dir

    src = converted_smollm2_dir()
    dst = tmp_path / "smollm2-relabelled"
    dst.mkdir()
    for f in src.iterdir():
        if f.suffix == ".safetensors":
            (dst / f.name).symlink_to(f)
        else:
            shutil.copy(f, dst / f.name)
    cfg = json.loads((dst / "config.json").read_text())
    cfg.update(transformers_version="99.0.0", _name_or_path="/elsewhere", some_new_field=[1, 2])
    (dst / "config.json").write_text(json.dumps(cfg, indent=1))
    (dst / "generation_config.json").write_text(json.dumps({"transformers_version": "99.0.0"}))
    return dst


@pytest.mark.slow
def test_shipped_tokens_and_hybrid_load_on_relabelled_backbone(tmp_path: Path, pool) -> None:
    from agentlab.llm.config import LLMConfig
    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.hybrid import HybridRouter
    from agentlab.paths import data_dir

    llm = LLMConfig(model=str(_relabelled_backbone(tmp_path)))
    token = AgentTokenRouter.load(data_dir() / "tokens", pool, llm, progress=False)
    base30 = AgentTokenRouter.load(data_dir() / "tokens" / "base30", pool, llm, progress=False)
    assert len(token.agents) == 37 and len(base30.agents) == 30
    hybrid = HybridRouter.load(data_dir() / "tokens", pool, llm)
    assert hybrid.route(["Play the Discover Weekly playlist on Spotify"])[0].agent == "SpotifyAgent"


def test_legacy_checkpoint_says_what_to_do(tmp_path: Path, pool) -> None:
    """A checkpoint stamped with the old config-based fingerprint is refused with the fix."""
    from agentlab.dialogue.templates import load_template
    from agentlab.errors import CheckpointError
    from agentlab.metaagent.checkpoint import check_compatible, load_checkpoint
    from agentlab.paths import data_dir

    shutil.copytree(data_dir() / "tokens", tmp_path / "old")
    side = tmp_path / "old" / "tokens.json"
    meta = json.loads(side.read_text())
    meta["backbone"] = {"id": "SmolLM2-135M-Instruct", "fingerprint": "054ec86d96f34f26"}
    side.write_text(json.dumps(meta))
    ckpt = load_checkpoint(tmp_path / "old")
    assert ckpt.backbone_identity is None
    with pytest.raises(CheckpointError) as err:
        check_compatible(ckpt, tmp_path / "old", backbone_id="SmolLM2-135M-Instruct", fingerprint="99fbb6309aff8a14",
                         template=load_template(ckpt.template_name), pool_names=pool.names)
    msg = str(err.value)
    assert "tokens.json" in msg and "config.json" in msg and "agentlab train" in msg and "\n" not in msg
