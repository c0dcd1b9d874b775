"""Run one function over many items on several workers (Ray), yielding each result as it ends.

Why: a suite of episodes, self-instruct shards or manager plans are independent items that take
seconds to minutes each; on a cluster (or the cores of this machine) they should run side by
side. Ray is the engine, but only when asked: with ``Scale(workers=1)`` and no ``address`` (the
default) :func:`map_unordered` runs in-process, in order, offline, and Ray is not even imported.

The caller gives a **worker recipe**: a picklable ``make_worker(index) -> fn`` that runs inside
each worker process and builds what that worker needs there (its own LLM backend from an
``LLMConfig``, its own pool and router; never a loaded model shipped over the wire). ``index``
(0..workers-1) lets a worker pick its own display or device serial.

Each worker holds one item at a time, so a worker that dies (killed, out of memory, a crashed
extension) loses only its current item: a fresh worker takes the same index and the item is run
again (``retries`` times, default once); after that the caller's ``lost(item, why)`` gives the
item's result (e.g. a harness-error row). Every item is yielded exactly once; only the driver (the
caller iterating) writes results, so a finished result is never lost or written twice. An
ordinary exception raised by ``fn`` is a bug, not a dead worker: it is re-raised in the driver,
as the serial path would.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from agentlab.errors import ConfigError, EnvironmentUnavailableError, Terminated, raise_on_sigterm

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: runs in a worker: builds that worker's state and returns the function applied to each item
WorkerRecipe = Callable[[int], Callable[[T], R]]


@dataclass(frozen=True)
class Scale:
    """Where items run: ``workers`` processes on this machine, or on the Ray cluster at ``address``."""

    workers: int = 1
    #: an existing Ray cluster (``ray://host:10001`` or ``auto``); None: the one ``RAY_ADDRESS`` names,
    #: else start Ray here when workers > 1
    address: str | None = None
    #: CPUs each worker reserves (latency-bound episodes waiting on a remote model may ask less)
    cpus_per_worker: float = 1.0
    #: times an item whose worker died is run again before ``lost`` gives its result
    retries: int = 1

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, not {self.workers}")
        if self.cpus_per_worker <= 0:
            raise ConfigError(f"CPUs per worker must be positive, not {self.cpus_per_worker}")
        if self.retries < 0:
            raise ConfigError(f"retries must be 0 or more, not {self.retries}")

    @property
    def distributed(self) -> bool:
        """Whether items go to Ray workers (otherwise: in-process, in order)."""
        return self.workers > 1 or self.address is not None


def map_unordered(
    make_worker: WorkerRecipe[T, R],
    items: Sequence[T],
    scale: Scale | None = None,
    *,
    lost: Callable[[T, str], R],
) -> Iterator[tuple[T, R]]:
    """``(item, fn(item))`` for every item, each once, in the order they finish (serial: in order).

    ``lost(item, why)`` is the result of an item whose worker died ``scale.retries + 1`` times.
    """
    scale = scale or Scale()
    if not items:
        return
    if not scale.distributed:
        fn = make_worker(0)
        for item in items:
            yield item, fn(item)
        return
    yield from _on_ray(make_worker, items, scale, lost)


class _WorkerActor(Generic[T, R]):
    """The Ray actor: builds its worker once (on :meth:`ready`), then runs one item per call."""

    def __init__(self, make_worker: WorkerRecipe[T, R], index: int) -> None:
        self.make_worker, self.index = make_worker, index
        self.fn: Callable[[T], R] | None = None

    def ready(self) -> int:
        import os

        if self.fn is None:
            self.fn = self.make_worker(self.index)
        return os.getpid()

    def run(self, item: T) -> R:
        self.ready()
        assert self.fn is not None
        return self.fn(item)


def private_ray_dir() -> Path:
    """Where a Ray started here keeps its sessions: a folder only this user can enter (Ray makes its
    session folders world-writable; inside a 0700 folder nobody else reaches them or their logs,
    which hold prompts). Short, since Ray's socket paths must fit 107 characters."""
    folder = Path(tempfile.gettempdir()) / f"agentlab-ray-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def _start_ray(scale: Scale) -> bool:
    """Connect to the cluster or start Ray in-process; True when this call started it."""
    import ray

    if ray.is_initialized():
        return False
    address = scale.address or os.environ.get("RAY_ADDRESS")  # Ray's own convention: a cluster to use
    try:
        if address:
            log.info("parallel: connecting to the Ray cluster at %s", address)
            ray.init(address=address, logging_level=logging.WARNING)
        else:
            cpus = max(1, math.ceil(scale.workers * scale.cpus_per_worker))
            log.info("parallel: starting Ray here with %d worker(s), %d CPU(s)", scale.workers, cpus)
            ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING, _temp_dir=str(private_ray_dir()))
    except Exception as exc:  # Ray raises a bare Exception when its node starts too slowly
        ray.shutdown()
        where = address or "this machine"
        raise EnvironmentUnavailableError(f"Ray did not start ({' '.join(str(exc).split())[:200]}); check the "
                                          "address, or retry when the machine is less busy", where=where) from None
    return True


