"""Where things live: repository data, the model cache, run outputs, shared benchmarks.

Every location can be overridden by an environment variable so that tests, CI and users
with other layouts never need to edit code.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Repository root (the folder holding ``agentlab/`` and ``data/``) for an editable install.
REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The project's data folder (agent documents, prompts, shipped demos and tokens)."""
    return Path(os.environ.get("AGENTLAB_DATA", REPO_ROOT / "data"))


def prompts_dir() -> Path:
    return data_dir() / "prompts"


def agents_dir() -> Path:
    return data_dir() / "agents"


def cache_dir() -> Path:
    """Model and hidden-state cache (``AGENTLAB_CACHE``, default ``~/.cache/agentlab``)."""
    root = Path(os.environ.get("AGENTLAB_CACHE", Path.home() / ".cache" / "agentlab"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def runs_dir() -> Path:
    """Outputs of runs (git-ignored)."""
    return Path(os.environ.get("AGENTLAB_RUNS", REPO_ROOT / "runs"))


def benchmarks_dir() -> Path:
    """Public benchmark task lists (``AGENTLAB_BENCHMARKS``, default ``../shared/benchmarks``)."""
    return Path(os.environ.get("AGENTLAB_BENCHMARKS", REPO_ROOT.parent / "shared" / "benchmarks"))
