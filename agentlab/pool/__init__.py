"""AgentPool: agent documents (the integration protocol), validation and enrolment."""

from agentlab.pool.document import (
    ALL_DOMAINS,
    DOMAINS,
    AgentDocument,
    Demonstration,
    load_document,
    parse_document,
)
from agentlab.pool.store import AgentPool, validate_dir

__all__ = [
    "ALL_DOMAINS",
    "DOMAINS",
    "AgentDocument",
    "AgentPool",
    "Demonstration",
    "load_document",
    "parse_document",
    "validate_dir",
]
