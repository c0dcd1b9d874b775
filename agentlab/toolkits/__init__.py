"""Typed toolkits of the code specialists: one module per domain, each a :class:`~.base.Toolkit`
called ``kit``; :data:`TOOLKITS` names them (a document's ``runner_options: {toolkit: NAME}``)."""

from __future__ import annotations

import importlib

from agentlab.errors import ConfigError
from agentlab.toolkits.base import Toolkit

#: toolkit name -> module holding its ``kit``
TOOLKITS: dict[str, str] = {
    "sheets": "agentlab.toolkits.sheets",
    "documents": "agentlab.toolkits.documents",
    "slides": "agentlab.toolkits.slides",
    "files": "agentlab.toolkits.files",
    "settings": "agentlab.toolkits.settings",
    "images": "agentlab.toolkits.images",
    "browser": "agentlab.toolkits.browser",
    "mail": "agentlab.toolkits.mail",
    "media": "agentlab.toolkits.media",
    "data": "agentlab.toolkits.data",
}


def load_toolkit(name: str) -> Toolkit:
    """The toolkit called ``name``; an unknown one is a :class:`ConfigError` listing them."""
    if name not in TOOLKITS:
        raise ConfigError(f"unknown toolkit {name!r}; known toolkits: {', '.join(TOOLKITS)}")
    kit: Toolkit = importlib.import_module(TOOLKITS[name]).kit
    return kit
