"""Small pieces every baseline router shares: rankings, text with state, save-folder sidecars."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agentlab.errors import CheckpointError
from agentlab.fileio import atomic_write_json

SIDECAR = "router.json"


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax that tolerates ``-inf`` entries (probability 0)."""
    s = np.asarray(scores, dtype=np.float64)
    m = np.max(np.where(np.isfinite(s), s, -np.inf), axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(np.isfinite(s), np.exp(s - m), 0.0)
    z = e.sum(axis=1, keepdims=True)
    z[z == 0] = 1.0
    return e / z


def rankings(names: list[str], probs: np.ndarray) -> list[list[tuple[str, float]]]:
    """Every agent with its probability, sorted descending (ties keep pool order)."""
    out = []
    for row in probs:
        order = sorted(range(len(names)), key=lambda i: (-row[i], i))
        out.append([(names[i], float(row[i])) for i in order])
    return out


def with_state(task: str, state: str | None) -> str:
    """Task text plus a text rendering of the initial state, for routers that only see text."""
    return f"{task.strip()}\n{state.strip()}" if state and state.strip() else task.strip()


def write_sidecar(folder: Path, record: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / SIDECAR, record)


def read_sidecar(folder: Path, kind: str) -> dict[str, Any]:
    """The JSON record of a saved router; wrong kind or a corrupt file is a CheckpointError."""
    path = Path(folder) / SIDECAR
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"no saved {kind} router here ({SIDECAR} missing)", where=folder) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"corrupt router sidecar ({exc})", where=path) from None
    if not isinstance(rec, dict) or rec.get("kind") != kind:
        found = rec.get("kind") if isinstance(rec, dict) else None
        raise CheckpointError(f"this folder holds a '{found}' router, not '{kind}'", where=path)
    return rec
