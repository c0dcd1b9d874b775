"""Each item of issue 12 with the test that would have caught it (see docs/failures.md)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentlab.cli import exit_status
from agentlab.errors import ConfigError
from agentlab.paths import data_dir


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_status(argv)
    return (code, *capsys.readouterr())


# 1. a torn last line never poisons a resumed file ------------------------------------------
def test_append_after_a_torn_line_keeps_both_records(tmp_path: Path) -> None:
    from agentlab.fileio import append_jsonl, read_jsonl

    path = tmp_path / "journal.jsonl"
    append_jsonl(path, {"n": 1})
    with open(path, "ab") as fh:
        fh.write(b'{"n": 2, "te')  # the crash
    append_jsonl(path, {"n": 3})
    append_jsonl(path, {"n": 4})
    assert read_jsonl(path, tolerate_torn_tail=False) == [{"n": 1}, {"n": 3}, {"n": 4}]


def test_a_complete_record_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    from agentlab.fileio import append_jsonl, read_jsonl

    path = tmp_path / "p.jsonl"
    path.write_text('{"n": 1}\n{"n": 2}')
    append_jsonl(path, {"n": 3})
    assert read_jsonl(path, tolerate_torn_tail=False) == [{"n": 1}, {"n": 2}, {"n": 3}]


# 2. route never silently replaces --out; an empty task list is an error ----------------------
def test_route_keeps_an_existing_out_and_refuses_empty_tasks(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "pred.jsonl"
    tasks.write_text('{"id": "a", "instruction": "play jazz"}\n')
    out.write_text("precious\n")
    code, _, err = _run(["route", "--tasks", str(tasks), "--out", str(out)], capsys)
    assert code == 1 and "already exists; pass --overwrite" in err and out.read_text() == "precious\n"
    tasks.write_text("")
    code, _, err = _run(["route", "--tasks", str(tasks), "--out", str(out), "--overwrite"], capsys)
    assert code == 1 and "holds no tasks" in err and out.read_text() == "precious\n"
    code, _, err = _run(["route", "--tasks", str(tasks), "--out", str(tmp_path)], capsys)
    assert code == 1 and "--out is a folder" in err


def test_manager_mode_resumes_only_its_own_predictions(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "plans.jsonl"
    tasks.write_text('{"id": "a", "instruction": "play jazz"}\n')
    out.write_text('{"id": "zzz", "agent": "X", "ranking": [], "plan": []}\n')
    code, _, err = _run(["route", "--mode", "manager", "--tasks", str(tasks), "--out", str(out)], capsys)
    assert code == 1 and "not in" in err and "zzz" in err
    assert out.read_text().startswith('{"id": "zzz"')


def test_route_reports_an_over_long_task_and_routes_the_rest(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "pred.jsonl"
    long = "open the file and " * 4000  # > 8192 tokens: rejected before any forward pass
    tasks.write_text(json.dumps({"id": "a", "instruction": "play some jazz music"}) + "\n"
                     + json.dumps({"id": "b", "instruction": long}) + "\n"
                     + json.dumps({"id": "c", "instruction": "send an email to Bob"}) + "\n")
    code, out_text, err = _run(["route", "--tasks", str(tasks), "--out", str(out)], capsys)
    assert code == 1, err
    assert f"{tasks}:2:" in err and "does not fit" in err
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["id"] for p in preds] == ["a", "b", "c"]
    assert preds[0]["agent"] and preds[2]["agent"] and preds[1]["agent"] is None and "does not fit" in preds[1]["error"]
    assert "1 rejected" in out_text


# 3. an unwritable cache: one line before the work; routing runs without its feature cache ----
def test_unwritable_cache_is_one_line_before_converting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.llm.embedded import converted_smollm2_dir

    blocker = tmp_path / "not-a-folder"  # unwritable even for root, unlike a chmod
    blocker.write_text("x")
    monkeypatch.setenv("AGENTLAB_CACHE", str(blocker / "cache"))
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="model cache is not writable.*AGENTLAB_CACHE"):
        converted_smollm2_dir()
    assert time.perf_counter() - t0 < 5  # before the ~20 s conversion


def test_feature_cache_is_optional(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import torch

    from agentlab.metaagent.cache import HiddenCache
    from agentlab.metaagent.features import Features, Query

    class Extractor:
        calls = 0

        def cache_namespace(self) -> str:
            return "ns"

        def features(self, queries, batch_size=16):  # type: ignore[no-untyped-def]
            Extractor.calls += 1
            return Features(torch.ones(len(queries), 4), torch.zeros(len(queries)))

    (tmp_path / "hidden").write_text("a file where the cache folder should be")
    cache = HiddenCache(Extractor(), root=tmp_path / "hidden")  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        feats = cache.get([Query("a"), Query("b")], progress=False)
    assert feats.h.shape == (2, 4) and cache.writable is False
    assert sum("hidden-state cache not writable" in r.getMessage() for r in caplog.records) == 1


# 4. not UTF-8 ---------------------------------------------------------------------------
def test_not_utf8_files_are_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pool = tmp_path / "agents"
    shutil.copytree(data_dir() / "agents", pool)
    victim = sorted(pool.rglob("*.md"))[0]
    victim.write_bytes(victim.read_bytes().replace(b"---\n", b"---\n# caf\xe9\n", 1))
    code, _, err = _run(["pool", "validate", str(pool)], capsys)
    assert code == 2 and f"{victim}:2: not UTF-8" in err and "Traceback" not in err
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(b'{"id": "a", "instruction": "caf\xe9"}\n')
    code, _, err = _run(["route", "--tasks", str(tasks), "--out", str(tmp_path / "p.jsonl")], capsys)
    assert code == 1 and f"{tasks}:1: line is not UTF-8" in err


# 5. notebook parameters are checked whole, before any notebook runs ---------------------
def test_notebook_parameter_types_and_common_keys_are_checked_first(tmp_path: Path) -> None:
    from agentlab.notebooks import PARAMS_DIR, run_notebooks

    p = tmp_path / "p.yaml"
    p.write_text((PARAMS_DIR / "tiny.yaml").read_text() + '\n')
    text = p.read_text()
    p.write_text(text.replace("per_agent: ", "per_agent: many #", 1))
    line = 1 + p.read_text().split("per_agent: many")[0].count("\n")
    with pytest.raises(ConfigError) as info:
        run_notebooks(only="01", params=p, out=tmp_path / "run")  # the bad section is 03's or 04's
    msg = str(info.value)
    assert msg.startswith(f"{p}:{line}: notebooks.0") and ".per_agent: expected int" in msg and "'many'" in msg
    assert not (tmp_path / "run").exists()  # nothing started
    p.write_text("common:\n  seed: 0\n  sede: 1\n")
    with pytest.raises(ConfigError, match=r"p.yaml:3: common.sede: no notebook declares"):
        run_notebooks(params=p, out=tmp_path / "run")


def test_a_failing_cell_keeps_the_field_and_value_of_a_pydantic_error() -> None:
    from agentlab.notebooks import _failure

    class Exc(Exception):
        ename = "ValidationError"
        evalue = ("1 validation error for TrainConfig\nepochs\n  Input should be a valid integer "
                  "[type=int_parsing, input_value='x', input_type=str]\n"
                  "    For further information visit https://errors.pydantic.dev/2.11/v/int_parsing")

    msg = str(_failure(Exc(), Path("/nonexistent.ipynb")))
    assert "epochs" in msg and "input_value='x'" in msg and "pydantic.dev" not in msg


# 6. a folder where a file is expected ------------------------------------------------------
def test_enroll_a_folder_is_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pool = tmp_path / "agents"
    shutil.copytree(data_dir() / "agents", pool)
    code, _, err = _run(["pool", "enroll", str(tmp_path), "--dir", str(pool)], capsys)
    assert code == 2 and "is a folder; expected an agent document" in err


# 7. permissions of written files ------------------------------------------------------------
def test_atomic_writes_keep_plain_write_permissions(tmp_path: Path) -> None:
    from agentlab.fileio import atomic_write_text, write_jsonl

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.html", "x")
        write_jsonl(tmp_path / "pred.jsonl", [{"a": 1}])
        assert stat.S_IMODE((tmp_path / "report.html").stat().st_mode) == 0o644
        assert stat.S_IMODE((tmp_path / "pred.jsonl").stat().st_mode) == 0o644
        tracked = tmp_path / "RESULTS.md"
        tracked.write_text("old")
        tracked.chmod(0o664)
        atomic_write_text(tracked, "new")
        assert stat.S_IMODE(tracked.stat().st_mode) == 0o664
    finally:
        os.umask(old)


# 8. a timeout ends the whole tree and reports the limit --------------------------------------
def test_timeout_kills_a_program_that_started_its_own_session(tmp_path: Path) -> None:
    from agentlab.envs.workspace import Workspace, WorkspaceConfig

    marker = tmp_path / "survivor"
    code = (f"import os, subprocess, time\n"
            f"subprocess.Popen(['sleep 3; touch {marker}'], shell=True, start_new_session=True)\n"
            "time.sleep(30)\n")
    with Workspace(config=WorkspaceConfig(sandbox="none")) as ws:
        t0 = time.monotonic()
        res = ws.run_python(code, timeout_s=1)
        took = time.monotonic() - t0
    assert res.timed_out and res.limit_s == 1 and res.duration_s <= 1.0 + 1e-9
    assert "limit 1s" in res.summary() and took < 3
    time.sleep(3.5)
    assert not marker.exists(), "the program in its own session survived the timeout"


# 9. no adb daemon is started -------------------------------------------------------------
def test_android_env_never_starts_an_adb_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.envs.android import AndroidEnv
    from agentlab.errors import EnvironmentUnavailableError

    called = tmp_path / "adb-was-run"
    fake_adb = tmp_path / "adb"
    fake_adb.write_text(f"#!/bin/sh\ntouch {called}\n")
    fake_adb.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    env = AndroidEnv(adb_port=port)
    with pytest.raises(EnvironmentUnavailableError, match=f"no adb server answers at 127.0.0.1:{port}"):
        env.reset()
    assert not called.exists(), "adbutils ran `adb start-server`"


def test_replay_with_a_fake_adb_server_leaves_no_daemon(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice
    from agentlab.envs.trajectory import TrajectoryRecorder

    called = tmp_path / "adb-was-run"
    fake_adb = tmp_path / "adb"
    fake_adb.write_text(f"#!/bin/sh\ntouch {called}\n")
    fake_adb.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))
    from agentlab.envs.actions.phone import Back

    rec = TrajectoryRecorder(tmp_path / "run" / "ep", task="t")
    rec.record(None, Back())
    with FakeAdbServer(FakeDevice()) as server:
        code, out, err = _run(["agent", "replay", str(rec.path), "--adb-port", str(server.port)], capsys)
    assert code == 0, err
    assert not called.exists()


# 10. smaller ones -------------------------------------------------------------------------
def test_tasks_check_reports_bad_files_and_goes_on(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = _run(["tasks", "check", "--dir", str(tmp_path)], capsys)
    assert code == 1 and "no task files" in err
    good = sorted((data_dir() / "tasks").glob("*.json"))[0]
    shutil.copy(good, tmp_path / good.name)
    (tmp_path / "aaa_bad.json").write_text('{"id": "aaa_bad",')
    code, out, _ = _run(["tasks", "check", "--dir", str(tmp_path), "--sandbox", "none"], capsys)
    assert code == 1
    assert "FAIL" in out and "aaa_bad.json" in out and f"ok   {good.stem}" in out


def test_pool_front_matter_yaml_error_points_at_its_line(tmp_path: Path) -> None:
    from agentlab.pool.document import parse_document

    text = "---\nname: X\nplatform: [desktop\ninterface: gui\n---\n"
    _, problems = parse_document(text, tmp_path / "X.md")
    assert problems[0].startswith(f"{tmp_path / 'X.md'}:3: front matter is not valid YAML")


def test_a_missing_trajectory_step_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from agentlab.envs.actions.phone import Back
    from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

    rec = TrajectoryRecorder(tmp_path / "run" / "ep", task="t")
    for _ in range(3):
        rec.record(None, Back())
    lines = rec.traj_file.read_text().splitlines()
    rec.traj_file.write_text(lines[0] + "\n" + lines[2] + "\n")
    with caplog.at_level(logging.WARNING):
        traj = load_trajectory(rec.path)
    assert len(traj.steps) == 2 and any("step 1 is missing" in r.getMessage() for r in caplog.records)


def test_models_check_takes_an_llm_config_flag(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "llm.yaml"
    cfg.write_text("kind: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: m\ntimeout_s: 2\n")
    code, _, err = _run(["models", "check", "--llm-config", str(cfg)], capsys)
    assert code != 0 and "127.0.0.1:9" in err and "Traceback" not in err


def test_subprocess_cli_gives_one_line_for_a_folder_out(tmp_path: Path) -> None:
    """The real console entry point, once: a folder as --out."""
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('{"id": "a", "instruction": "x"}\n')
    proc = subprocess.run([sys.executable, "-m", "agentlab.cli", "route", "--tasks", str(tasks), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "--out is a folder" in proc.stderr
