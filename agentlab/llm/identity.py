"""A model's identity, derived from what determines its numbers: the weights.

Checkpoints (agent tokens, adapters), feature caches and run manifests record which backbone
they were made with, and refuse a different one. That identity must not move when a library
release rewrites metadata: transformers writes its own version into ``config.json`` on every
``save_pretrained``, so hashing that file turned a new transformers release into "a different
model" although every weight was the same (issue #27). Identity is therefore computed from:

- a single weights file (``.gguf``, ``.bin``, ...): its size and the bytes of its first and
  last MiB (:func:`file_fingerprint`; hashing gigabytes at every start would cost minutes);
- a ``.safetensors`` file: the sorted tensor names, dtypes and shapes from its header and, per
  tensor, the size and a sample of its bytes (first and last 64 KiB). The header's free-form
  ``__metadata__`` and the order or offsets of tensors in the file do not count, so a library
  that lays the same tensors out differently keeps the identity, while a changed value at
  either end of any tensor, a renamed, reshaped or retyped tensor changes it;
- a folder: the identities of its weights files by relative name (configuration files are not
  read at all).

The scheme is named (:data:`SCHEME`) so that a checkpoint can say which rule stamped it.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

from agentlab.errors import ModelNotFoundError

#: name of the identity rule; recorded next to a fingerprint in checkpoints
SCHEME = "weights/1"
#: files whose bytes make a model
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".onnx")
_SAMPLE = 1 << 16  # bytes read at each end of a tensor
_CHUNK = 1 << 20  # bytes read at each end of an opaque weights file
_MAX_HEADER = 100 << 20  # safetensors' own limit on the JSON header


def file_fingerprint(path: Path, chunk: int = _CHUNK) -> str:
    """Cheap, stable identity of an opaque weights file: size + sha256 of its first and last MiB."""
    h = hashlib.sha256()
    size = path.stat().st_size
    h.update(str(size).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(chunk))
        if size > chunk:
            fh.seek(max(size - chunk, 0))
            h.update(fh.read(chunk))
    return h.hexdigest()[:16]


def _safetensors_header(path: Path) -> tuple[int, dict[str, dict[str, Any]]] | None:
    """(data start, tensor entries) of a safetensors file, or ``None`` when it is not one."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            return None
        (n,) = struct.unpack("<Q", raw)
        if n == 0 or n > _MAX_HEADER:
            return None
        try:
            header = json.loads(fh.read(n))
        except (ValueError, UnicodeDecodeError):
            return None
    if not isinstance(header, dict):
        return None
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    if not all(isinstance(v, dict) and "data_offsets" in v for v in tensors.values()):
        return None
    return 8 + n, tensors


def safetensors_fingerprint(path: Path) -> str:
    """Identity of a safetensors file from its tensors (names, dtypes, shapes, sampled bytes),
    independent of header metadata and tensor order; an unreadable header falls back to
    :func:`file_fingerprint`."""
    parsed = _safetensors_header(path)
    if parsed is None:
        return file_fingerprint(path)
    start, tensors = parsed
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for name in sorted(tensors):
            entry = tensors[name]
            begin, end = (int(x) for x in entry["data_offsets"])
            size = end - begin
            h.update(f"{name}\0{entry.get('dtype')}\0{entry.get('shape')}\0{size}\0".encode())
            fh.seek(start + begin)
            h.update(fh.read(min(size, _SAMPLE)))
            if size > _SAMPLE:
                fh.seek(start + max(begin, end - _SAMPLE))
                h.update(fh.read(min(size - _SAMPLE, _SAMPLE)))
    return h.hexdigest()[:16]


def weights_file_fingerprint(path: Path) -> str:
    """The identity of one weights file by its kind."""
    return safetensors_fingerprint(path) if path.suffix == ".safetensors" else file_fingerprint(path)


def weights_fingerprint(folder: Path) -> str | None:
    """Identity of a model folder from its weights files alone (recursively, by relative name;
    hidden files skipped). ``None`` for a folder without weights."""
    h = hashlib.sha256()
    seen = False
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if not p.is_file() or p.suffix not in WEIGHT_SUFFIXES or any(part.startswith(".") for part in rel.parts):
            continue
        h.update(rel.as_posix().encode() + b"\0" + weights_file_fingerprint(p).encode() + b"\n")
        seen = True
    return h.hexdigest()[:16] if seen else None


def model_fingerprint(folder: Path, gguf_file: str | None = None) -> str:
    """The identity a backend records: the GGUF file when it loads one, else the folder's weights."""
    if gguf_file:
        return file_fingerprint(folder / gguf_file)
    fp = weights_fingerprint(folder)
    if fp is None:
        raise ModelNotFoundError(f"no weights files ({', '.join(WEIGHT_SUFFIXES)}) in the model folder", where=folder)
    return fp
