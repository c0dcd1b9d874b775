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
    """Model and hidden-state cache (``AGENTLAB_CACHE``, default ``~/.cache/agentlab``).

    Created when possible; whoever writes into it checks :func:`unwritable` first, so an
    unwritable cache is one line before the work, not a traceback after it."""
    root = Path(os.environ.get("AGENTLAB_CACHE", Path.home() / ".cache" / "agentlab"))
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    return root


def unwritable(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (created if missing), or ``None`` if they can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "exists and is not a folder"
    except OSError as exc:
        return exc.strerror or str(exc)
    if not folder.is_dir():
        return "exists and is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "permission denied"
    return None


def runs_dir() -> Path:
    """Outputs of runs (git-ignored)."""
    return Path(os.environ.get("AGENTLAB_RUNS", REPO_ROOT / "runs"))


def benchmarks_dir() -> Path:
    """Public benchmark task lists (``AGENTLAB_BENCHMARKS``, default ``external/benchmarks`` inside the
    checkout, git-ignored): an input ``agentlab benchmarks fetch`` writes, never read from outside
    the repository unless the variable points there (:mod:`agentlab.eval.public_lists`)."""
    return Path(os.environ.get("AGENTLAB_BENCHMARKS") or REPO_ROOT / "external" / "benchmarks")