def _original(exc: Any) -> BaseException:
    """The exception a worker's function raised (an AgentlabError stays itself: one CLI line)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc.as_instanceof_cause()


def _on_ray(make_worker: WorkerRecipe[T, R], items: Sequence[T], scale: Scale,
            lost: Callable[[T, str], R]) -> Iterator[tuple[T, R]]:
    import ray
    from ray.exceptions import RayActorError, RayTaskError

    started = _start_ray(scale)
    # Ray's own SIGTERM handler dumps a native stack and exits 134; an exception raised from a
    # handler while Ray's C++ waits turns into a SystemError. So SIGTERM only sets a flag here, and
    # the loop below (waking every second) raises Terminated between waits: the finally shuts Ray down.
    term = threading.Event()
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        signal.signal(signal.SIGTERM, lambda *_: term.set())
    actor_cls = ray.remote(num_cpus=scale.cpus_per_worker, max_restarts=0, max_task_retries=0)(_WorkerActor)
    n = min(scale.workers, len(items))
    actors: dict[int, Any] = {}
    running: dict[Any, tuple[int, int]] = {}  # object ref -> (worker index, item position)
    queue = list(range(len(items)))
    queue.reverse()  # pop() from the end takes items in order
    deaths = [0] * len(items)

    def submit(worker: int) -> None:
        if worker not in actors:
            actors[worker] = actor_cls.remote(make_worker, worker)
        pos = queue.pop()
        running[actors[worker].run.remote(items[pos])] = (worker, pos)

    try:
        for w in range(n):
            if queue:
                submit(w)
        while running:
            ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)  # wakes up for signals
            if term.is_set():
                raise Terminated("terminated (SIGTERM); finished results were kept and the run can be resumed")
            if not ready:
                continue
            ref = ready[0]
            worker, pos = running.pop(ref)
            try:
                result: R = ray.get(ref)
            except RayActorError as exc:
                actors.pop(worker, None)  # dead: the next submit starts a fresh one at this index
                init, cause = getattr(exc, "actor_init_failed", False), getattr(exc, "cause", None)
                if init and isinstance(cause, RayTaskError):  # its recipe raised: not a death
                    raise _original(cause) from None
                deaths[pos] += 1
                why = f"worker {worker} died running this item ({deaths[pos]} time(s))"
                log.warning("parallel: %s", why)
                if deaths[pos] <= scale.retries:
                    queue.append(pos)  # run it again next
                    submit(worker)
                    continue
                result = lost(items[pos], why)
            except RayTaskError as exc:
                raise _original(exc) from None
            if queue:
                submit(worker)
            yield items[pos], result
    finally:
        for actor in actors.values():
            ray.kill(actor)
        if started:
            ray.shutdown()
        if in_main:
            raise_on_sigterm()
