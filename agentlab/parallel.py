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

Start-up (issue #43): a Ray started here leaves out of its processes a module that only costs
time (:data:`SKIPPED_IN_RAY`), and a recipe may name a ``preload`` function (``"module:function"``,
no arguments) that every worker process runs on a thread as soon as Ray starts it -- before Ray
has finished starting, long before the worker gets its first item -- so its heavy imports and
models load while Ray still starts; the worker waits for it before it builds from the recipe.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from agentlab.errors import (
    ConfigError,
    EnvironmentUnavailableError,
    Stopped,
    Terminated,
    install_stop_handlers,
    restore_handlers,
    stop_for,
)

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


def _always(in_flight: int) -> bool:
    return True


@dataclass(frozen=True)
class Gate:
    """When a new item may start, and when the items in flight are cut (a run's budget,
    :mod:`agentlab.record.budget`).

    Why here: only the loop that hands items out knows when one is about to start; on Ray the next
    item is handed to a worker as soon as its previous one ends, before the caller sees the result.
    """

    #: asked before each item starts, with the number of items running then; False: start no more
    #: (the items not started are not yielded)
    admit: Callable[[int], bool] = _always
    #: ``time.monotonic()`` at which the items in flight are cut by raising ``expired()`` where they
    #: run (serial, main thread: a SIGALRM; Ray: the driver's loop, whose stop ends the workers' items)
    deadline: float = math.inf
    expired: Callable[[], BaseException] | None = None

    @property
    def cuts(self) -> bool:
        return self.expired is not None and self.deadline < math.inf


@contextmanager
def _alarm(gate: Gate) -> Iterator[None]:
    """SIGALRM at ``gate.deadline`` raising ``gate.expired()`` in this (main) thread while inside;
    nothing off the main thread (Python takes signals only there: the item then runs to its end)."""
    if not gate.cuts or threading.current_thread() is not threading.main_thread():
        yield
        return
    assert gate.expired is not None
    expired = gate.expired

    def ring(_signum: int, _frame: object) -> None:
        raise expired()

    before = signal.signal(signal.SIGALRM, ring)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(gate.deadline - time.monotonic(), 1e-3))
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def map_unordered(
    make_worker: WorkerRecipe[T, R],
    items: Sequence[T],
    scale: Scale | None = None,
    *,
    lost: Callable[[T, str], R],
    gate: Gate | None = None,
) -> Iterator[tuple[T, R]]:
    """``(item, fn(item))`` for every item, each once, in the order they finish (serial: in order).

    ``lost(item, why)`` is the result of an item whose worker died ``scale.retries + 1`` times.
    ``gate``: items it does not admit are not started (nor yielded); at its deadline the items in
    flight are cut (its ``expired()`` is raised).
    """
    scale = scale or Scale()
    gate = gate or Gate()
    if not items:
        return
    if not scale.distributed:
        fn = make_worker(0)
        for item in items:
            if not gate.admit(0):
                return
            with _alarm(gate):  # armed only while the item runs, never while the caller writes its result
                result = fn(item)
            yield item, result
        return
    yield from _on_ray(make_worker, items, scale, lost, gate)


class _WorkerActor(Generic[T, R]):
    """The Ray actor: builds its worker once (on :meth:`ready`), then runs one item per call.

    SIGTERM or SIGINT in a worker raises :class:`~agentlab.errors.Stopped` in the item it runs (as
    in the CLI process), so the item's ``finally`` blocks end its programs and close its env: the
    driver sends SIGTERM to its local workers when the run stops, before Ray kills them."""

    def __init__(self, make_worker: WorkerRecipe[T, R], index: int) -> None:
        self.make_worker, self.index = make_worker, index
        self.fn: Callable[[T], R] | None = None
        install_stop_handlers()  # Ray's own SIGTERM handler would exit without running any finally
        # the programs an item runs get the environment a serial run gives them: no stubs of ours
        rest = _without_stubs(os.environ.get("PYTHONPATH"))
        if rest is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = rest
        os.environ.pop(PRELOAD_ENV, None)

    def ready(self) -> int:
        if self.fn is None:
            head_start = getattr(sys.modules.get("sitecustomize"), "PRELOAD", None)
            if isinstance(head_start, threading.Thread):
                head_start.join()  # what it loads, the recipe would load again beside it
            self.fn = self.make_worker(self.index)
        return os.getpid()

    def run(self, item: T) -> R:
        self.ready()
        assert self.fn is not None
        return self.fn(item)


