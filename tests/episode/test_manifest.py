"""Run manifests in ``agentlab exec`` folders: recorded, checked on --resume; --seeds K runs and statistics."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentlab.envs.workspace import bwrap_available

from agentlab.run.episode import ExecOptions
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.fileio import read_jsonl
from agentlab.record.manifest import ManifestMismatchError, read_manifest

from .conftest import suite
from .test_episode import _cli, solve


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    """A data folder whose prompt templates a test may edit (the rest linked to the project's)."""
    from agentlab.paths import data_dir

    root = tmp_path / "data"
    root.mkdir()
    for item in data_dir().iterdir():
        if item.name == "prompts":
            shutil.copytree(item, root / "prompts")
        else:
            (root / item.name).symlink_to(item.resolve())
    monkeypatch.setenv("AGENTLAB_DATA", str(root))
    return root


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file with its bytes and time, but the folder's lock (every run that opens the folder
    takes it, refused or not: it holds the owner's pid, no result)."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


def test_the_manifest_records_code_models_prompts_seeds_options_tasks_and_machine(tmp_path, data, pool, scripted, task) -> None:
    llm = scripted([solve(task.id)])
    options = ExecOptions(max_steps=3, seed=4)
    summary = suite([task], pool=pool, llm=llm, out_dir=tmp_path / "run", options=options)
    assert summary.execution_acc == 1.0
    m = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert m["command"] == "exec" and m["seeds"] == [4]
    assert len(m["git"]["commit"]) == 40 and isinstance(m["git"]["dirty"], bool)
    assert {"agentlab", "torch", "transformers", "pydantic"} <= set(m["packages"])
    assert {"hostname", "platform", "cpu_count", "python"} <= set(m["machine"])
    assert m["models"]["agents"] == {"model_id": "scripted-test-double", "backend": "ScriptedBackend"}
    assert m["models"]["router"] == {"kind": "gt"}
    assert m["models"]["sentence_encoder"]["model_id"].endswith("all-MiniLM-L6-v2")
    assert len(m["models"]["sentence_encoder"]["fingerprint"]) == 16
    code_task = (data / "prompts" / "code" / "task.txt").read_bytes()
    import hashlib

    assert m["prompts"]["code/task"] == hashlib.sha256(code_task).hexdigest() and len(m["prompts"]) >= 30
    assert m["tasks"] == {task.id: hashlib.sha256(Path(task.source or "").read_bytes()).hexdigest()}
    assert len(m["documents"]) == len(pool.agents) and len(m["documents"]["SheetAgent"]) == 64
    assert m["options"] == {"router": "gt", "agent": None, "max_steps": 3, "time_limit_s": 600.0, "max_new_tokens": None,
                            "runner_options": {}, "device": "fake", "mode": "single", "team": None,
                            "sandbox": "auto", "isolation": "bwrap" if bwrap_available() else "none"}
    assert m["resumes"] == []


def test_a_resume_with_a_changed_prompt_template_is_refused_and_touches_nothing(tmp_path, data, pool, scripted) -> None:
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in ("csv-sales-summary", "os-error-lines")]
    out = tmp_path / "run"

    def run(replies, **kw):  # type: ignore[no-untyped-def]
        llm = scripted(replies)
        return suite(tasks, pool=pool, llm=llm, out_dir=out, options=ExecOptions(), **kw)

    run([solve(tasks[0].id)], limit=1)
    template = data / "prompts" / "code" / "system.txt"
    original = template.read_text()
    template.write_text(original + "\nAlways answer in French.\n")
    before = snapshot(out)
    with pytest.raises(ManifestMismatchError) as err:
        run([], resume=True)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{out / 'manifest.json'}: manifest differs: prompt template code/system changed (")
    assert line.endswith("); pass --force-resume to continue anyway or choose another --out")
    assert snapshot(out) == before  # refused before anything was touched
    template.write_text(original)  # the same configuration again: the run continues
    resumed = run([solve(tasks[1].id)], resume=True)
    assert (resumed.ran, resumed.skipped, resumed.execution_acc) == (1, 1, 1.0)
    recorded = read_manifest(out / "manifest.json")
    assert len(recorded.resumes) == 1 and recorded.resumes[0]["forced"] == []


def test_force_resume_continues_and_records_what_differed(tmp_path, pool, scripted, task, caplog) -> None:
    out = tmp_path / "run"
    llm = scripted([])
    first = ExecOptions(max_steps=2)
    suite([task], pool=pool, llm=llm, out_dir=out, options=first, limit=0)
    later = ExecOptions(max_steps=5)
    with pytest.raises(ManifestMismatchError, match=r"manifest differs: option max_steps changed \(2 -> 5\);"):
        suite([task], pool=pool, llm=llm, out_dir=out, options=later, resume=True)
    forced = scripted([solve(task.id)])
    suite([task], pool=pool, llm=forced, out_dir=out, options=later, resume=True, force_resume=True)
    recorded = read_manifest(out / "manifest.json")
    assert recorded.options["max_steps"] == 2  # the manifest keeps what the run began with ...
    assert recorded.resumes[-1]["forced"] == ["option max_steps changed (2 -> 5)"]  # ... and what was forced past
    assert "resuming anyway" in caplog.text


def test_seeds_run_each_task_k_times_in_their_own_folders_and_resume_by_id_and_seed(tmp_path, pool, scripted) -> None:
    ids = ["csv-sales-summary", "os-error-lines"]
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in ids]
    options = ExecOptions(seed=10, seeds=2)
    out = tmp_path / "run"
    llm = scripted([solve(ids[0]), "FAIL", solve(ids[0])])
    first = suite(tasks, pool=pool, llm=llm, out_dir=out, options=options, limit=3)
    assert [p.seed for p in llm.params] == [10, 10, 11]  # seed by seed: every task with 10, then 11
    again = scripted([solve(ids[1])])
    second = suite(tasks, pool=pool, llm=again, out_dir=out, options=options, resume=True)
    assert (first.ran, second.ran, second.skipped) == (3, 1, 3) and [p.seed for p in again.params] == [11]
    rows = read_jsonl(out / "results.jsonl")
    assert [(r["id"], r["seed"], r["seed_index"]) for r in rows] == [
        (ids[0], 10, 0), (ids[1], 10, 0), (ids[0], 11, 1), (ids[1], 11, 1)]
    assert [r["success"] for r in rows] == [True, False, True, True]
    folders = [r["trajectory"] for r in rows]
    assert len(set(folders)) == 4 and folders[0] == f"episodes/{ids[0]}/seed-10"
    assert all((out / f / "traj.jsonl").is_file() for f in folders)
    done = suite(tasks, pool=pool, llm=scripted([]), out_dir=out, options=options, resume=True)
    assert done.ran == 0 and len(read_jsonl(out / "results.jsonl")) == 4


