"""Agents that act in an environment; the first is AppAgent (explore, then deploy)."""

from __future__ import annotations

from agentlab.agents.appagent import AppAgent
from agentlab.agents.appagent_core import AppAgentConfig, EpisodeResult
from agentlab.agents.docs_store import DocStore, ElementDoc, doc_key
from agentlab.agents.explore import record_demo

__all__ = ["AppAgent", "AppAgentConfig", "DocStore", "ElementDoc", "EpisodeResult", "doc_key", "record_demo"]
