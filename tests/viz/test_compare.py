"""``agentlab compare``: paired comparison pages of run folders, manifest differences and bad input.

Most run folders here are written as ``agentlab exec`` writes them (``results.jsonl`` rows through
:func:`agentlab.fileio.write_jsonl`, ``manifest.json`` through :func:`agentlab.record.manifest.write_manifest`)
with outcomes chosen so the statistics are known; one comparison starts from a real run
(the ``exec_run`` fixture) to hold the reader to what the runner writes today.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentlab.cli import exit_status
from agentlab.fileio import read_jsonl, write_jsonl
from agentlab.record.manifest import Manifest, read_manifest, write_manifest
from agentlab.viz.compare import HTML_FILE, JSON_FILE, MD_FILE, compare_runs, default_out, manifest_check, write_compare

#: the baseline's manifest, as suite_manifest records one (hashes shortened to what the test needs)
BASE = Manifest(
    command="exec", created="2026-01-01T00:00:00+00:00",
    git={"commit": "a" * 40, "dirty": False}, packages={"torch": "2.6.0", "agentlab": "0.1.0"},
    machine={"hostname": "box-1", "cpu_count": 2},
    models={"agents": {"model_id": "Qwen/Qwen2.5-0.5B-Instruct", "backend": "HFBackend", "fingerprint": "f" * 64,
                       "path": "/models/qwen"},
            "router": {"kind": "ground_truth"}, "sentence_encoder": {"model_id": "all-MiniLM-L6-v2", "fingerprint": "e" * 64}},
    prompts={"code/system": "1" * 64}, documents={"code_agent": "2" * 64}, seeds=[0],
    options={"max_steps": 8, "router": "ground_truth", "team": None, "sandbox": "bwrap"},
    tasks={f"t{i:02d}": f"{i:064x}" for i in range(20)},
)


def manifest(**update: Any) -> Manifest:
    return BASE.model_copy(update=update, deep=True)


def write_run(folder: Path, outcomes: list[bool | None], *, manifest: Manifest | None = BASE, errors: frozenset[int] = frozenset(),
              seed: int = 0, ids: list[str] | None = None) -> Path:
    """A run folder: task ``t{i}`` (domain calc for even i, os for odd) succeeded as ``outcomes[i]``
    (None: not run); ``errors``: tasks whose row is a harness error (not judged, as the runner writes it)."""
    folder.mkdir(parents=True)
    rows = []
    for i, ok in enumerate(outcomes):
        if ok is None:
            continue
        tid = ids[i] if ids else f"t{i:02d}"
        row: dict[str, Any] = {"id": tid, "domain": "calc" if i % 2 == 0 else "os", "agents": ["code_agent"], "seed": seed,
                               "success": ok, "score": float(ok), "status": "done" if ok else "failed", "steps": 2,
                               "llm_calls": 2, "tokens_in": 300, "tokens_out": 40, "seconds": 1.5, "error": None}
        if i in errors:
            row.update(success=False, score=0.0, status="error", error="harness: the workspace could not start")
        rows.append(row)
    write_jsonl(folder / "results.jsonl", rows)
    if manifest is not None:
        write_manifest(folder, manifest)
    return folder


# A: 8 of 20; B: the same 8 plus 8 more, loses 1 (t00) -> discordant 8 won, 1 lost
A_OUT = [True] * 8 + [False] * 12
B_OUT = [False] + [True] * 7 + [True] * 8 + [False] * 4


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return (write_run(tmp_path / "runs" / "base", A_OUT),
            write_run(tmp_path / "runs" / "steps16", B_OUT, manifest=manifest(options={**BASE.options, "max_steps": 16})))


def test_the_pair_line_the_test_and_the_intervals(pair: tuple[Path, Path]) -> None:
    cmp = compare_runs(list(pair), resamples=2000, seed=0)
    (p,) = cmp.pairs
    assert p.mcnemar is not None and (p.mcnemar.only_a, p.mcnemar.only_b, p.mcnemar.both, p.mcnemar.neither) == (1, 8, 7, 4)
    assert p.p_value == pytest.approx(2 * (1 + 9) / 2**9)  # McNemar exact on 9 discordant tasks: 0.0391
    assert p.bootstrap.diff == pytest.approx(7 / 20) and p.bootstrap.low < 7 / 20 < p.bootstrap.high
    assert p.significant and p.verdict.startswith("steps16 beats base by +35.0 points [")
    assert p.verdict.endswith("] on 20 shared tasks (McNemar exact p = 0.039)")
    assert compare_runs(list(pair), resamples=2000, seed=0).pairs[0].bootstrap == p.bootstrap  # seeded: reproducible
    assert [(d.domain, d.tasks) for d in p.domains] == [("calc", 10), ("os", 10), ("overall", 20)]
    assert p.manifest.settings == ["option max_steps"] and not p.manifest.flagged
    overall = cmp.runs[0].overall
    assert overall is not None and overall.method == "wilson" and overall.mean == pytest.approx(0.4)


def test_harness_errors_and_tasks_only_one_ran_are_left_out(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", A_OUT[:18] + [None, None], errors=frozenset({3}))  # A never ran t18, t19
    b = write_run(tmp_path / "b", [None] + B_OUT[1:], errors=frozenset({5, 6}))  # B never ran t00
    (p,) = compare_runs([a, b], resamples=200).pairs
    assert p.pairing.excluded == ["t03", "t05", "t06"]
    assert p.pairing.only_a == ["t00"] and p.pairing.only_b == ["t18", "t19"]
    assert len(p.pairing.tasks) == 20 - 3 - 3 and "on 14 shared tasks" in p.verdict
    text = write_compare([a, b], tmp_path / "out", resamples=200)[1].joinpath(MD_FILE).read_text()
    assert "3 excluded for a harness error in either run: t03, t05, t06." in text
    assert "Not compared: 1 task(s) only a ran, 2 only b ran." in text
    assert f"| a | {a} | 18 | 18 | 0 | 1 | 38.9 [" in text  # the run table counts A's harness error (a failure)


def test_no_difference_is_said_in_plain_words(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", A_OUT)
    b = write_run(tmp_path / "b", A_OUT, manifest=manifest(seeds=[1]), seed=1)  # another seed, same outcomes
    (p,) = compare_runs([a, b], resamples=200).pairs
    assert p.pairing.by == "task"  # no seed in common: paired by task
    assert p.verdict == "no significant difference between b and a: b − a = +0.0 points [+0.0, +0.0] on 20 shared tasks " \
                        "(McNemar exact p = 1.000)"
    assert p.manifest.settings == ["seeds"]


def test_manifests_that_differ_in_more_than_one_setting_are_flagged() -> None:
    volatile = manifest(created="2026-02-02T00:00:00+00:00", machine={"hostname": "box-2", "cpu_count": 64},
                        resumes=[{"at": "2026-02-02"}],
                        models={**BASE.models, "agents": {**BASE.models["agents"], "path": "/elsewhere/qwen"}})
    assert manifest_check(BASE, volatile).differences == []  # when, where and on which machine: ignored
    one = manifest_check(BASE, manifest(options={**BASE.options, "max_steps": 16}))
    assert [(d.key, d.a, d.b) for d in one.differences] == [("option max_steps", "8", "16")] and not one.flagged
    two = manifest_check(BASE, manifest(options={**BASE.options, "max_steps": 16}, seeds=[1],
                                        prompts={"code/system": "3" * 64}, git={"commit": "b" * 40, "dirty": True},
                                        packages={**BASE.packages, "torch": "2.7.0"}))
    assert two.flagged and two.settings == ["option max_steps", "prompt templates", "seeds"]
    assert ("prompt template code/system", "11111111…", "33333333…") in [(d.key, d.a, d.b) for d in two.differences]
    # the code and the libraries are listed, not counted
    assert [d.key for d in two.other] == ["code", "package torch"]
    model = manifest_check(BASE, manifest(models={**BASE.models, "agents": {**BASE.models["agents"], "model_id": "Qwen/Qwen2.5-7B"}},
                                          tasks={**BASE.tasks, "t03": "9" * 64, "new": None}))
    assert model.settings == ["model agents", "task files"] and model.flagged
    assert [d.key for d in model.other] == ["tasks only in B"]
    assert manifest_check(BASE, None, (None, "no manifest.json (a run from before manifests)")).note == \
        "B: no manifest.json (a run from before manifests)"


def test_the_cli_writes_three_files_and_prints_the_pair_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "runs" / "base", A_OUT)
    b = write_run(tmp_path / "runs" / "b", B_OUT, manifest=manifest(options={**BASE.options, "max_steps": 16}))
    c = write_run(tmp_path / "runs" / "c", B_OUT, manifest=manifest(options={**BASE.options, "max_steps": 16}, seeds=[0, 1]))
    code = exit_status(["compare", str(a), str(b), str(c), "--bootstrap", "500"])
    out, err = capsys.readouterr()
    assert code == 0, err
    folder = tmp_path / "runs" / "compare-base-vs-b-vs-c"
    assert default_out([a, b, c]) == folder
    lines = out.splitlines()
    assert lines[0].startswith("b beats base by +35.0 points [") and lines[1].startswith("c beats base by +35.0 points [")
    assert lines[2:] == [f"compare: {folder / n}" for n in (MD_FILE, HTML_FILE, JSON_FILE)]
    md = (folder / MD_FILE).read_text()
    assert "## Warnings" in md
    assert "- c against base: the manifests differ in 2 settings (option max_steps, seeds), so the difference cannot" in md
    assert "b against base: the manifests" not in md
    assert "| calc | 40.0 [" in md and "| overall | 40.0 [21.9, 61.3] | 75.0 [53.1, 88.8] | 75.0 [53.1, 88.8] |" in md
    assert "| base succeeded | 7 | 1 |" in md and "| base failed | 8 | 4 |" in md
    data = json.loads((folder / JSON_FILE).read_text())
    assert [p["labels"] for p in data["pairs"]] == [["base", "b"], ["base", "c"]]
    assert data["pairs"][1]["manifest"]["flagged"] is True and data["pairs"][0]["manifest"]["flagged"] is False
    assert data["pairs"][0]["mcnemar"]["p_value"] == pytest.approx(20 / 512) and data["resamples"] == 500
    page = (folder / HTML_FILE).read_text()
    assert page.startswith("<!DOCTYPE html>") and "b beats base by +35.0 points" in page and "http" not in page
    # --out puts them elsewhere, and the same seed gives the same figures
    assert exit_status(["compare", str(a), str(b), "--bootstrap", "500", "--out", str(tmp_path / "elsewhere")]) == 0
    again = json.loads((tmp_path / "elsewhere" / JSON_FILE).read_text())
    assert again["pairs"][0]["bootstrap"] == data["pairs"][0]["bootstrap"]


def test_the_default_folder_lies_beside_the_first_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = write_run(tmp_path / "runs" / "base", A_OUT), write_run(tmp_path / "runs" / "new model", B_OUT)
    assert default_out([a, b]) == tmp_path / "runs" / "compare-base-vs-new_model"
    monkeypatch.chdir(a)  # "agentlab compare . ../new\ model" from inside the first run: beside it, not in it
    assert default_out([Path("."), Path("../new model")]) == (tmp_path / "runs" / "compare-base-vs-new_model").resolve()


def test_every_field_is_escaped_in_the_page_and_the_markdown(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    a = write_run(tmp_path / "a", [True, False], ids=[evil, "x|y"])
    b = write_run(tmp_path / f"b{evil[:7]}", [False, True], ids=[evil, "x|y"],
                  manifest=manifest(options={**BASE.options, "note": evil, "max_steps": 1}))
    _, folder = write_compare([a, b], tmp_path / "out", resamples=200)
    page, md = (folder / HTML_FILE).read_text(), (folder / MD_FILE).read_text()
    assert "<script" not in page and "&lt;script&gt;" in page
    assert "<script" not in md and "&lt;script" in md


def test_a_real_exec_run_against_a_changed_copy(exec_run: Path, tmp_path: Path) -> None:
    """The reader on what agentlab exec writes: the copy lost the task the original solved first."""
    other = tmp_path / "other"
    shutil.copytree(exec_run, other, ignore=shutil.ignore_patterns("view", "report.*"))
    rows = read_jsonl(other / "results.jsonl")
    won = next(r for r in rows if r["success"])
    won.update(success=False, status="failed")
    write_jsonl(other / "results.jsonl", rows)
    m = read_manifest(exec_run / "manifest.json")
    write_manifest(other, m.model_copy(update={"options": {**m.options, "max_steps": 3}}))
    (p,) = compare_runs([exec_run, other], resamples=200).pairs
    assert p.pairing.by == "task and seed" and len(p.pairing.tasks) == len(rows) == 4
    assert p.mcnemar is not None and (p.mcnemar.only_a, p.mcnemar.only_b) == (1, 0) and p.p_value == 1.0
    assert p.verdict.startswith("no significant difference between other and run: other − run = -25.0 points [")
    assert p.manifest.settings == ["option max_steps"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["{a}"], "give at least two run folders to compare (got 1)"),
        (["{a}", "{missing}"], "run folder not found"),
        (["{a}", "{notrun}"], "no results.jsonl here; is this a run folder"),
        (["{a}", "{empty}"], "empty/results.jsonl: no result rows; nothing to compare"),
        (["{a}", "{disjoint}"], "a and disjoint: the runs have no task in common; nothing to compare"),
        (["{a}", "{allerr}"], "a and allerr: every task the runs have in common (2) had a harness error"),
        (["{a}", "{a}", "--bootstrap", "10"], "--bootstrap 10: use at least 100 resamples"),
        (["{a}", "{a}", "--out", "{afile}"], "--out must be a folder"),
    ],
    ids=["one-run", "missing", "not-a-run", "empty-run", "nothing-in-common", "all-harness-errors", "few-resamples", "out-is-a-file"],
)
def test_bad_input_is_one_error_line_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            args: list[str], says: str) -> None:
    a = write_run(tmp_path / "a", [True, False])
    write_run(tmp_path / "empty", [])
    write_run(tmp_path / "disjoint", [True, False], ids=["other-1", "other-2"])
    write_run(tmp_path / "allerr", [True, True], errors=frozenset({0, 1}))
    (tmp_path / "notrun").mkdir()
    (tmp_path / "afile").write_text("x")
    paths = {n: tmp_path / n for n in ("a", "missing", "notrun", "empty", "disjoint", "allerr", "afile")}
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = exit_status(["compare", *(x.format(**paths) for x in args)])
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code != 0 and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert out == "" and sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written
    assert a.is_dir()