def test_exec_seeds_prints_intervals_and_refuses_a_changed_template_in_one_line(tmp_path, data, chat_server, task_file) -> None:
    # the first episode solves the task, the second fails: per-seed rates 1 and 0
    url = chat_server(lambda body, k: solve("csv-sales-summary") if k == 0 else "FAIL")
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: m\n")
    out = tmp_path / "run"
    args = ["exec", "--tasks", str(task_file), "--out", str(out), "--llm-config", str(cfg), "--seeds", "2"]
    res = _cli(args)
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[-1] == "execution_acc=0.5000 n=2 harness_errors=0"
    # mean 0.5, sd 0.7071, t(1) = 12.706: the interval is all of [0, 1]; pass@2 = 1, pass^2 = 0
    assert "calc: mean=0.500 95% CI [0.000, 1.000] (t over 2 seeds; 1 tasks) pass@2=1.000 pass^2=0.000" in lines
    assert "overall: mean=0.500 95% CI [0.000, 1.000] (t over 2 seeds; 1 tasks) pass@2=1.000 pass^2=0.000" in lines
    m = read_manifest(out / "manifest.json")
    assert m.seeds == [0, 1] and m.models["agents"]["base_url"] == url and m.models["agents"]["model_id"] == "m"
    (data / "prompts" / "code" / "task.txt").write_text("Do this: {task}\n\n{observation}\n")
    before = snapshot(out)
    refused = _cli([*args, "--resume"])
    assert refused.exit_code != 0 and isinstance(refused.exception, ManifestMismatchError)
    assert "manifest differs: prompt template code/task changed (" in str(refused.exception)
    assert snapshot(out) == before and len(chat_server.requests) == 2
