"""agentlab.parallel: serial by default (Ray not imported), every item once on Ray workers, a dead
worker's item run again or given up as ``lost``, a recipe's error re-raised as itself."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentlab.errors import ConfigError
from agentlab.parallel import Scale, map_unordered


def _lost(item: int, why: str) -> str:
    return f"lost {item}: {why}"


class Square:
    """A picklable recipe: each worker squares; records which worker (pid) ran what."""

    def __init__(self, log_dir: Path | None = None) -> None:
        self.log_dir = log_dir

    def __call__(self, index: int):  # type: ignore[no-untyped-def]
        def fn(x: int) -> tuple[int, int]:
            if self.log_dir is not None:
                (self.log_dir / f"{x}.{os.getpid()}").touch()
            return x * x, index
        return fn


class DiesOnce:
    """Kills its worker process (os._exit) the first time it meets ``victim``; ``always``: every time."""

    def __init__(self, marker: Path, victim: int, always: bool = False) -> None:
        self.marker, self.victim, self.always = marker, victim, always

    def __call__(self, index: int):  # type: ignore[no-untyped-def]
        def fn(x: int) -> int:
            if x == self.victim and (self.always or not self.marker.exists()):
                self.marker.touch()
                os._exit(1)
            return x * 10
        return fn


class BadRecipe:
    def __call__(self, index: int):  # type: ignore[no-untyped-def]
        raise ConfigError("no such model", where="llm.yaml")


def test_serial_default_runs_in_order_in_process_without_ray() -> None:
    code = textwrap.dedent("""
        import sys
        from agentlab.parallel import map_unordered
        out = list(map_unordered(lambda i: (lambda x: x + i), [3, 1, 2], lost=lambda x, w: None))
        assert out == [(3, 3), (1, 1), (2, 2)], out
        assert "ray" not in sys.modules
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.stdout.strip() == "ok", res.stderr


def test_scale_checks_its_values() -> None:
    assert not Scale().distributed and Scale(workers=2).distributed and Scale(address="auto").distributed
    with pytest.raises(ConfigError, match="at least 1"):
        Scale(workers=0)


def test_two_workers_run_every_item_once(ray_session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    items = list(range(12))
    out = list(map_unordered(Square(tmp_path), items, Scale(workers=2), lost=_lost))
    assert sorted(x for x, _ in out) == items
    assert all(r[0] == x * x for x, r in out)
    assert {r[1] for _, r in out} <= {0, 1}
    pids = {p.suffix for p in tmp_path.iterdir()}
    assert len(list(tmp_path.iterdir())) == 12 and len(pids) == 2  # two processes, neither the driver
    assert f".{os.getpid()}" not in pids


def test_a_dead_worker_loses_only_its_item_which_runs_again(ray_session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = dict(map_unordered(DiesOnce(tmp_path / "died", victim=3), list(range(8)), Scale(workers=2), lost=_lost))
    assert (tmp_path / "died").exists()  # the worker did die
    assert out == {x: x * 10 for x in range(8)}  # retried: nothing lost, nothing twice


def test_an_item_that_keeps_killing_its_worker_is_given_up(ray_session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    seen = list(map_unordered(DiesOnce(tmp_path / "d", victim=2, always=True), list(range(5)), Scale(workers=2), lost=_lost))
    assert sorted(x for x, _ in seen) == list(range(5))
    out = dict(seen)
    assert out[2] == "lost 2: worker 0 died running this item (2 time(s))" or out[2].startswith("lost 2: worker 1 died")
    assert all(out[x] == x * 10 for x in (0, 1, 3, 4))


def test_a_recipe_error_reaches_the_driver_as_itself(ray_session) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as err:
        list(map_unordered(BadRecipe(), [1, 2], Scale(workers=2), lost=_lost))
    assert err.value.where == "llm.yaml" and "no such model" in str(err.value)
