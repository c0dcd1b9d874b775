"""``agentlab exec`` on Ray workers: the same rows as a serial run (timings aside), a worker killed
mid-run loses no finished row, a named display or phone is never shared by two workers.

The model is a loopback OpenAI-compatible endpoint (real HTTP, the real ``openai`` client) whose
reply depends only on the request (the task's reference program), so every worker, whatever order
it runs the tasks in, gets the same answers: a deterministic configuration.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentlab.run.episode import TIMING_FIELDS, ExecOptions, comparable_row
from agentlab.run.worker import EpisodeRecipe, RunSpec, execute, per_worker
from agentlab.errors import ConfigError
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.fileio import read_jsonl
from agentlab.llm import LLMConfig
from agentlab.llm.roles import ModelsFile
from agentlab.parallel import Scale

IDS = ["csv-sales-summary", "os-error-lines", "general-top-words", "general-iso-dates"]


def _solve(task: ExecTask) -> str:
    sol = task.reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


@pytest.fixture(scope="module")
def tasks() -> list[ExecTask]:
    return [load_task(tasks_dir() / f"{i}.json") for i in IDS]


@pytest.fixture(scope="module")
def endpoint(tasks):  # type: ignore[no-untyped-def]
    """An endpoint that answers each task's first request with its reference program."""
    from agentlab.llm.testing import LoopbackChatServer

    answers = {t.instruction: _solve(t) for t in tasks}

    def reply(body: dict, k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "I cannot tell which task this is.")

    with LoopbackChatServer(reply) as srv:
        yield LLMConfig(kind="openai", base_url=srv.url, model="loopback-coder")


def comparable_rows(folder: Path) -> list[dict]:
    """A run folder's rows without their timings, sorted by id: equal for a serial and a parallel run
    of one deterministic configuration (the other Ray tests compare with it too)."""
    return sorted((comparable_row(r) for r in read_jsonl(folder / "results.jsonl", tolerate_torn_tail=False)),
                  key=lambda r: r["id"])


