"""``agentlab exec --resume --rerun failed|errors`` (issue #43): exactly the failed (or harness-error)
episodes run again, the rows they replace and their episode folders stay in the run's history,
the new rows carry ``attempt``, the exec output and ``agentlab report`` say what changed, and a
crash in the middle of a rerun loses nothing. Old run folders (no ``usd``, no ``attempt``) still load.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlab.run.episode import ExecOptions
from agentlab.errors import DiskFullError
from agentlab.fileio import read_jsonl
from agentlab.record.rerun import HISTORY_FILE, retire
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.viz.report import build_report

from .test_budget import IDS, loopback_models, run_exec
from .conftest import suite
from .test_episode import Down

THREE = IDS[:3]


@pytest.fixture(name="model")
def _model():  # type: ignore[no-untyped-def]
    yield from loopback_models()


def _by_id(out: Path, name: str = "results.jsonl") -> dict[str, dict]:
    return {r["id"]: r for r in read_jsonl(out / name)}


def test_rerun_failed_runs_exactly_the_failed_episodes_and_keeps_their_history(tmp_path, capsys, model) -> None:
    m, out = model(THREE, solves={THREE[0]}), tmp_path / "run"
    code, _, err = run_exec(capsys, tmp_path, m, out, ids=THREE)
    assert code == 0, err
    assert [r["success"] for r in read_jsonl(out / "results.jsonl")] == [True, False, False]
    first = _by_id(out)
    asked = len(m.asked())

    m.solves.add(THREE[1])  # the model got better at the second task
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", "--rerun", "failed", ids=THREE)
    assert code == 0, err
    assert sorted(set(m.asked()[asked:])) == THREE[1:]  # the succeeded episode was not run again
    assert "2 rerun: 1 now succeeds, 1 still fails" in lines and lines[-1] == "execution_acc=0.6667 n=3 harness_errors=0"
    rows = _by_id(out)
    assert sorted(rows) == sorted(THREE) and len(read_jsonl(out / "results.jsonl")) == 3  # one row per episode
    assert rows[THREE[0]] == first[THREE[0]] and "attempt" not in rows[THREE[0]]
    assert (rows[THREE[1]]["attempt"], rows[THREE[1]]["success"]) == (2, True)
    assert (rows[THREE[2]]["attempt"], rows[THREE[2]]["success"]) == (2, False)
    history = read_jsonl(out / HISTORY_FILE)
    assert [(h["id"], h["attempt"], h["success"]) for h in history] == [(THREE[1], 1, False), (THREE[2], 1, False)]
    for h in history:  # the replaced row is whole, and its episode folder moved beside it
        old = first[h["id"]]
        assert {k: v for k, v in h.items() if k not in ("trajectory", "attempt", "replaced")} == \
            {k: v for k, v in old.items() if k != "trajectory"}
        assert h["trajectory"] == f"history/episodes/{h['id']}/attempt-1"
        assert (out / h["trajectory"] / "traj.jsonl").is_file() and (out / "episodes" / h["id"] / "traj.jsonl").is_file()

    report = build_report([out]).markdown()
    assert "2 rerun: 1 now succeeds, 1 still fails." in report and "| USD |" in report

    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", "--rerun", "failed", ids=THREE)
    assert code == 0 and "1 rerun: 1 still fails" in lines, err
    assert _by_id(out)[THREE[2]]["attempt"] == 3 and len(read_jsonl(out / HISTORY_FILE)) == 3
    assert (out / "history" / "episodes" / THREE[2] / "attempt-2" / "traj.jsonl").is_file()


def test_a_rerun_cut_short_is_finished_by_a_plain_resume(tmp_path, capsys, model) -> None:
    m, out = model(THREE, solves={THREE[0]}), tmp_path / "run"
    assert run_exec(capsys, tmp_path, m, out, ids=THREE)[0] == 0
    m.solves.update(THREE)
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", "--rerun", "failed", "--limit", "1", ids=THREE)
    assert code == 0, err
    assert "1 rerun: 1 now succeeds; 1 still to run (--resume carries them out)" in lines
    assert len(read_jsonl(out / "results.jsonl")) == 2  # the pending rerun's old row is in the history, not lost
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", ids=THREE)
    assert code == 0 and "1 rerun: 1 now succeeds" in lines, err
    assert {r["id"]: r.get("attempt") for r in read_jsonl(out / "results.jsonl")} == {THREE[0]: None, THREE[1]: 2, THREE[2]: 2}
    assert "2 rerun: 2 now succeed." in build_report([out]).markdown()


def test_a_crash_before_results_are_rewritten_loses_nothing_and_repeats_nothing(tmp_path, capsys, model, monkeypatch) -> None:
    m, out = model(THREE, solves={THREE[0]}), tmp_path / "run"
    assert run_exec(capsys, tmp_path, m, out, ids=THREE)[0] == 0
    before = (out / "results.jsonl").read_bytes()

    def full(*_a, **_k):  # type: ignore[no-untyped-def]
        raise DiskFullError("cannot write: no space left on the device", where=out / "results.jsonl")

    monkeypatch.setattr("agentlab.run.worker.write_jsonl", full)
    code, _, err = run_exec(capsys, tmp_path, m, out, "--resume", "--rerun", "failed", ids=THREE)
    assert code == 1 and "no space left" in err
    assert (out / "results.jsonl").read_bytes() == before  # every row still there
    assert [h["id"] for h in read_jsonl(out / HISTORY_FILE)] == THREE[1:]  # and already in the history
    monkeypatch.undo()
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", "--rerun", "failed", ids=THREE)
    assert code == 0 and "2 rerun: 2 still fail" in lines, err
    history = read_jsonl(out / HISTORY_FILE)
    assert [(h["id"], h["attempt"]) for h in history] == [(THREE[1], 1), (THREE[2], 1)]  # not twice
    assert all((out / h["trajectory"] / "traj.jsonl").is_file() for h in history)
    assert {r["id"]: r["attempt"] for r in read_jsonl(out / "results.jsonl") if "attempt" in r} == {THREE[1]: 2, THREE[2]: 2}


def test_retire_twice_moves_and_records_once(tmp_path) -> None:
    folder = tmp_path / "episodes" / "t"
    folder.mkdir(parents=True)
    (folder / "traj.jsonl").write_text("{}\n")
    row = {"id": "t", "seed": 0, "success": False, "error": None, "trajectory": "episodes/t"}
    retire(tmp_path, [(row, folder)])
    retire(tmp_path, [(row, folder)])  # a crash after the move and the append: the command is repeated
    (kept,) = read_jsonl(tmp_path / HISTORY_FILE)
    assert kept["trajectory"] == "history/episodes/t/attempt-1" and not folder.exists()
    assert (tmp_path / "history" / "episodes" / "t" / "attempt-1" / "traj.jsonl").read_text() == "{}\n"


def test_rerun_errors_and_its_alias_run_only_the_harness_error_rows(tmp_path, pool, scripted) -> None:
    from .conftest import py

    tasks = [load_task(tasks_dir() / f"{i}.json") for i in THREE[:2]]
    solution = tasks[0].reference_solution
    assert solution is not None
    suite(tasks[:1], pool=pool, llm=Down(), out_dir=tmp_path, options=ExecOptions(), agent="CoderAgent")
    failed = suite(tasks, pool=pool, llm=scripted(["no program"] * 10), out_dir=tmp_path,
                   options=ExecOptions(max_steps=1), agent="CoderAgent", resume=True, force_resume=True)
    assert [(r["id"], bool(r["error"]), r["success"]) for r in failed.rows] == [(THREE[0], True, False), (THREE[1], False, False)]
    for how in ({"rerun": frozenset({"errors"})}, {"retry_errors": True}):
        llm = scripted([py(solution.code, "DONE")])
        again = suite(tasks, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=1), agent="CoderAgent",
                      resume=True, force_resume=True, **how)
        if "rerun" in how:
            assert again.ran == 1 and [c.label for c in again.reruns] == ["now succeeds"] and len(llm.prompts) == 1
        else:  # nothing is a harness error any more: the failed row is not touched by an errors rerun
            assert again.ran == 0 and again.reruns == []
    (h,) = read_jsonl(tmp_path / HISTORY_FILE)
    assert h["id"] == THREE[0] and "cannot reach" in h["error"]


def test_rerun_flags_are_checked_before_anything_runs(tmp_path, capsys, model) -> None:
    m = model(THREE[:1])
    for extra, says in ((["--rerun", "failed"], "error: --rerun runs rows of an earlier run again; it needs --resume"),
                        (["--retry-errors"], "error: --retry-errors runs rows of an earlier run again; it needs --resume"),
                        (["--resume", "--rerun", "broken"], "error: --rerun: 'broken' is not one of failed, errors")):
        code, _, err = run_exec(capsys, tmp_path, m, tmp_path / "run", *extra, ids=THREE[:1])
        assert code == 1 and len(err.strip().splitlines()) == 1 and err.startswith(says), err
    assert m.server.requests == []


def test_a_run_folder_of_an_older_version_still_loads_in_report_and_view(tmp_path) -> None:
    from agentlab.viz.site import write_site

    out = tmp_path / "old"
    out.mkdir()
    # rows as the first versions wrote them: no usd, attempt, status, tokens or manifest
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"id": "a", "domain": "os", "success": True, "steps": 2, "seconds": 1.5},
        {"id": "b", "domain": "os", "success": False, "steps": 3, "seconds": 2.0, "error": None})))
    doc = build_report([out]).markdown()
    assert "no USD recorded" in doc and "Reruns" not in doc
    lines = doc.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| domain | episodes | model calls"))
    cells = [[c.strip() for c in lines[i].strip("|").split("|")] for i in (head, head + 3)]
    assert cells[1][0] == "overall" and cells[1][cells[0].index("USD")] == "—"  # absent, not 0
    index = write_site(out, tmp_path / "site")
    assert "<th>USD</th>" in index.read_text()


@pytest.fixture(scope="module")
def pool():  # type: ignore[no-untyped-def]
    from agentlab.pool import AgentPool

    return AgentPool.from_dir(None)
