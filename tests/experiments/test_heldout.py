"""The held-out study: which tasks each arm runs, the exact exec command, and the table read back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentlab.experiments import heldout
from agentlab.tasks.spec import load_tasks

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "data" / "tasks_heldout"


def test_the_sample_takes_the_first_tasks_of_each_domain_byte_for_byte(tmp_path: Path) -> None:
    folder = heldout.sample_folder(HELDOUT, tmp_path, 2)
    ids = sorted(p.stem for p in folder.glob("*.json"))
    domains = {t.domain for t in load_tasks(HELDOUT)}
    assert len(ids) == 2 * len(domains) and "calc-h-airport-codes-caps" in ids
    assert all((folder / f"{i}.json").read_bytes() == (HELDOUT / f"{i}.json").read_bytes() for i in ids)
    assert heldout.sample_folder(HELDOUT, tmp_path, 2) == folder  # again: nothing changes


def test_the_dev_set_is_the_single_domain_workspace_tasks(tmp_path: Path) -> None:
    folder = heldout.workspace_single_folder(ROOT / "data" / "tasks", tmp_path)
    tasks = load_tasks(folder)
    assert len(tasks) >= 50 and all(t.env == "workspace" and not t.plan for t in tasks)
    assert {"calc", "writer", "os", "vscode"} <= {t.domain for t in tasks} and "multi_apps" not in {t.domain for t in tasks}


def test_each_arm_is_one_resumable_exec_command(tmp_path: Path) -> None:
    argv = heldout.exec_argv(heldout.ARMS["unconstrained"], HELDOUT, tmp_path, max_steps=3, max_new_tokens=256, resume=True)
    assert argv == ["exec", "--tasks", str(HELDOUT), "--out", str(tmp_path / "unconstrained"), "--router", "gt",
                    "-O", "constrained=false", "--max-steps", "3", "--max-new-tokens", "256", "--resume"]
    assert heldout.ARMS["generalist"].flags == ("--agent", "Friday") and heldout.ARMS["gt"].whole_set


def _rows(out: Path, arm: str, outcomes: dict[str, bool]) -> None:
    (out / arm).mkdir(parents=True)
    (out / arm / "results.jsonl").write_text("".join(
        json.dumps({"id": i, "domain": i.split("-")[0], "success": ok, "seconds": 10.0 + n, "error": None}) + "\n"
        for n, (i, ok) in enumerate(outcomes.items())))


def test_the_table_compares_every_arm_on_the_sample_and_gt_on_the_whole_set(tmp_path: Path, capsys) -> None:
    _rows(tmp_path, "gt", {"calc-a": True, "calc-b": False, "calc-c": True, "os-a": True})
    _rows(tmp_path, "generalist", {"calc-a": False, "os-a": False})
    results = heldout.read_arms(tmp_path, ["gt", "generalist", "agenttoken"])
    assert results[0].by_domain() == {"calc": (2 / 3, 3), "os": (1.0, 1), "all": (0.75, 4)}
    assert results[0].on({"calc-a", "os-a"}).by_domain()["all"] == (1.0, 2) and results[2].rows == []
    text = "\n".join(heldout.markdown(results))
    assert "| all | 75.0 (4) |" in text  # gt on the whole set
    assert "| all | 100.0 (2) | 0.0 (2) |" in text  # both on the generalist's sample

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("benchmark_heldout", ROOT / "benchmarks" / "heldout.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        code = module.main(["--out", str(tmp_path), "--arms", "gt,generalist", "--report-only",
                            "--results", str(tmp_path / "r.md")])
        assert module.main(["--arms", "gt,nope", "--report-only", "--out", str(tmp_path)]) == 1
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert code == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("gt_acc=0.7500 generalist_acc=0.0000")
    assert "Command: `python benchmarks/heldout.py --out" in (tmp_path / "r.md").read_text()


def test_an_empty_task_folder_is_one_line(tmp_path: Path) -> None:
    from agentlab.errors import DataError

    with pytest.raises(DataError, match="no task files"):
        heldout.sample_folder(tmp_path, tmp_path / "out", 1)


def test_a_record_keeps_each_arms_rows_and_gives_the_notebook_its_heatmap(tmp_path: Path) -> None:
    _rows(tmp_path, "gt", {"calc-a": True, "calc-b": False, "os-a": True})
    _rows(tmp_path, "gt-noprior", {"calc-a": False, "calc-b": False, "os-a": True})
    results = heldout.read_arms(tmp_path, ["gt", "gt-noprior", "generalist"])  # generalist: not run, left out
    heldout.write_record(results, tmp_path / "rec.json", command="python benchmarks/heldout.py", note="n")
    back, header = heldout.load_record(tmp_path / "rec.json")
    assert [r.arm for r in back] == ["gt", "gt-noprior"] and header == {"command": "python benchmarks/heldout.py", "note": "n"}
    assert set(back[0].rows[0]) == set(heldout.RECORD_FIELDS)  # trimmed: no trajectory, no verdict
    rates, counts = heldout.heatmap(back)
    assert rates["gt"] == {"calc": 0.5, "os": 1.0, "all": 2 / 3} and counts["gt-noprior"]["all"] == 3
    assert rates["gt-noprior"]["calc"] == 0.0


def test_details_give_intervals_routing_wrong_env_and_the_multi_op_share() -> None:
    rows = [
        {"id": "a", "success": True, "agents": ["SheetAgent"], "status": "done", "llm_calls": 2, "tokens_in": 10,
         "tokens_out": 5, "seconds": 3.0},
        {"id": "b", "success": False, "agents": ["ChromeAgent"], "status": "wrong_env", "llm_calls": 0,
         "tokens_in": 0, "tokens_out": 0, "seconds": 1.0},
        {"id": "c", "success": True, "agents": ["DocAgent"], "status": "done", "llm_calls": 4, "tokens_in": 30,
         "tokens_out": 9, "seconds": 5.0},
    ]
    gold = {"a": "SheetAgent", "b": "MailboxAgent", "c": "SlideAgent"}
    lines = heldout.details([heldout.ArmResult("hybrid", rows)], gold=gold, ops={"a": 1, "b": 2, "c": 2})
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[0] == "hybrid" and cells[1] == "3"
    assert cells[2].startswith("66.7 [") and cells[3] == "33.3" and cells[4] == "1"
    assert cells[5] == "1/1" and cells[6] == "1/2" and cells[7] == "2.0" and cells[8] == "15.0" and cells[9] == "3.0"


def test_the_v2_set_counts_its_operations_and_every_task_has_a_gold_agent() -> None:
    v2 = ROOT / "data" / "tasks_heldout_v2"
    ops = heldout.ops_counts(v2)
    gold = heldout.gold_agents(v2)
    assert set(ops) == set(gold) and sum(n >= 2 for n in ops.values()) * 2 >= len(ops)
    assert heldout.ops_counts(ROOT / "data" / "tasks_heldout") == {}
