"""Runs that cannot lose results (issue #23): task ids that cannot name a folder are refused where
tasks load, no clean-up reaches outside its own episode folder, a bad task is one row or one
reported file, and the run goes on."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlab.run.episode import EPISODES_DIR, ExecOptions, run_task
from agentlab.errors import DataError
from agentlab.tasks.spec import TASK_ID, ExecTask, load_task, load_tasks, tasks_dir
from agentlab.fileio import remove_inside

from .conftest import suite


def _tree(root: Path, skip: Path | None = None) -> dict[str, str]:
    """relative path -> content hash ('dir' for folders) of everything under ``root`` but ``skip``."""
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        if skip is not None and (p == skip or skip in p.parents):
            continue
        out[p.relative_to(root).as_posix()] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _task_json(task_id: str, **over: object) -> dict:
    base = json.loads((tasks_dir() / "csv-sales-summary.json").read_text())
    base.update(id=task_id, **over)
    base.pop("reference_solution", None)
    return base


@pytest.mark.parametrize("name, task_id", [("....json", "..."), ("...json", ".."), ("..json", "."),
                                           ("-x.json", "-x"), ("a b.json", "a b")])
def test_ids_that_cannot_name_a_folder_are_refused_when_the_task_loads(tmp_path: Path, name: str, task_id: str) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(_task_json(task_id)))
    with pytest.raises(DataError) as err:
        load_task(path)
    assert name in str(err.value) and "safe folder name" in str(err.value) and "\n" not in str(err.value)


def test_a_separator_in_an_id_is_refused_even_without_a_file() -> None:
    with pytest.raises(ValueError, match="safe folder name"):
        ExecTask.model_validate(_task_json("../../etc"))


def test_ids_colliding_without_case_are_refused(tmp_path: Path) -> None:
    for tid in ("Report", "report"):
        (tmp_path / f"{tid}.json").write_text(json.dumps(_task_json(tid)))
    with pytest.raises(DataError, match="collides"):
        load_tasks(tmp_path)


def test_a_folder_named_like_a_task_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text(json.dumps(_task_json("ok")))
    (tmp_path / "x.json").mkdir()
    with pytest.raises(DataError, match="is a folder, not a task file") as err:
        load_tasks(tmp_path)
    assert "x.json" in str(err.value)


@pytest.mark.parametrize("path, says", [(".", "names the folder itself"), ("/etc/passwd", "absolute"),
                                        ("../out.csv", "leaves the task's folder"), ("", "names the folder itself")])
def test_setup_paths_must_stay_inside(tmp_path: Path, path: str, says: str) -> None:
    raw = _task_json("bad-setup")
    raw["setup"] = [{"type": "write_text", "path": path, "content": "x"}]
    (tmp_path / "bad-setup.json").write_text(json.dumps(raw))
    with pytest.raises(DataError, match=says):
        load_task(tmp_path / "bad-setup.json")


def test_an_empty_instruction_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text(json.dumps(_task_json("t", instruction="   ")))
    with pytest.raises(DataError, match="instruction is empty"):
        load_task(tmp_path / "t.json")


def test_remove_inside_never_reaches_out(tmp_path: Path) -> None:
    box = tmp_path / "episodes"
    (box / "a").mkdir(parents=True)
    (tmp_path / "keep.txt").write_text("results")
    for bad in (box, box / "..", box / ".", tmp_path, Path("/")):
        with pytest.raises(DataError):
            remove_inside(bad, box)
    link = box / "link"
    link.symlink_to(tmp_path)
    assert remove_inside(link, box) and not link.exists() and (tmp_path / "keep.txt").is_file()
    assert remove_inside(box / "a", box) and not (box / "a").exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task_id=st.one_of(st.text(max_size=8), st.from_regex(TASK_ID, fullmatch=True).filter(lambda s: len(s) < 30),
                         st.sampled_from([".", "..", "...", "a/..", "../a", "episodes", "results.jsonl"])))
def test_no_id_writes_or_deletes_outside_its_episode_folder(tmp_path_factory, pool, scripted, task_id: str) -> None:
    """Whatever the id, running its task changes nothing in the run folder but ``episodes/<id>``."""
    try:
        task = ExecTask.model_validate(_task_json(task_id))
    except ValueError:
        return  # refused where tasks are built: nothing ran
    out = tmp_path_factory.mktemp("run")
    (out / "results.jsonl").write_text('{"id": "earlier", "seed": 0}\n')
    (out / "manifest.json").write_text("{}")
    (out / EPISODES_DIR / "earlier").mkdir(parents=True)
    (out / EPISODES_DIR / "earlier" / "traj.jsonl").write_text("{}\n")
    mine = out / EPISODES_DIR / task_id
    before = _tree(out, skip=mine)
    row = run_task(task, pool=pool, llm=scripted(["Nothing to do.\nFAIL"]), out_dir=out,
                   options=ExecOptions(max_steps=1), agent="CoderAgent")
    assert _tree(out, skip=mine) == before
    assert row["error"] is None and mine.is_dir()
    shutil.rmtree(out)


def test_a_task_whose_start_state_cannot_be_written_is_one_row_and_the_run_goes_on(tmp_path: Path, pool, scripted) -> None:
    bad = ExecTask.model_validate(_task_json("bad-start", setup=[
        {"type": "write_text", "path": "notes.txt", "content": "x"},
        {"type": "write_text", "path": "notes.txt/inner.txt", "content": "a file where a folder must be"}]))
    good = load_task(tasks_dir() / "csv-sales-summary.json")
    summary = suite([bad, good], pool=pool, llm=scripted(["FAIL"]), out_dir=tmp_path / "run",
                    options=ExecOptions(max_steps=1), agent="CoderAgent")
    rows = {r["id"]: r for r in summary.rows}
    assert set(rows) == {"bad-start", "csv-sales-summary"} and summary.harness_errors == 1
    assert "setup[1]" in rows["bad-start"]["error"] and "cannot write the start state" in rows["bad-start"]["error"]
    assert rows["csv-sales-summary"]["error"] is None


# -- exec's own guards ----------------------------------------------------------------------------
def _exec(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from agentlab.cli import main

    try:
        main(["exec", *argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, (err or out)


def test_exec_refuses_an_out_folder_that_is_the_task_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.json").write_text(json.dumps(_task_json("t")))
    code, err = _exec(["--tasks", str(tmp_path), "--out", str(tmp_path)], capsys)
    assert code == 1 and "--out is the task folder" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_an_endpoint_requires_the_sandbox_and_refuses_without_it(tmp_path: Path, monkeypatch, capsys) -> None:
    import agentlab.envs.workspace as workspace

    (tmp_path / "t.json").write_text(json.dumps(_task_json("t")))
    cfg = tmp_path / "llm.yaml"
    cfg.write_text("llm:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n")
    monkeypatch.setattr(workspace, "bwrap_available", lambda: False)
    code, err = _exec(["--tasks", str(tmp_path / "t.json"), "--out", str(tmp_path / "run"), "--llm-config", str(cfg)], capsys)
    assert code == 1 and "the sandbox is required (a model endpoint is configured)" in err and "--sandbox none" in err
    assert not (tmp_path / "run").exists()


def test_rows_and_manifest_say_which_isolation_was_in_force(tmp_path: Path, chat_server, capsys) -> None:
    from agentlab.envs.workspace import bwrap_available
    from agentlab.fileio import read_jsonl

    if not bwrap_available():
        pytest.skip("bubblewrap cannot run here: an endpoint run is refused (tested above)")
    src = load_task(tasks_dir() / "csv-sales-summary.json")
    reply = "```python\n" + (src.reference_solution.code if src.reference_solution else "") + "\n```\nDONE"
    url = chat_server(lambda body, k: reply)
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: m\n")
    out = tmp_path / "run"
    code, err = _exec(["--tasks", str(tasks_dir() / "csv-sales-summary.json"), "--out", str(out), "--llm-config", str(cfg)], capsys)
    assert code == 0, err
    (row,) = read_jsonl(out / "results.jsonl")
    options = json.loads((out / "manifest.json").read_text())["options"]
    assert row["isolation"] == "bwrap" and (options["sandbox"], options["isolation"]) == ("bwrap", "bwrap")
    assert row["success"]


def test_an_overlong_prompt_is_a_context_overflow_row_not_minutes_of_generation(tmp_path: Path, pool, backend) -> None:
    """The embedded model counts tokens: a task far over its context stops before the first call."""
    import time

    task = ExecTask.model_validate(_task_json("huge", instruction="Sum the amounts. " + "word " * 12000))
    t0 = time.monotonic()
    row = run_task(task, pool=pool, llm=backend, out_dir=tmp_path, options=ExecOptions(max_steps=1), agent="CoderAgent")
    assert row["status"] == "context_overflow" and row["error"] is None and not row["success"]
    assert "does not fit the 8192-token context" in row["agent_error"] and row["llm_calls"] == 0
    assert time.monotonic() - t0 < 60