def private_ray_dir() -> Path:
    """Where a Ray started here keeps its sessions: ``<tmp>/agentlab-ray-<uid>/r``. Ray makes the
    folder it is given world-writable (0777) at every start, and its session folders too; their
    parent is ours and 0700, so nobody else reaches them or their logs, which hold prompts. A
    parent that is not ours (planted by another user, or a link) is not used: a fresh one is made.
    Short, since Ray's socket paths must fit 107 characters."""
    home = Path(tempfile.gettempdir()) / f"agentlab-ray-{os.getuid()}"
    try:
        home.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(home)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        log.warning("parallel: %s is not a folder of yours; Ray keeps its sessions in a new one", home)
        home = Path(tempfile.mkdtemp(prefix=f"agentlab-ray-{os.getuid()}-"))
    os.chmod(home, 0o700)
    return home / "r"


def _keep_private(ray_dir: Path) -> None:
    """After Ray started: its folder (made 0777 by Ray) and the parent back to 0700."""
    for folder in (ray_dir.parent, ray_dir):
        try:
            os.chmod(folder, 0o700)
        except OSError as exc:
            log.warning("parallel: could not make %s private (%s)", folder, exc.strerror)


#: modules a Ray process imports only to throw away: ``jsonschema`` (which Ray imports at start, for
#: its runtime-env schemas) imports ``rfc3987_syntax`` when it is installed, which builds an Earley
#: grammar at import -- 2.2 s of CPU in every Ray process (the driver, five of Ray's own, each worker),
#: about 15 s of CPU of a Ray start on 2 cores. Without it jsonschema skips only its ``iri`` format check.
SKIPPED_IN_RAY = ("rfc3987_syntax",)
STUBS_DIR = "agentlab-skip"
_STUB = 'raise ImportError("left out of the Ray processes agentlab starts (agentlab.parallel.SKIPPED_IN_RAY)")\n'
#: the recipe's ``preload`` (``module:function``) for the worker processes of a Ray started here
PRELOAD_ENV = "AGENTLAB_RAY_PRELOAD"
#: beside the stubs: Python imports ``sitecustomize`` from the path as it starts, so a Ray worker
#: process (``default_worker.py``) starts its recipe's preload at once, on a thread (the worker
#: registers with Ray meanwhile); every other process (Ray's own, a task's programs) is left alone
_SITECUSTOMIZE = '''"""Written by agentlab.parallel: a head start for the Ray workers agentlab starts (see PRELOAD_ENV there)."""
import os
import sys
import threading

PRELOAD = None
_spec = os.environ.get("AGENTLAB_RAY_PRELOAD")
if _spec and sys.argv and sys.argv[0].endswith("default_worker.py"):
    def _preload():
        try:
            import importlib

            import ray  # noqa: F401  (Ray's own imports first, whichever thread gets there)
            module, _, name = _spec.partition(":")
            getattr(importlib.import_module(module), name)()
        except BaseException as exc:  # only a head start: the worker builds what it needs anyway
            sys.stderr.write(f"agentlab: preload {_spec} failed: {exc!r}\\n")

    PRELOAD = threading.Thread(target=_preload, name="agentlab-preload", daemon=True)
    PRELOAD.start()
'''


