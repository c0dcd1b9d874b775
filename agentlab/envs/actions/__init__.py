"""Action spaces by name: the one place a space's name (a config, a CLI flag, a record) is resolved.

Each space lives in its own module — :mod:`~agentlab.envs.actions.phone` (AppAgent's),
:mod:`~agentlab.envs.actions.desktop` (PC-Agent's), :mod:`~agentlab.envs.actions.workspace` (the
code agent's programs) — as an
:class:`~agentlab.envs.actions.space.ActionSpace` and the action classes it registers.
Importing any part of this package registers all of them, so a recorded action dict always
turns back into its action (:meth:`~agentlab.envs.actions.base.Action.from_dict`).

Adding a space: write ``agentlab/envs/actions/<name>.py`` (an ``ActionSpace`` plus its action
classes, each with a docstring whose first line ends in an ``e.g. call(...)`` example) and add
the space to :data:`SPACES` below.
"""

from __future__ import annotations

from pathlib import Path

from agentlab.envs.actions.desktop import DESKTOP
from agentlab.envs.actions.phone import PHONE
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.actions.workspace import WORKSPACE
from agentlab.errors import ConfigError

#: name -> space, for every space there is
SPACES: dict[str, ActionSpace] = {space.name: space for space in (PHONE, DESKTOP, WORKSPACE)}


def action_space(name: str, *, where: str | Path | None = None) -> ActionSpace:
    """The space called ``name``; a :class:`~agentlab.errors.ConfigError` naming the known
    spaces for any other name (``where``: the file or flag the name came from)."""
    space = SPACES.get(name) if isinstance(name, str) else None
    if space is None:
        raise ConfigError(
            f"unknown action space {name!r}; known spaces: {', '.join(sorted(SPACES))}", where=where
        )
    return space
