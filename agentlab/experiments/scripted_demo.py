"""Scripted demonstrations whose element numbers are looked up on the live screen (notebook 05).

A demonstration script names elements by their visible text (``click({Greet})``); the number
an agent must use changes with the screen, so each line is resolved when it is needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from agentlab.errors import DataError

if TYPE_CHECKING:
    from agentlab.envs.base import Observation


_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def element_number(obs: Observation, text: str) -> int:
    """The number of the first element whose visible text starts with ``text`` (case-insensitive)."""
    want = text.strip().lower()
    for el in obs.elements:
        if el.text.strip().lower().startswith(want):
            return el.id
    have = ", ".join(repr(e.text) for e in obs.elements[:20]) or "no labelled elements"
    raise DataError(f"no element whose text starts with {text!r} on this screen ({have})")


def scripted_lines(script: Sequence[str], latest: Callable[[], Observation]) -> Iterator[str]:
    """A scripted demonstration for :func:`agentlab.agents.record_demo`: each line is an action
    whose ``{Text}`` placeholders become the number of that element on the screen as it is when
    the line is needed (``latest()`` returns it), e.g. ``"click({Greet})"``, ``'type("Ada")'``."""
    for line in script:
        obs = latest()
        yield _PLACEHOLDER.sub(lambda m: str(element_number(obs, m.group(1))), line)
