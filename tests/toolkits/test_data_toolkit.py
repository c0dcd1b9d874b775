"""The data toolkit (DataAgent, the general domain): its calls solve real development tasks through
the real tool program and the tasks' own evaluators, the slots offer every argument those calls
need, and its functions read tables the way people write them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.paths import data_dir
from agentlab.toolkits import load_toolkit
from agentlab.toolkits.base import ToolError, parse_calls
from agentlab.toolkits.runtime import program, results
from agentlab.toolkits.slots import merge, request_values, workspace_values
from agentlab.tasks.spec import load_task, tasks_dir

#: development tasks (never the blind sets) and calls that carry them out
CASES = {
    "tasks_dev2/general-d2-essay-word-count": ["count_words('essay.txt', 'count.txt')"],
    "tasks_dev2/general-d2-spending-by-category": ["total_by('spending.csv', 'category', 'amount', 'totals.csv')"],
    "tasks_dev2/os-d2-count-log-warnings": ["count_lines('app.log', 'warnings', 'warnings.txt')"],
    "tasks/general-json-to-csv": ["json_to_csv('people.json', 'people.csv')", "sort_csv('people.csv', 'age', False)"],
}


def _task(key: str):  # type: ignore[no-untyped-def]
    folder, name = key.split("/")
    return load_task((tasks_dir() if folder == "tasks" else data_dir() / folder) / f"{name}.json")


def _run(calls: list[str], root: Path) -> list[dict]:
    kit = load_toolkit("data")
    parsed = parse_calls("\n".join(calls), kit, max_calls=len(calls))
    out = subprocess.run([sys.executable, "-c", program("data", [c.as_json() for c in parsed])],
                         capture_output=True, text=True, cwd=root, timeout=60)
    return results(out.stdout)


@pytest.mark.parametrize("key", list(CASES))
def test_the_calls_solve_the_development_task(key: str, tmp_path: Path) -> None:
    task = _task(key)
    task.prepare(tmp_path)
    assert task.evaluate(tmp_path).score == 0.0
    done = _run(CASES[key], tmp_path)
    assert [r["ok"] for r in done] == [True] * len(CASES[key]), done
    result = task.evaluate(tmp_path)
    assert result.score == 1.0, result.explain()


@pytest.mark.parametrize("key", list(CASES))
def test_the_slots_offer_what_the_calls_need(key: str, tmp_path: Path) -> None:
    kit = load_toolkit("data")
    task = _task(key)
    task.prepare(tmp_path)
    for k, call in enumerate(parse_calls("\n".join(CASES[key]), kit, max_calls=9)):
        if k:  # a later call's files may be the earlier calls' results: offered once they exist
            assert all(r["ok"] for r in _run(CASES[key][k - 1:k], tmp_path))
        values = merge(request_values(task.instruction), workspace_values(tmp_path, kit))
        for param in kit.tools[call.name].params:
            cands = values.candidates(param.slot)
            arg = call.args[param.name]
            if cands is not None and param.slot.kind != "bool":
                assert repr(arg) in cands or str(arg) in cands, (call.name, param.name, arg, cands[:12])


def test_tables_are_read_as_people_write_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.toolkits import data

    monkeypatch.chdir(tmp_path)
    Path("t.csv").write_text("name,team,pay,email\nAna,A,\"1,200.50\",a@x.org\nBo,B,$300,\n\nCy,A,99,c@x.org\n"
                             "Cy,A,99,c@x.org\n", encoding="utf-8")
    data.column_stat("t.csv", "pay", "sum", "sum.txt")
    assert Path("sum.txt").read_text() == "1698.5\n"
    data.column_stat("t.csv", "email", "count", "n.txt")
    assert Path("n.txt").read_text() == "3\n"
    data.total_by("t.csv", "team", "pays", "by_team.csv")  # "pays" names the column "pay"
    assert Path("by_team.csv").read_text().splitlines() == ["team,total", "A,1398.50", "B,300.00"]
    data.filter_rows("t.csv", "email", "*", "with_email.csv")
    data.keep_columns("with_email.csv", "name, email", "contacts.csv")
    data.csv_to_json("contacts.csv", "contacts.json")
    assert json.loads(Path("contacts.json").read_text())[0] == {"name": "Ana", "email": "a@x.org"}
    data.remove_duplicate_rows("t.csv")
    assert Path("t.csv").read_text().count("Cy,A,99") == 1
    data.sort_csv("t.csv", "pay", True)
    assert [ln.split(",")[0] for ln in Path("t.csv").read_text().splitlines()[1:]] == ["Ana", "Bo", "Cy"]
    with pytest.raises(ToolError, match="not a number"):
        data.column_stat("t.csv", "name", "mean", "x.txt")
    with pytest.raises(ToolError, match="no column 'age'"):
        data.sort_csv("t.csv", "age")


def test_the_data_agent_is_the_general_domains_specialist() -> None:
    from agentlab.metaagent.ground_truth import gt_agent
    from agentlab.pool import AgentPool

    pool = AgentPool.from_dir()
    doc = pool.get("DataAgent")
    assert doc.runner == "tools" and doc.runner_options["toolkit"] == "data"
    assert gt_agent(_task("tasks_dev2/general-d2-essay-word-count"), pool) == "DataAgent"


def test_what_people_keep_in_tables_survives_a_conversion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Phone numbers and zip codes stay text in JSON, true/false and lists stay JSON in CSV,
    blanks sort last under numbers, and "errors" counts the lines saying ERROR."""
    from agentlab.toolkits import data

    monkeypatch.chdir(tmp_path)
    Path("c.csv").write_text("name,phone,zip,age\nAna,+1 555 123 4567,01234,31\nBo,,99999,7\n", encoding="utf-8")
    data.csv_to_json("c.csv", "c.json")
    assert json.loads(Path("c.json").read_text()) == [
        {"name": "Ana", "phone": "+1 555 123 4567", "zip": "01234", "age": 31},
        {"name": "Bo", "phone": "", "zip": "99999", "age": 7}]
    Path("p.json").write_text(json.dumps([{"a": True, "tags": ["x"], "n": 2.5}, {"a": False}]), encoding="utf-8")
    data.json_to_csv("p.json", "p.csv")
    assert Path("p.csv").read_text().splitlines() == ["a,tags,n", 'true,"[""x""]",2.5', "false,,"]
    Path("s.csv").write_text("item,price\na,$1200\nb,$900\nc,\nd,$35\n", encoding="utf-8")
    data.sort_csv("s.csv", "price", True)
    assert [ln.split(",")[0] for ln in Path("s.csv").read_text().splitlines()[1:]] == ["a", "b", "d", "c"]
    Path("app.log").write_text("ERROR x\nINFO 3 errors fixed\nERROR y\nWARN z\n", encoding="utf-8")
    data.count_lines("app.log", "warnings", "w.txt")
    assert Path("w.txt").read_text() == "1\n"


def test_several_named_columns_are_offered_as_one_list(tmp_path: Path) -> None:
    """keep_columns takes the columns the request names, in its order, as one value; a TSV's
    header is read like a CSV's."""
    kit = load_toolkit("data")
    (tmp_path / "members.tsv").write_text("name\temail\tphone\n", encoding="utf-8")
    values = merge(request_values("I only need the phone and name columns of members.tsv, saved as list.csv."),
                   workspace_values(tmp_path, kit))
    assert "'phone, name'" in values.candidates(kit.tools["keep_columns"].params[1].slot)
    assert set(values.headers) == {"name", "email", "phone"}