def skip_in_ray_processes(home: Path) -> Path:
    """A folder of stubs raising ImportError for :data:`SKIPPED_IN_RAY` (inside ``home``, ours and
    0700), to put first on the ``PYTHONPATH`` of the Ray processes started here. Returns the folder."""
    stubs = home / STUBS_DIR
    for name in SKIPPED_IN_RAY:
        pkg = stubs / name
        pkg.mkdir(parents=True, exist_ok=True)
        _write_if_changed(pkg / "__init__.py", _STUB)
    _write_if_changed(stubs / "sitecustomize.py", _SITECUSTOMIZE)
    return stubs


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        from agentlab.fileio import atomic_write_text

        atomic_write_text(path, text)


def _without_stubs(path: str | None) -> str | None:
    """``PYTHONPATH`` without the stub folder of :func:`skip_in_ray_processes` (None: nothing left)."""
    kept = [p for p in (path or "").split(os.pathsep) if p and Path(p).name != STUBS_DIR]
    return os.pathsep.join(kept) or None


def _skip_here() -> None:
    """This process imports none of :data:`SKIPPED_IN_RAY` (when jsonschema is not imported yet)."""
    if "jsonschema" not in sys.modules:
        for name in SKIPPED_IN_RAY:
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None: "import name" raises ImportError


def _start_ray(scale: Scale, preload: str | None = None) -> bool:
    """Connect to the cluster or start Ray in-process; True when this call started it. ``preload``:
    what each worker process of a Ray started here runs as it starts (see the module's docstring)."""
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
            ray_dir = private_ray_dir()
            stubs = skip_in_ray_processes(ray_dir.parent)
            before = {k: os.environ.get(k) for k in ("PYTHONPATH", PRELOAD_ENV)}
            # Ray's processes (and the workers its raylet starts) inherit this process's environment
            os.environ["PYTHONPATH"] = os.pathsep.join([str(stubs), *([before["PYTHONPATH"]] if before["PYTHONPATH"] else [])])
            if preload:
                os.environ[PRELOAD_ENV] = preload
            t0 = time.monotonic()
            try:
                ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING, _temp_dir=str(ray_dir))
                log.info("parallel: Ray started in %.1f s", time.monotonic() - t0)
            finally:
                for k, v in before.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            _keep_private(ray_dir)
    except Exception as exc:  # Ray raises a bare Exception when its node starts too slowly
        ray.shutdown()
        where = address or "this machine"
        # Ray 2.60: a cluster started where a Ray token exists requires it; a driver sends it only when told
        token = ("; a cluster that requires a token needs RAY_AUTH_MODE=token (and its token) here"
                 if address and "RAY_AUTH_MODE" not in os.environ else "")
        raise EnvironmentUnavailableError(f"Ray did not start ({' '.join(str(exc).split())[:200]}); check the "
                                          f"address{token}, or retry when the machine is less busy", where=where) from None
    return True


