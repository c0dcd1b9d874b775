"""Running tasks: the one public way is a :class:`RunSpec` given to :func:`execute` (or, for a
one-task debug, to :func:`run_task` with the task).

The spec names the tasks' run (its folder, options, models, router, workers); :func:`execute`
checks the folder once, writes the manifest, and runs every episode through the kernel
(:func:`agentlab.run.episode.run_task`) in-process or on Ray workers built from one recipe
(:mod:`agentlab.run.worker`). The CLI's ``agentlab exec``, the studies, the benchmarks and the
notebooks all build a spec. Names are resolved lazily so that importing the package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.run.worker import RunSpec, execute, run_task

__all__ = ["RunSpec", "execute", "run_task"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentlab.run import worker

        return getattr(worker, name)
    raise AttributeError(f"module 'agentlab.run' has no attribute {name!r}")
