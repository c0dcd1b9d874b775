"""``--ray-address`` against a Ray cluster agentlab did not start (issue #43): a head and a worker node
started with ``ray start`` on the loopback address, each with its own ports and one CPU (so the two
workers, one CPU each, land one per node). ``agentlab exec`` and ``agentlab selfinstruct`` run on it
as commands in their own processes and give what their serial runs give: the same rows apart from
timings, the same self-instruct journal apart from seconds. The cluster is stopped in a finally,
by the processes it started (never ``ray stop``: other Rays of this user may run here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.llm.testing import LoopbackChatServer, list_continuation
from agentlab.paths import data_dir
from agentlab.tasks.spec import load_task, tasks_dir
from tests.parallel.raycluster import LocalCluster
from tests.parallel.test_exec_parallel import IDS, _solve, comparable_rows
from tests.parallel.test_selfinstruct_shards import AGENTS, _rounds, _same

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    with LocalCluster(cpus_per_node=1) as c:
        yield c
    assert not c.ours(), "a process of the cluster outlived its stop"


@pytest.fixture(scope="module")
def endpoint():  # type: ignore[no-untyped-def]
    """The model of tests/parallel/test_exec_parallel.py: each task's reference program, whoever asks."""
    answers = {t.instruction: _solve(t) for t in (load_task(tasks_dir() / f"{i}.json") for i in IDS)}

    def reply(body: dict, k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "I cannot tell which task this is.")

    with LoopbackChatServer(reply) as srv:
        yield srv.url


def _cli(cluster: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, with what connecting to the cluster takes (its token)."""
    env = cluster.env | {"OPENAI_API_KEY": "loopback"}
    return subprocess.run([sys.executable, "-m", "agentlab.cli", "-v", *args], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=600)


def test_exec_on_a_cluster_it_did_not_start_gives_the_serial_rows(cluster, tmp_path: Path, endpoint: str) -> None:  # type: ignore[no-untyped-def]
    assert cluster.alive_nodes() == 2
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {endpoint}\n  model: loopback-coder\n")
    folder = tmp_path / "tasks"
    folder.mkdir()
    for i in IDS:
        (folder / f"{i}.json").write_text((tasks_dir() / f"{i}.json").read_text())
    common = ["exec", "--tasks", str(folder), "--llm-config", str(cfg), "--max-steps", "3"]
    serial = _cli(cluster, *common, "--out", str(tmp_path / "serial"))
    assert serial.returncode == 0, serial.stderr[-3000:]
    on_cluster = _cli(cluster, *common, "--out", str(tmp_path / "cluster"), "--ray-address", cluster.address, "--workers", "2")
    assert on_cluster.returncode == 0, on_cluster.stderr[-3000:]
    assert f"connecting to the Ray cluster at {cluster.address}" in on_cluster.stderr  # not a Ray of its own
    assert "starting Ray here" not in on_cluster.stderr
    assert f"execution_acc=1.0000 n={len(IDS)} harness_errors=0" in on_cluster.stdout
    assert comparable_rows(tmp_path / "serial") == comparable_rows(tmp_path / "cluster")
    assert cluster.alive_nodes() == 2  # the run left the cluster as it found it


def test_selfinstruct_on_a_cluster_it_did_not_start_writes_the_serial_journal(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with LoopbackChatServer(list_continuation) as srv:
        def config(side: str) -> Path:
            path = tmp_path / f"{side}.yaml"
            path.write_text(
                f"out_dir: {tmp_path / side}\nagents: [{', '.join(AGENTS)}]\nper_agent: 15\nmax_rounds: 2\n"
                f"generator: {{kind: openai, base_url: '{srv.url}', model: loopback-generator}}\n"
                f"agents_per_batch: 1\nfresh: true\nthresholds: {data_dir() / 'demos' / 'thresholds.json'}\n"
                "torch_threads: 1\nleakage: false\n")
            return path

        serial = _cli(cluster, "selfinstruct", "--config", str(config("serial")))
        assert serial.returncode == 0, serial.stderr[-3000:]
        sharded = _cli(cluster, "selfinstruct", "--config", str(config("cluster")), "--workers", "2",
                       "--ray-address", cluster.address)
        assert sharded.returncode == 0, sharded.stderr[-3000:]
    assert f"connecting to the Ray cluster at {cluster.address}" in sharded.stderr
    rounds = _rounds(tmp_path / "serial")
    assert rounds and _same(rounds, _rounds(tmp_path / "cluster")) == []


def test_a_driver_without_the_token_is_told_what_the_cluster_needs(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Ray 2.60 sends a token only when ``RAY_AUTH_MODE=token``: without it the run stops in one line
    that says so, before anything runs."""
    env = {k: v for k, v in cluster.env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH")}
    res = subprocess.run([sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(tasks_dir() / f"{IDS[0]}.json"),
                          "--out", str(tmp_path / "run"), "--agent", "CoderAgent", "--ray-address", cluster.address,
                          "--workers", "2"], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=600)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert res.returncode != 0 and len(errors) == 1, res.stderr[-3000:]
    assert "Ray did not start" in errors[0] and "RAY_AUTH_MODE=token" in errors[0], errors[0]
    assert not (tmp_path / "run" / "results.jsonl").exists() or not (tmp_path / "run" / "results.jsonl").read_text()
