"""The kinds of environment a task runs in: the one table every part of the harness reads.

A task file's ``env`` names a kind; an agent's runner declares the kind it acts in. What the
harness needs to know about a kind lives here and nowhere else: how to open it for a task (an
opener in :mod:`agentlab.envs`, imported lazily), which pool agents act on it (interface and
platform, for ground truth), which task kinds an agent acting in it can carry out, and how its
task files name paths. A new environment is one row here plus its opener.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnvKind:
    """One kind of environment."""

    name: str
    #: "module:function" opening it for a task (``agentlab.envs.task_env.open_task_env`` imports it)
    opener: str
    #: the interface of the pool agents acting in it: "CLI" (programs) or "GUI" (screens)
    interface: str
    #: the pool platform of those agents
    platform: str
    #: where ground truth looks when a task's domain has no agent of this interface
    fallback_domain: str
    #: task kinds an agent acting in this kind can carry out (a code agent edits a desktop task's
    #: files directly, as the paper's CLI agents do)
    acts_on: frozenset[str]
    #: its agents act on a task's files directly, whatever env the task opened (the workspace)
    over_files: bool = False
    #: setup paths are device paths (without the leading '/'), outputs absolute device paths, and
    #: reference solutions are actions replayed on the device (phones)
    device_paths: bool = False


ENV_KINDS: dict[str, EnvKind] = {
    "workspace": EnvKind("workspace", "agentlab.envs.task_env:open_workspace", "CLI", "desktop", "general",
                         frozenset({"workspace", "desktop"}), over_files=True),
    "desktop": EnvKind("desktop", "agentlab.envs.desktop_task:open_desktop_task", "GUI", "desktop", "general",
                       frozenset({"desktop"})),
    "phone": EnvKind("phone", "agentlab.envs.phone_task:open_phone_task", "GUI", "mobile", "mobile",
                     frozenset({"phone"}), device_paths=True),
}

#: the task envs an agent acting in each kind can carry out
CAN_ACT: dict[str, frozenset[str]] = {k.name: k.acts_on for k in ENV_KINDS.values()}

