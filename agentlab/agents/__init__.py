"""Agents that act in an environment; the first is AppAgent (explore, then deploy)."""

from __future__ import annotations

from agentlab.agents.appagent.agent import AppAgent
from agentlab.agents.appagent.core import AppAgentConfig, EpisodeResult
from agentlab.agents.appagent.docs_store import DocStore, ElementDoc, doc_key
from agentlab.agents.appagent.explore import record_demo

__all__ = ["AppAgent", "AppAgentConfig", "DocStore", "ElementDoc", "EpisodeResult", "doc_key", "record_demo"]
