"""One Ray session (2 CPUs, in-process, no dashboard) shared by every Ray test of the run: Ray
starts in ~7 s on a quiet machine (20 s or more on a busy one), so the tests pay it once;
map_unordered finds it running and leaves it up. With ``RAY_ADDRESS`` set the tests use that
running cluster instead (``ray start --head``)."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def _ray():  # type: ignore[no-untyped-def]
    import ray  # a project dependency (pyproject pins it): a missing Ray is a broken install, not a skip

    kwargs = {} if os.environ.get("RAY_ADDRESS") else {"num_cpus": 2, "include_dashboard": False}  # a running cluster
    for attempt in range(3):  # the raylet waits ~30 s for Ray's own agent; a busy machine may need another go
        try:
            ray.init(logging_level="WARNING", **kwargs)
            break
        except Exception:  # Ray raises a bare Exception when its node starts too slowly
            ray.shutdown()
            if attempt == 2:
                raise
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def ray_session(_ray, request):  # type: ignore[no-untyped-def]
    from ray import cloudpickle

    # test modules are not importable in a worker (no package): ship their functions by value
    cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    return _ray
