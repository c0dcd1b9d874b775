"""AppAgent prompt templates, loaded by name from ``data/prompts/appagent_*.txt`` and hashed.

``{field}`` placeholders are filled by plain replacement in one pass (screen text and
documentation may contain braces). Each template's SHA-256 is written into the episode
header, so a trajectory says exactly which prompt produced it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from agentlab.errors import ConfigError
from agentlab.paths import prompts_dir

_FIELD = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str
    path: Path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **values: str) -> str:
        missing = set(_FIELD.findall(self.text)) - set(values)
        if missing:
            raise ConfigError(f"template needs value(s) for {', '.join(sorted(missing))}", where=self.path)
        return _FIELD.sub(lambda m: str(values[m.group(1)]), self.text).strip() + "\n"


def load_prompt(name: str) -> Prompt:
    """``data/prompts/<name>.txt``; a missing file is a :class:`ConfigError` naming it."""
    path = prompts_dir() / f"{name}.txt"
    try:
        return Prompt(name, path.read_text(encoding="utf-8"), path)
    except FileNotFoundError:
        raise ConfigError("prompt template not found (templates live in data/prompts/<name>.txt)", where=path) from None


PROMPT_NAMES = (
    "appagent_system",
    "appagent_explore_act",
    "appagent_explore_reflect",
    "appagent_demo_doc",
    "appagent_deploy",
)


def prompt_hashes() -> dict[str, str]:
    return {n: load_prompt(n).sha256 for n in PROMPT_NAMES}
