"""An LLM config file with a model per role: ``llm:`` (the default) beside a ``roles:`` map.

Why: Agent S2's claim is a generalist planner with a specialist grounding model; PC-Agent and
COLA give each of their agents a model of its own; the MetaAgent routes with yet another. One
file says which model every role talks to::

    llm:      {kind: openai, base_url: http://127.0.0.1:8000/v1, model: Qwen2.5-7B-Instruct}
    roles:
      worker:   {kind: openai, base_url: http://127.0.0.1:8001/v1, model: Qwen2.5-VL-7B-Instruct, vision: true}
      grounder: {kind: openai, base_url: http://127.0.0.1:8002/v1, model: UI-TARS-1.5-7B, vision: true}

Each entry has the fields of ``llm:`` (:class:`~agentlab.llm.config.LLMConfig`, ``vision`` and
``max_image_side`` included); a role the file does not name uses ``llm:``. Which role names exist
is the agents' business (``agentlab.agents.roles``), so the caller passes them in: a name that is
none of them is one configuration line listing the known ones. A file without ``roles:`` is an
ordinary LLM config file (its fields under ``llm:`` or at the top level). Without a flag,
``AGENTLAB_LLM_CONFIG`` may name such a file (:func:`models_from_env`: the notebooks).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.config import config_from, line_of, load_mapping, validate
from agentlab.errors import ConfigError
from agentlab.llm.base import LLMBackend
from agentlab.llm.config import LLMConfig
from agentlab.llm.screens import ImageSides

#: the MetaAgent's role (routing, the plan manager); ``--router-llm-config`` wins over it
ROUTER_ROLE = "router"


@dataclass(frozen=True)
class Backends:
    """The loaded models of one worker: the default one, each role's own, each role's screenshot side.

    Why one object: the three always travel together (an episode meters each role's model and fits
    its screenshots to that role's side), so every signature takes this instead of three parallel
    arguments; :meth:`ModelsFile.load` builds it once per worker.
    """

    llm: LLMBackend
    roles: Mapping[str, LLMBackend] = field(default_factory=dict)
    sides: ImageSides = field(default_factory=ImageSides)

    @staticmethod
    def of(models: LLMBackend | Backends) -> Backends:
        """``models``, or one backend serving every role (a test's scripted model, a notebook's backbone)."""
        return models if isinstance(models, Backends) else Backends(models)


@dataclass(frozen=True)
class ModelsFile:
    """The default model and the models of named roles (nothing loaded)."""

    llm: LLMConfig = field(default_factory=LLMConfig)
    roles: Mapping[str, LLMConfig] = field(default_factory=dict)

    def config(self, role: str) -> LLMConfig:
        """The config ``role`` talks to (its own entry, else ``llm:``)."""
        return self.roles.get(role, self.llm)

    def image_sides(self) -> ImageSides:
        return ImageSides(self.llm.max_image_side, {r: c.max_image_side for r, c in self.roles.items()})

    def agent_roles(self) -> dict[str, LLMConfig]:
        """The roles episodes ask (all but ``router``: the MetaAgent's model is built by the router)."""
        return {r: c for r, c in self.roles.items() if r != ROUTER_ROLE}

    def load_roles(self) -> dict[str, LLMBackend]:
        """Each episode role's own model, loaded."""
        from agentlab.llm import load_backend

        return {r: load_backend(c) for r, c in self.agent_roles().items()}

    def load(self, llm: LLMBackend | None = None) -> Backends:
        """The episodes' models, loaded (``llm``: the default one already loaded, to reuse)."""
        from agentlab.llm import load_backend

        return Backends(llm or load_backend(self.llm), self.load_roles(), self.image_sides())


def load_models_file(path: str | Path, known_roles: Collection[str] | None = None) -> ModelsFile:
    """The models of ``path``; ``known_roles``: the role names a ``roles:`` entry may use (None: any).

    Every mistake is one :class:`ConfigError` line at ``file:line``: a ``roles:`` that is not a
    mapping, an entry that is not one, a field an entry cannot have, an unknown role name.
    """
    path = Path(path)
    raw, text = load_mapping(path, what="LLM config file", allow_empty=False)  # the one read of the file
    if "roles" in raw and "llm" not in raw:
        raise ConfigError("a file with roles: keeps its default model under llm: (the fields of every role's "
                          "entry are the same as llm:'s)", where=path)
    default = config_from(LLMConfig, dict(raw), text, path, wrapper="llm", siblings=("roles",)).from_source(str(path))
    if "roles" not in raw:
        return ModelsFile(default)
    section = raw["roles"] or {}
    if not isinstance(section, dict):
        raise ConfigError("roles: must map role names to model entries", where=_at(path, text, ("roles",)))
    roles: dict[str, LLMConfig] = {}
    for name, entry in section.items():
        name = str(name)
        if known_roles is not None and name not in known_roles:
            raise ConfigError(f"roles.{name}: unknown role; known roles: {', '.join(sorted(known_roles))}",
                              where=_at(path, text, ("roles", name)))
        if not isinstance(entry, dict):
            raise ConfigError(f"roles.{name}: must be a mapping with the fields of llm: (kind, model, ...)",
                              where=_at(path, text, ("roles", name)))
        roles[name] = validate(LLMConfig, dict(entry), where=path, text=text,
                               prefix=("roles", name)).from_source(str(path), f"roles.{name}")
    return ModelsFile(default, roles)


def models_from_env(known_roles: Collection[str] | None = None) -> ModelsFile:
    """The models ``AGENTLAB_LLM_CONFIG`` names (a roles file or a plain one), else ``AGENTLAB_LLM_*``
    for every role: how notebooks and scripts without a ``--llm-config`` flag take a roles file."""
    if path := os.environ.get("AGENTLAB_LLM_CONFIG"):
        return load_models_file(path, known_roles)
    return ModelsFile(LLMConfig.from_env())


def _at(path: Path, text: str, loc: tuple[str, ...]) -> str:
    line = line_of(text, loc)
    return f"{path}:{line}" if line else str(path)