def _original(exc: Any) -> BaseException:
    """The exception a worker's function raised (an AgentlabError stays itself: one CLI line)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc.as_instanceof_cause()


#: seconds the workers get to end their items' programs after a stop, before Ray kills them
STOP_GRACE_S = 15.0


def _on_ray(make_worker: WorkerRecipe[T, R], items: Sequence[T], scale: Scale,
            lost: Callable[[T, str], R], gate: Gate) -> Iterator[tuple[T, R]]:
    _skip_here()
    import ray
    from ray.exceptions import RayActorError, RayTaskError

    in_main = threading.current_thread() is threading.main_thread()
    before: dict[int, Any] = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)} if in_main else {}
    started = _start_ray(scale, getattr(make_worker, "preload", None))
    # Ray's own SIGTERM handler dumps a native stack and exits 134; an exception raised from a
    # handler while Ray's C++ waits turns into a SystemError. So SIGTERM and Ctrl-C only note the
    # signal here, and the loop below (waking every second) raises the stop between waits.
    signals: list[int] = []
    for sig, old in before.items():
        if not (sig == signal.SIGINT and old == signal.SIG_IGN):
            signal.signal(sig, lambda signum, _frame: signals.append(signum))
    actor_cls = ray.remote(num_cpus=scale.cpus_per_worker, max_restarts=0, max_task_retries=0)(_WorkerActor)
    n = min(scale.workers, len(items))
    actors: dict[int, Any] = {}
    pids: dict[int, Any] = {}  # worker index -> object ref of its pid (from ready(), run before any item)
    running: dict[Any, tuple[int, int]] = {}  # object ref -> (worker index, item position)
    queue = list(range(len(items)))
    queue.reverse()  # pop() from the end takes items in order
    deaths = [0] * len(items)

    def submit(worker: int) -> None:
        if worker not in actors:
            actors[worker] = actor_cls.remote(make_worker, worker)
            pids[worker] = actors[worker].ready.remote()
        pos = queue.pop()
        running[actors[worker].run.remote(items[pos])] = (worker, pos)

    eager = gate.admit is _always
    try:
        for w in range(n):
            if queue and gate.admit(len(running)):
                submit(w)
        while running:
            ready, _ = ray.wait(list(running), num_returns=1, timeout=min(1.0, max(gate.deadline - time.monotonic(), 0.01)))
            if signals:
                raise stop_for(signals[0])
            if gate.expired is not None and time.monotonic() >= gate.deadline:
                raise gate.expired()
            if not ready:
                continue
            ref = ready[0]
            worker, pos = running.pop(ref)
            try:
                result: R = ray.get(ref)
            except RayActorError as exc:
                actors.pop(worker, None)  # dead: the next submit starts a fresh one at this index
                pids.pop(worker, None)
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
                original = _original(exc)
                if isinstance(original, (Stopped, KeyboardInterrupt)):  # a worker had a stop signal first
                    theirs = signal.SIGTERM if isinstance(original, Terminated) else signal.SIGINT
                    raise stop_for(signals[0] if signals else theirs) from None
                raise original from None
            if eager and queue:  # no gate: the worker gets its next item at once
                submit(worker)
            yield items[pos], result  # with a gate, the caller counts this result before it is asked
            if not eager and queue and gate.admit(len(running)):
                submit(worker)
    finally:
        if running and started:  # the workers run here: let them end their items' programs first
            _stop_workers(pids, list(running))
        for actor in actors.values():
            ray.kill(actor)
        if started:
            _shutdown_started_ray()
        restore_handlers(before)


def _shutdown_started_ray() -> None:
    """``ray.shutdown()`` of a Ray started here, less its one slow step.

    Ray stops its processes one at a time, each with SIGTERM and up to 1 s to exit. All but one
    exit in ~20 ms; the autoscaler's monitor -- of no use on a single local node -- answers SIGTERM
    by publishing a "monitor died" error to the driver and takes the whole second (1.0 of the 1.46 s
    measured), at the end of every run. It holds nothing and starts no process, so it is killed
    first; the rest stop as Ray stops them. If Ray's internals moved, Ray's own shutdown does all."""
    import ray

    try:
        from ray._private import ray_constants
        from ray._private import worker as ray_worker

        node = ray_worker._global_node
        monitors: list[Any] = [] if node is None else node.all_processes.get(ray_constants.PROCESS_TYPE_MONITOR, [])
        for info in monitors:
            if info.process.poll() is None:
                info.process.kill()
                info.process.wait(timeout=STOP_GRACE_S)
    except Exception as exc:  # only a shortcut: Ray's shutdown below stops it anyway
        log.debug("parallel: the monitor was left to ray.shutdown (%r)", exc)
    ray.shutdown()


def _stop_workers(pids: dict[int, Any], running: list[Any]) -> None:
    """SIGTERM every worker of this machine, then wait (at most :data:`STOP_GRACE_S`) for the items
    they run to end: each raises Stopped where it is, so its programs end and its env closes
    (``ray.kill`` alone would SIGKILL the worker with its ``finally`` blocks unrun). Only for a Ray
    started here: a pid of another node's worker means nothing on this one."""
    import ray
    from ray.exceptions import GetTimeoutError, RayError

    for ref in pids.values():
        try:
            pid = ray.get(ref, timeout=1.0)  # a worker still building its models runs no program yet
        except (GetTimeoutError, RayError):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    ray.wait(running, num_returns=len(running), timeout=STOP_GRACE_S)
