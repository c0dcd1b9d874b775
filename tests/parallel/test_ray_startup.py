"""What a Ray started by agentlab does to start faster (issue #43): its processes skip the module that
only cost time (``rfc3987_syntax``: 2.2 s of CPU in each), and each worker process runs its recipe's
preload as it starts, so an exec worker's first episode no longer loads MiniLM; the programs an
episode runs see neither the stubs nor the preload variable."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentlab.parallel import PRELOAD_ENV, STUBS_DIR, _without_stubs, skip_in_ray_processes


def _python(code: str, env: dict[str, str]) -> str:
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.strip()


def test_the_stubs_keep_rfc3987_syntax_out_and_jsonschema_working(tmp_path: Path) -> None:
    stubs = skip_in_ray_processes(tmp_path)
    assert stubs == tmp_path / STUBS_DIR
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stubs), os.environ.get("PYTHONPATH", "")]),
           PRELOAD_ENV: "agentlab.no_such_module:nothing"}
    code = textwrap.dedent("""
        import sys, jsonschema, sitecustomize
        jsonschema.validate({"a": 1}, {"type": "object", "properties": {"a": {"type": "integer"}}})
        print("rfc3987_syntax" in sys.modules, sitecustomize.PRELOAD)
    """)
    # not a Ray worker (its argv is not default_worker.py): no preload, whatever the variable says
    assert _python(code, env) == "False None"
    if importlib.util.find_spec("rfc3987_syntax") is not None:  # installed here: without the stubs it is imported
        assert _python("import sys, jsonschema; print('rfc3987_syntax' in sys.modules)", dict(os.environ)) == "True"
    assert skip_in_ray_processes(tmp_path) == stubs  # a second start reuses them


def test_the_stub_folder_is_taken_off_the_path_the_programs_see() -> None:
    here = os.pathsep.join(["/a", f"/tmp/agentlab-ray-0/{STUBS_DIR}", "/b"])
    assert _without_stubs(here) == os.pathsep.join(["/a", "/b"])
    assert _without_stubs(f"/x/{STUBS_DIR}") is None and _without_stubs(None) is None


@pytest.mark.slow
def test_a_ray_started_here_preloads_each_worker_and_leaves_the_programs_alone(tmp_path: Path) -> None:
    """A Ray of its own (not the session's): two workers built from a recipe whose preload is exec's;
    each reports whether MiniLM was loaded before the recipe built the worker, whether it imported
    rfc3987_syntax, and the environment a program it starts would get."""
    code = textwrap.dedent("""
        import json, os, sys
        from agentlab.parallel import Scale, map_unordered

        class Recipe:
            preload = "agentlab.run.worker:preload"

            def __call__(self, index):
                from agentlab.agents.tools import _encoder
                warm = _encoder.cache_info().currsize == 1  # loaded before the worker was built
                def fn(item):
                    return {"warm": warm, "rfc": "rfc3987_syntax" in sys.modules and sys.modules["rfc3987_syntax"] is not None,
                            "pythonpath": os.environ.get("PYTHONPATH", ""), "preload_env": os.environ.get("AGENTLAB_RAY_PRELOAD"),
                            "pid": os.getpid()}
                return fn

        import time
        from ray._private import worker as ray_worker
        out, procs = [], {}
        for _, r in map_unordered(Recipe(), [1, 2, 3, 4], Scale(workers=2), lost=lambda i, why: why):
            out.append(r)
            procs = procs or {k: [i.process for i in v] for k, v in ray_worker._global_node.all_processes.items()}
            t_last = time.monotonic()
        stop_s = time.monotonic() - t_last  # the generator's end: Ray's shutdown
        codes = {k: [p.poll() for p in v] for k, v in procs.items()}
        print(json.dumps({"rows": out, "codes": codes, "stop_s": stop_s}))
    """)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    rows = got["rows"]
    # the autoscaler monitor is killed, not given the 1 s it takes to answer SIGTERM; every Ray process is gone
    assert got["codes"]["monitor"] == [-9], got["codes"]
    assert all(c is not None for codes in got["codes"].values() for c in codes), got["codes"]
    assert "monitor" not in res.stderr.lower(), res.stderr[-2000:]
    assert len(rows) == 4 and len({r["pid"] for r in rows}) == 2
    assert all(r["warm"] for r in rows), rows  # MiniLM came with the preload, not with the first item
    assert not any(r["rfc"] for r in rows)
    assert all(STUBS_DIR not in r["pythonpath"] and r["preload_env"] is None for r in rows)
