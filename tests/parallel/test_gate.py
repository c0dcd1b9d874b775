"""The gate of agentlab.parallel.map_unordered (a run's budget, issue #43): items it does not admit
never start, serially or on Ray workers, and at its deadline the items in flight are cut."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from agentlab.errors import OutOfBudget
from agentlab.parallel import Gate, Scale, map_unordered


def _lost(item: int, why: str) -> int:
    return -1


class Sleepy:
    """A picklable recipe: each item sleeps ``seconds`` and returns itself."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, index: int) -> Callable[[int], int]:
        def fn(x: int) -> int:
            time.sleep(self.seconds)
            return x
        return fn


def _cut_at(seconds: float) -> Gate:
    return Gate(deadline=time.monotonic() + seconds, expired=lambda: OutOfBudget("the seconds budget ran out"))


def _admit_until(done: list[int], n: int) -> Callable[[int], bool]:
    return lambda in_flight: len(done) + in_flight < n


@pytest.mark.parametrize("scale", [Scale(), Scale(workers=2)], ids=["serial", "ray"])
def test_items_the_gate_refuses_never_start(request, scale: Scale) -> None:  # type: ignore[no-untyped-def]
    if scale.distributed:
        request.getfixturevalue("ray_session")
    done: list[int] = []
    for item, _ in map_unordered(Sleepy(0.1), list(range(8)), scale, lost=_lost, gate=Gate(admit=_admit_until(done, 3))):
        done.append(item)
    assert sorted(done) == [0, 1, 2]


@pytest.mark.parametrize("scale", [Scale(), Scale(workers=2)], ids=["serial", "ray"])
def test_the_deadline_cuts_the_items_in_flight(request, scale: Scale) -> None:  # type: ignore[no-untyped-def]
    if scale.distributed:
        request.getfixturevalue("ray_session")
    t0 = time.monotonic()
    with pytest.raises(OutOfBudget):
        list(map_unordered(Sleepy(30.0), [1, 2], scale, lost=_lost, gate=_cut_at(1.0)))
    assert time.monotonic() - t0 < 8.0


def test_the_alarm_is_disarmed_between_items_and_after() -> None:
    import signal

    before = signal.getsignal(signal.SIGALRM)
    out = [x for x, _ in map_unordered(Sleepy(0.05), [1, 2, 3], Scale(), lost=_lost, gate=_cut_at(5.0))]
    assert out == [1, 2, 3] and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == before
