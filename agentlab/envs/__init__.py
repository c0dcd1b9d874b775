"""Environments agents act on: an Android phone over adb, a desktop through pyautogui.

``from agentlab.envs import AndroidEnv, DesktopEnv, actions``. The environment classes are
imported lazily (module ``__getattr__``) so that a missing X display or adb never breaks
``import agentlab.envs``; the error appears only when that environment is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentlab.envs import actions
from agentlab.envs.base import Element, Env, Observation, StepResult

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.envs.android import AndroidEnv
    from agentlab.envs.desktop import DesktopEnv

__all__ = ["AndroidEnv", "DesktopEnv", "Element", "Env", "Observation", "StepResult", "actions"]

_LAZY = {"AndroidEnv": "agentlab.envs.android", "DesktopEnv": "agentlab.envs.desktop"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentlab.envs' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
