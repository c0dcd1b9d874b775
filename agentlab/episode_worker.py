"""What each worker of a parallel ``agentlab exec`` builds for itself, and which screen or phone it owns.

A Ray worker is a fresh process: a loaded model cannot (and should not) be shipped to it. An
:class:`EpisodeRecipe` is the picklable description instead (LLM configs, the pool folder, the
router kind, the run's options); called with the worker's index inside the worker it loads that
worker's own backend, pool and router and returns the function :func:`agentlab.parallel.map_unordered`
applies to each task. Isolation: every task already gets its own episode folder and workspace, and
a desktop task its own private Xvfb unless ``--display`` names one; a named display or a real
phone serial cannot be shared by two workers, so they are given one per worker
(``--display :1,:2``, ``--device emulator-5554,emulator-5556``) and worker ``i`` takes entry ``i``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from agentlab.episode import ExecOptions, WorkItem, router_route, run_item
from agentlab.errors import ConfigError
from agentlab.llm.config import LLMConfig


def per_worker(value: str | None, workers: int, flag: str, *, shareable: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """``"a,b"`` -> ``("a", "b")``, checked to give every one of ``workers`` workers its own entry.

    ``None`` or a ``shareable`` value (the in-process fake device) needs nothing per worker: ``()``.
    """
    if value is None or value in shareable:
        return ()
    entries = tuple(v.strip() for v in value.split(","))
    if any(not v for v in entries):
        raise ConfigError(f"{flag} {value!r}: an empty entry; give one per worker separated by commas")
    if workers > 1 and len(entries) < workers:
        raise ConfigError(f"{flag} {value!r} is shared by {workers} workers; give one per worker "
                          f"(e.g. {flag} {','.join(f'<{i + 1}>' for i in range(workers))}) or leave it out")
    if len(set(entries)) < len(entries):
        raise ConfigError(f"{flag} {value!r}: the same entry twice; each worker needs its own")
    return entries


@dataclass(frozen=True)
class EpisodeRecipe:
    """Builds one worker of a parallel suite: its own agents' model, pool and router (picklable)."""

    out_dir: Path
    options: ExecOptions
    #: the agents' model
    llm: LLMConfig
    #: the router's / manager's model (None: ``AGENTLAB_LLM_*``, as ``agentlab route``)
    router_llm: LLMConfig | None = None
    router: str = "gt"
    tokens: Path | None = None
    agent: str | None = None
    agents_dir: Path | None = None
    #: one X display per worker (``()``: a private Xvfb per task, or the options' display)
    displays: tuple[str, ...] = ()
    #: one phone serial per worker (``()``: the options' device)
    devices: tuple[str, ...] = ()

    def options_for(self, index: int) -> ExecOptions:
        """The run's options with worker ``index``'s own display and device."""
        envs = self.options.envs
        if self.displays:
            envs = replace(envs, display=self.displays[index % len(self.displays)])
        if self.devices:
            envs = replace(envs, device=self.devices[index % len(self.devices)])
        return replace(self.options, envs=envs)

    def __call__(self, index: int) -> Callable[[WorkItem], dict[str, Any]]:
        from agentlab.llm import load_backend
        from agentlab.pool import AgentPool

        pool = AgentPool.from_dir(self.agents_dir)
        route = None if self.agent is not None or self.router == "gt" else router_route(
            self.router, pool, self.tokens, self.router_llm)
        llm = load_backend(self.llm)
        return partial(run_item, pool=pool, llm=llm, out_dir=self.out_dir, options=self.options_for(index),
                       route=route, agent=self.agent)
