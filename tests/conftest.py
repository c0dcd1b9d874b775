"""Shared fixtures: the real embedded models (cheap here), offline, loaded once per session."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# adbutils must never start a real adb daemon in tests.
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")

import pytest


@pytest.fixture(scope="session")
def backend():
    """The embedded SmolLM2-135M-Instruct (frozen, CPU)."""
    from agentlab.llm import load_local

    return load_local()


@pytest.fixture(scope="session")
def scorer():
    """BERTScore on the embedded all-MiniLM-L6-v2."""
    from agentlab.similarity import default_scorer

    return default_scorer()


@pytest.fixture(scope="session")
def pool():
    """The project's 30-agent pool from data/agents."""
    from agentlab.pool import AgentPool

    return AgentPool.from_dir()
