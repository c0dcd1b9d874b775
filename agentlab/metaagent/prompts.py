"""Prompt templates for the MetaAgent, loaded by name from ``data/prompts/`` and hashed.

A template is plain text with ``{field}`` placeholders. Fields are substituted by plain
string replacement (not ``str.format``), so agent documents and tasks may contain braces.
The template's SHA-256 goes into every checkpoint trained on it, so a changed prompt is
detected when the checkpoint is loaded.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from agentlab.errors import ConfigError
from agentlab.paths import prompts_dir

FIELD_RE = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class PromptTemplate:
    """A named template: its text, where it came from and its hash."""

    name: str
    text: str
    path: Path | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def fields(self) -> set[str]:
        return set(FIELD_RE.findall(self.text))

    def render(self, **values: str) -> str:
        """Fill every placeholder; a missing value is a :class:`ConfigError` naming the file."""
        missing = self.fields - set(values)
        if missing:
            raise ConfigError(
                f"template needs value(s) for {', '.join(sorted(missing))}",
                where=self.path or self.name,
            )
        out = self.text
        # Substitute in one pass so a value containing '{task}' is never re-expanded.
        return FIELD_RE.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), out)


def load_template(name_or_path: str | Path) -> PromptTemplate:
    """Load ``data/prompts/<name>.txt`` (or an explicit path to a ``.txt`` file)."""
    path = Path(name_or_path)
    if path.suffix != ".txt":
        path = prompts_dir() / f"{name_or_path}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "prompt template not found; templates live in data/prompts/<name>.txt", where=path
        ) from None
    return PromptTemplate(name=path.stem, text=text, path=path)
