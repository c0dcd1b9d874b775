"""How long a model call may take: a whole reply within ``llm.timeout_s``, and never past the
task's time limit.

Why: an HTTP client's timeouts are per phase and per read, so a server that sends one byte every
few seconds holds a call (and the run) for ever; and ``agentlab exec --time-limit`` was checked
only before actions, so one slow reply could outlive the task's limit by any amount. Two pieces:

- :func:`task_deadline` sets the task's deadline (``time.monotonic()``) for everything the episode
  runs inside it; a backend reads what is left with :func:`task_time_left` and stops a call there,
  raising :class:`~agentlab.errors.TimeLimitExceeded` (the row says ``time_limit``). A context
  variable, because a dozen callers (agents, roles, the router, the plan manager) reach a model
  through the one ``chat``/``complete`` interface: the deadline belongs to the task, not to the
  call's arguments.
- :func:`bound_client` makes every connect, read and write of an HTTP client wait at most until
  the current call's deadline (:func:`call_deadline`), below the client's own per-read timeouts:
  a trickled reply is cut when its time is up, whatever the server does.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

_TASK_DEADLINE: ContextVar[float] = ContextVar("agentlab_task_deadline", default=math.inf)


@contextmanager
def task_deadline(deadline: float) -> Iterator[None]:
    """Model calls made inside end by ``deadline`` (``time.monotonic()``; an outer, earlier one stays)."""
    token = _TASK_DEADLINE.set(min(deadline, _TASK_DEADLINE.get()))
    try:
        yield
    finally:
        _TASK_DEADLINE.reset(token)


def task_time_left() -> float:
    """Seconds left before the task's deadline (``inf`` outside a task)."""
    return _TASK_DEADLINE.get() - time.monotonic()


@dataclass
class CallBudget:
    """One HTTP call's deadline and the reply bytes that arrived before it (for the message)."""

    deadline: float
    received: int = 0

    def left(self) -> float:
        return self.deadline - time.monotonic()


_CALL: ContextVar[CallBudget | None] = ContextVar("agentlab_call_budget", default=None)


@contextmanager
def call_deadline(deadline: float) -> Iterator[CallBudget]:
    """The HTTP traffic inside (of a :func:`bound_client`) ends by ``deadline``."""
    budget = CallBudget(deadline)
    token = _CALL.set(budget)
    try:
        yield budget
    finally:
        _CALL.reset(token)


class _Errors:
    """The timeout exceptions of the HTTP core a client uses (``httpcore`` or ``httpcore2``): the
    client maps only its own core's exceptions to its timeouts."""

    def __init__(self, core: Any) -> None:
        self.connect, self.read, self.write = core.ConnectTimeout, core.ReadTimeout, core.WriteTimeout


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to the current call's time left; none left raises ``error``."""
    budget = _CALL.get()
    if budget is None:
        return timeout
    left = budget.left()
    if left <= 0:
        raise error("the reply's deadline passed")
    return left if timeout is None else min(timeout, left)


class BoundedStream:
    """A network stream whose every operation waits at most until the call's deadline."""

    def __init__(self, inner: Any, errors: _Errors) -> None:
        self.inner, self.errors = inner, errors

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self.inner.read(max_bytes, _bounded(timeout, self.errors.read))
        budget = _CALL.get()
        if budget is not None:
            budget.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _bounded(timeout, self.errors.write))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> BoundedStream:
        return BoundedStream(self.inner.start_tls(ssl_context, server_hostname, _bounded(timeout, self.errors.connect)),
                             self.errors)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class BoundedNetwork:
    """An HTTP core network backend whose connections are :class:`BoundedStream` s."""

    def __init__(self, inner: Any, errors: _Errors) -> None:
        self.inner, self.errors = inner, errors

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> BoundedStream:
        stream = self.inner.connect_tcp(host, port, _bounded(timeout, self.errors.connect), local_address, socket_options)
        return BoundedStream(stream, self.errors)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> BoundedStream:
        stream = self.inner.connect_unix_socket(path, _bounded(timeout, self.errors.connect), socket_options)
        return BoundedStream(stream, self.errors)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def bound_client(client: Any) -> bool:
    """Put :class:`BoundedNetwork` under every connection pool of an ``httpx`` (or ``httpx2``)
    client, so its traffic honours :func:`call_deadline`. The clients offer no public hook for the
    network backend, so this reaches their pools; a client built otherwise is left as it is, with a
    warning (its replies are then bounded per read only), and ``False`` is returned."""
    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    bounded = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if pool is None or backend is None:
            continue
        core = sys.modules.get(type(pool).__module__.split(".")[0])
        if not all(hasattr(core, n) for n in ("ConnectTimeout", "ReadTimeout", "WriteTimeout")):
            continue
        if not isinstance(backend, BoundedNetwork):
            pool._network_backend = BoundedNetwork(backend, _Errors(core))
        bounded += 1
    if not bounded:
        log.warning("cannot bound the replies of %s as a whole (its connection pool is not reachable); "
                    "llm.timeout_s then applies to each read only", type(client).__name__)
    return bounded > 0