class DiesOnTask(EpisodeRecipe):
    """The recipe, with a worker that dies (``os._exit``) when it starts ``victim`` -- the first time
    only, unless ``always``: a crashed extension, an OOM kill."""

    victim: str = ""
    marker: Path = Path("/nonexistent")
    always: bool = False

    def __init__(self, victim: str, marker: Path, always: bool = False, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        object.__setattr__(self, "victim", victim)
        object.__setattr__(self, "marker", marker)
        object.__setattr__(self, "always", always)

    def __call__(self, index: int):  # type: ignore[no-untyped-def]
        fn = super().__call__(index)

        def run(item: tuple[ExecTask, int]) -> dict:  # a (task, seed index) item of the suite
            if item[0].id == self.victim and (self.always or not self.marker.exists()):
                self.marker.touch()
                os._exit(3)
            return fn(item)
        return run


def test_serial_and_parallel_rows_agree_apart_from_timings(ray_session, tmp_path, tasks, endpoint, pool) -> None:  # type: ignore[no-untyped-def]
    options, models = ExecOptions(max_steps=3), ModelsFile(endpoint)
    serial = execute(RunSpec(EpisodeRecipe(tmp_path / "serial", options, models)), tasks, progress=False)
    out = tmp_path / "parallel"
    # the serial and the parallel run differ only in their scale: one recipe
    parallel = execute(RunSpec(EpisodeRecipe(out, options, models), scale=Scale(workers=2)), tasks, progress=False)
    assert serial.ran == parallel.ran == len(IDS) and serial.execution_acc == 1.0
    assert comparable_rows(tmp_path / "serial") == comparable_rows(out)
    assert all(TIMING_FIELDS & set(r) for r in read_jsonl(out / "results.jsonl"))  # timings exist, only they were dropped
    assert all((out / "episodes" / i / "traj.jsonl").is_file() for i in IDS)


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_no_finished_row(ray_session, tmp_path, tasks, endpoint, pool) -> None:  # type: ignore[no-untyped-def]
    options = ExecOptions(max_steps=3)
    out = tmp_path / "run"
    recipe = DiesOnTask("general-top-words", tmp_path / "died", out_dir=out, options=options, models=ModelsFile(endpoint))
    summary = execute(RunSpec(recipe, scale=Scale(workers=2)), tasks, progress=False)
    assert (tmp_path / "died").exists()
    rows = read_jsonl(out / "results.jsonl", tolerate_torn_tail=False)
    assert sorted(r["id"] for r in rows) == sorted(IDS)  # every task once: none lost, none twice
    assert all(r["success"] and r["error"] is None for r in rows) and summary.harness_errors == 0  # the victim ran again

    # a task that kills every worker it meets becomes a harness-error row; the run still completes
    out2 = tmp_path / "run2"
    always = DiesOnTask("os-error-lines", tmp_path / "died2", always=True, out_dir=out2, options=options,
                        models=ModelsFile(endpoint))
    summary = execute(RunSpec(always, scale=Scale(workers=2)), tasks, progress=False)
    rows = {r["id"]: r for r in read_jsonl(out2 / "results.jsonl", tolerate_torn_tail=False)}
    assert sorted(rows) == sorted(IDS) and summary.harness_errors == 1
    assert rows["os-error-lines"]["error"].startswith("harness: worker") and "died running this item (2 time(s))" in rows["os-error-lines"]["error"]
    assert all(rows[i]["success"] for i in IDS if i != "os-error-lines")


def test_exec_cli_with_two_workers(ray_session, tmp_path, endpoint) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {endpoint.base_url}\n  model: loopback-coder\n")
    folder = tmp_path / "tasks"
    folder.mkdir()
    for i in IDS[:2]:
        (folder / f"{i}.json").write_text((tasks_dir() / f"{i}.json").read_text())
    _mount()
    res = CliRunner().invoke(app, ["exec", "--tasks", str(folder), "--out", str(tmp_path / "run"), "--llm-config", str(cfg),
                                   "--workers", "2", "--max-steps", "3"])
    assert res.exit_code == 0, res.output
    # (a worker's forwarded log line, e.g. the loopback API-key warning, may come after it)
    assert "execution_acc=1.0000 n=2 harness_errors=0" in res.output.strip().splitlines()


def test_comparable_rows_leave_out_the_timings_of_a_plans_steps_too() -> None:
    """A plan task's row times each step (``step_outcomes[].seconds``): two runs of one deterministic
    configuration differed there only, and were reported as different rows."""
    def row(seconds: float, status: str = "done") -> dict:
        return {"id": "t", "seconds": seconds, "setup_s": seconds, "success": True,
                "step_outcomes": [{"index": 0, "status": status, "seconds": seconds}]}

    assert comparable_row(row(0.4)) == comparable_row(row(0.2))
    assert comparable_row(row(0.4)) != comparable_row(row(0.4, "failed"))  # what is not a timing still counts
    assert comparable_row(row(0.4))["step_outcomes"] == [{"index": 0, "status": "done"}]


def test_a_named_display_or_phone_is_not_shared_by_workers(tmp_path) -> None:
    assert per_worker(None, 4, "--display") == () and per_worker("fake", 2, "--device", shareable=frozenset({"fake"})) == ()
    assert per_worker(":1,:2", 2, "--display") == (":1", ":2") and per_worker(":0", 1, "--display") == (":0",)
    with pytest.raises(ConfigError, match="shared by 2 workers; give one per worker"):
        per_worker(":1", 2, "--display")
    with pytest.raises(ConfigError, match="the same entry twice"):
        per_worker("emu-1,emu-1", 2, "--device")
    recipe = EpisodeRecipe(out_dir=tmp_path, options=ExecOptions(), displays=(":1", ":2"), devices=("a", "b"))
    assert (recipe.options_for(1).envs.display, recipe.options_for(1).envs.device) == (":2", "b")
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    res = CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / "csv-sales-summary.json"), "--out",
                                   str(tmp_path / "run"), "--workers", "2", "--display", ":1"])
    assert res.exit_code != 0 and isinstance(res.exception, ConfigError)
    assert "--display ':1' is shared by 2 workers" in str(res.exception) and not (tmp_path / "run").exists()


def test_router_llm_config_is_read_apart_from_the_agents(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """--router-llm-config is its own file: a broken one is one line before anything runs, and the
    router is built with it (the ICL router's model is the router config's, not --llm-config's)."""
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app
    from agentlab.run.episode import router_route
    from agentlab.metaagent.baselines.icl import ICLRouter

    bad = tmp_path / "router.yaml"
    bad.write_text("llm:\n  kind: nonsense\n")
    _mount()
    res = CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / "csv-sales-summary.json"), "--out",
                                   str(tmp_path / "run"), "--router", "icl", "--router-llm-config", str(bad)])
    assert res.exit_code != 0 and isinstance(res.exception, ConfigError) and str(bad) in str(res.exception)
    assert not (tmp_path / "run" / "results.jsonl").exists()
    seen = {}
    monkeypatch.setattr(ICLRouter, "fit", lambda self, data: seen.setdefault("llm", self.llm))
    from agentlab.pool import AgentPool

    router_route("icl", AgentPool.from_dir(None), None, LLMConfig(kind="openai", base_url="http://127.0.0.1:9/v1", model="router-model"))
    assert seen["llm"].model == "router-model"


