"""Prompt templates: text files under ``data/prompts/<user>/<name>.txt``, filled strictly, hashed.

One class serves every caller (AppAgent, the MetaAgent routers and manager, self-instruct), so
a prompt is loaded, filled and identified the same way everywhere:

* a template is named by its path under ``data/prompts/`` without ``.txt``, grouped by who
  uses it: ``appagent/deploy``, ``metaagent/router_agenttoken``, ``selfinstruct/completion``;
* ``{field}`` placeholders (lower case and ``_``) are filled in ONE pass by plain replacement,
  not ``str.format``: a value holding braces (screen text, documents) is never re-expanded and
  other braces in the text stay as they are;
* filling is strict: a placeholder without a value, or a value for a placeholder the template
  does not have, is a :class:`ConfigError` naming the template file (a typo in a field name
  fails loudly instead of sending a prompt with a hole in it);
* the template's SHA-256 (the full hex digest) is written wherever a result depends on the
  prompt (checkpoints, trajectories, self-instruct journals); :func:`check_recorded` compares
  a recorded hash with the current file and says which template changed and what to do.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentlab.errors import CheckpointError, ConfigError
from agentlab.paths import prompts_dir

FIELD_RE = re.compile(r"\{([a-z_]+)\}")

#: Length of the short hashes the self-instruct journal recorded before hashes were full.
LEGACY_SHA_LEN = 12


@dataclass(frozen=True)
class PromptTemplate:
    """A named template: its text, the file it came from, and its hash."""

    name: str
    text: str
    path: Path | None = None

    @property
    def where(self) -> str | Path:
        return self.path or self.name

    @property
    def sha256(self) -> str:
        """Full SHA-256 of the text: the identity recorded with everything made from this prompt."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def fields(self) -> set[str]:
        return set(FIELD_RE.findall(self.text))

    def render(self, **values: object) -> str:
        """Fill every placeholder in one pass; a missing or unknown field is a :class:`ConfigError`."""
        fields = self.fields
        missing, unknown = fields - set(values), set(values) - fields
        if missing:
            raise ConfigError(f"template '{self.name}' needs value(s) for {', '.join(sorted(missing))}", where=self.where)
        if unknown:
            raise ConfigError(
                f"template '{self.name}' has no placeholder(s) {', '.join('{' + f + '}' for f in sorted(unknown))}",
                where=self.where,
            )
        return FIELD_RE.sub(lambda m: str(values[m.group(1)]), self.text)

    def render_offered(self, values: Mapping[str, object]) -> str:
        """Fill from a menu of values of which this template uses some (the self-instruct styles).

        Strict the other way only: a placeholder with no offered value is still an error.
        """
        return self.render(**{k: v for k, v in values.items() if k in self.fields})

    def matches(self, recorded_sha: str) -> bool:
        """Is ``recorded_sha`` this text's hash? A 12-character legacy prefix counts as the same."""
        return same_sha(recorded_sha, self.sha256)


def same_sha(recorded: str, current: str) -> bool:
    """Do a recorded and a current template hash name the same text?

    Self-instruct journals written before hashes were full hold the first 12 hex digits;
    such a prefix of the current full hash is the same template.
    """
    if recorded == current:
        return True
    return len(recorded) == LEGACY_SHA_LEN and len(current) == 64 and current.startswith(recorded)


def template_path(name: str) -> Path:
    return prompts_dir() / f"{name}.txt"


def _name_for(path: Path) -> str:
    try:
        return path.resolve().relative_to(prompts_dir().resolve()).with_suffix("").as_posix()
    except ValueError:
        return path.stem


def load_template(name_or_path: str | Path) -> PromptTemplate:
    """Load ``data/prompts/<name>.txt`` (e.g. ``metaagent/manager``) or an explicit ``.txt`` path."""
    path = Path(name_or_path)
    if path.suffix != ".txt":
        path = template_path(str(name_or_path))
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = ""
        if isinstance(name_or_path, str) and "/" not in name_or_path:
            moved = sorted(p.relative_to(prompts_dir()).with_suffix("").as_posix()
                           for p in prompts_dir().glob(f"*/{name_or_path}.txt"))
            if moved:
                hint = f"; templates are grouped by their user now: did you mean {' or '.join(moved)}?"
        raise ConfigError(
            "prompt template not found; templates live in data/prompts/<user>/<name>.txt" + hint, where=path
        ) from None
    return PromptTemplate(name=_name_for(path), text=text, path=path)


def template_hashes(names: Iterable[str]) -> dict[str, str]:
    """``{name: sha256}`` of several templates (recorded in a trajectory header)."""
    return {n: load_template(n).sha256 for n in names}


def check_recorded(
    recorded_name: str,
    recorded_sha: str,
    current: PromptTemplate,
    *,
    where: str | Path,
    redo: str,
    since: str = "this was made",
) -> None:
    """Fail when ``current`` is not the template a saved result was made with.

    ``redo`` says how to make the result again (e.g. "retrain with `agentlab train`"),
    ``since`` what the recorded hash dates from (e.g. "training").
    """
    if current.matches(recorded_sha):
        return
    raise CheckpointError(
        f"prompt template '{recorded_name}' ({current.path or current.name}) changed since {since}: "
        f"recorded sha256 {recorded_sha}, current {current.sha256}; {redo}, or restore the template file",
        where=where,
    )