@pytest.mark.slow
def test_sigterm_stops_ray_cleanly_with_one_line(tmp_path, chat_server) -> None:  # type: ignore[no-untyped-def]
    """SIGTERM during ``exec --workers 2``: Ray is shut down, no native stack dump, exit 143 and one
    line (issue #23). The endpoint answers slowly so the episodes are still running."""
    import signal
    import subprocess
    import sys
    import time

    url = chat_server(lambda body, k: "FAIL", delay_s=60)
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: slow\n  timeout_s: 120\n")
    folder = tmp_path / "tasks"
    folder.mkdir()
    for i in IDS[:2]:
        (folder / f"{i}.json").write_text((tasks_dir() / f"{i}.json").read_text())
    env = dict(os.environ, RAY_ADDRESS="")  # a Ray of its own, not the test session's
    env.pop("RAY_ADDRESS")
    proc = subprocess.Popen([sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(folder), "--out",
                             str(tmp_path / "run"), "--llm-config", str(cfg), "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while len(chat_server.requests) < 2 and time.monotonic() < deadline:  # both workers are waiting on the model
            time.sleep(0.2)
        assert len(chat_server.requests) >= 2, "the workers never asked the model"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("WARNING", "(", "20"))]
    assert proc.returncode == 143, err[-2000:]
    assert "SIGTERM received" not in err and "PC: @" not in err, err[-2000:]
    assert lines and lines[-1].startswith("error: terminated (SIGTERM)"), err[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_stop_with_two_workers_leaves_no_program_and_ray_keeps_its_folder_private(tmp_path, chat_server, sig) -> None:  # type: ignore[no-untyped-def]
    """Issue #37 (cases 4 and 7): ``exec --workers 2 --sandbox none`` whose programs keep their
    supervisors stopped (which then cannot take the signal the kernel sends them when Ray kills
    their worker) and leave children in sessions of their own: SIGTERM, or Ctrl-C to the whole
    group, stops the run with one line and exit 143 / 130, and not one process of the run is left.
    Meanwhile the folder holding Ray's sessions is 0700 (Ray makes the folder it is given 0777)."""
    import shutil
    import signal
    import stat
    import tempfile
    import uuid

    from tests.episode.test_stop_signals import Endpoint, _survivors, _tagged, send, start_exec, wait_for_programs

    tag = f"38{uuid.uuid4().int % 10**6}.5"
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in IDS[:3]]
    folder = tmp_path / "tasks"
    folder.mkdir()
    for t in tasks:
        (folder / f"{t.id}.json").write_text((tasks_dir() / f"{t.id}.json").read_text())
    stopper = f"(env -i setsid sleep {tag} </dev/null >/dev/null 2>&1 &)\nwhile true; do kill -STOP $PPID; sleep 0.05; done"
    endpoint = Endpoint(chat_server, tasks, tag, sleeper=f"Running it.\n```bash\n{stopper}\n```\n")
    tmp = tempfile.mkdtemp(prefix="h37-", dir="/tmp")  # short: Ray's socket paths must fit 107 characters
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"TMPDIR": tmp}  # a Ray of its own
    out = tmp_path / "run"
    proc = start_exec(tmp_path, endpoint.url, folder, out, "--agent", "CoderAgent", "--workers", "2", env=env)
    try:
        procs = wait_for_programs(proc, tag, n=2, timeout_s=240)
        ray_home = Path(tmp) / f"agentlab-ray-{os.getuid()}"
        assert stat.S_IMODE(ray_home.stat().st_mode) == 0o700 and any((ray_home / "r").glob("session_*"))
        _, err = send(proc, getattr(signal, sig))
        assert proc.returncode == (143 if sig == "SIGTERM" else 130), err[-3000:]
        mine = [ln for ln in err.splitlines() if ln.startswith("error:")]
        assert len(mine) == 1 and err.strip().splitlines()[-1] == mine[0], err[-3000:]
        assert mine[0].startswith("error: terminated (SIGTERM): stopped after cleaning up" if sig == "SIGTERM"
                                  else "error: interrupted (Ctrl-C): stopped after cleaning up"), err[-3000:]
        assert not _survivors(procs, tag, timeout_s=10), "a program (or one of its processes) outlived the run"
        assert not (out / "results.jsonl").exists() or read_jsonl(out / "results.jsonl") == []
        assert stat.S_IMODE(ray_home.stat().st_mode) == 0o700
    finally:
        proc.kill()
        for pid in _tagged(tag):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)


def test_the_ray_folder_is_private_and_ours(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Ray's folder sits in a 0700 folder of ours (a 0777 one left by an older run is closed
    again); a planted one (a link, another user's folder) is not used. Ray's own start is covered
    by the slow test above."""
    import stat
    import tempfile

    from agentlab.parallel import _keep_private, private_ray_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    home = tmp_path / f"agentlab-ray-{os.getuid()}"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    ray_dir = private_ray_dir()
    assert ray_dir == home / "r" and stat.S_IMODE(home.stat().st_mode) == 0o700
    ray_dir.mkdir(mode=0o777)
    ray_dir.chmod(0o777)  # what ray.init does to the folder it is given
    _keep_private(ray_dir)
    assert stat.S_IMODE(ray_dir.stat().st_mode) == stat.S_IMODE(home.stat().st_mode) == 0o700

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    elsewhere.chmod(0o777)
    home.rename(tmp_path / "old")
    home.symlink_to(elsewhere)  # planted
    fresh = private_ray_dir()
    assert fresh.parent != home and fresh.parent.parent == tmp_path and stat.S_IMODE(fresh.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o777  # the link's target was left alone
    if os.getuid() == 0:  # another user's folder
        home.unlink()
        home.mkdir()
        os.chown(home, 65534, 65534)
        assert private_ray_dir().parent != home
