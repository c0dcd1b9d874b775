"""Best of K for the tool specialists (issue #38): K candidate replies tried on scratch copies of the
workspace, scored against the request alone (:mod:`agentlab.toolkits.check`), the best one run.

A scripted backend gives the greedy reply a wrong value and a sampled one the request's value; the
kept reply must be the right one, the real workspace must hold only its effect, and the candidates
must never touch it. K = 1 must ask exactly what the agent always asked."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from agentlab.agents.best_of import Candidate, choose, tried
from agentlab.agents.tools import ToolAgent
from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.run.episode import run_task
from agentlab.llm.testing import ScriptedChat as Scripted
from agentlab.pool import AgentPool
from agentlab.tasks.spec import load_task
from agentlab.teams.base import ExecOptions
from agentlab.toolkits import load_toolkit
from agentlab.toolkits.base import parse_calls
from agentlab.toolkits.check import ERROR, request_score
from agentlab.envs.trajectory import load_trajectory

#: a workspace task for the SheetAgent (sheet Budget: paper 10, ink 50); its evaluator only says, in
#: the row, whether the kept reply did it: the agent never sees it
TASK = {
    "id": "sheet-enter-total", "domain": "calc", "env": "workspace", "agent": "SheetAgent", "outputs": ["budget.xlsx"],
    "instruction": "In budget.xlsx, type the word Total into cell A4 and the number 60 into cell B4.",
    "setup": [{"type": "write_xlsx", "path": "budget.xlsx",
               "sheets": {"Budget": [["item", "cost"], ["paper", 10], ["ink", 50]]}}],
    "evaluator": {"func": ["exact_match", "exact_match"], "conj": "and",
                  "result": [{"type": "xlsx_cell", "path": "budget.xlsx", "sheet": "Budget", "cell": c} for c in ("A4", "B4")],
                  "expected": [{"type": "literal", "value": "Total"}, {"type": "literal", "value": 60}]},
}
WRONG = "set_cell('budget.xlsx', 'Budget', 'A4', 'Total')\nset_cell('budget.xlsx', 'Budget', 'B4', '50')"
RIGHT = "set_cell('budget.xlsx', 'Budget', 'A4', 'Total')\nset_cell('budget.xlsx', 'Budget', 'B4', '60')"
BROKEN = "set_cell('budget.xlsx', 'Sheet1', 'B4', '60')"  # no such sheet: the call fails


@pytest.fixture(scope="module")
def pool() -> AgentPool:
    return AgentPool.from_dir(None)


def _bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (the workspace's scratch folder included) with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(tmp_path: Path, pool: AgentPool, replies: list[str], monkeypatch: pytest.MonkeyPatch,
         **options: Any) -> tuple[dict[str, Any], Scripted, list[tuple[dict[str, bytes], dict[str, bytes]]], dict[str, bytes]]:
    """Run the task with ``replies``; (row, backend, the workspace's bytes before and after each
    best-of selection, the workspace's files when the episode ended)."""
    around: list[tuple[dict[str, bytes], dict[str, bytes]]] = []
    final: dict[str, bytes] = {}
    original_best_of, original_run = ToolAgent._best_of, ToolAgent.run

    def watched_best_of(self: ToolAgent, llm: Any, env: Any, *args: Any) -> Any:
        before = _bytes(env.workspace.root)
        out = original_best_of(self, llm, env, *args)
        around.append((before, _bytes(env.workspace.root)))
        return out

    def watched_run(self: ToolAgent, env: Any, *args: Any) -> Any:
        out = original_run(self, env, *args)
        final.update(_bytes(env.workspace.root))
        return out

    monkeypatch.setattr(ToolAgent, "_best_of", watched_best_of)
    monkeypatch.setattr(ToolAgent, "run", watched_run)
    llm = Scripted(replies)
    task_file = tmp_path / "task" / "sheet-enter-total.json"
    task_file.parent.mkdir(parents=True)
    task_file.write_text(json.dumps(TASK))
    row = run_task(load_task(task_file), pool=pool, llm=llm, out_dir=tmp_path / "run",
                   options=ExecOptions(max_steps=3, runner_options=options))
    return row, llm, around, final


def _cells(data: bytes, tmp_path: Path) -> list[Any]:
    path = tmp_path / "check.xlsx"
    path.write_bytes(data)
    ws = openpyxl.load_workbook(path)["Budget"]
    return [ws[c].value for c in ("A2", "B2", "A3", "B3", "A4", "B4")]


def test_three_candidates_keep_the_one_that_writes_the_requested_value(tmp_path, pool, monkeypatch) -> None:
    # step 1: greedy writes 50 (wrong), a sample writes 60 (right), a sample names a sheet that is not there;
    # step 2: greedy done(), a sample says done() too, another writes 70 over the right value
    replies = [WRONG, RIGHT, BROKEN, "done()", "done()", "set_cell('budget.xlsx', 'Budget', 'B4', '70')"]
    row, llm, around, final = _run(tmp_path, pool, replies, monkeypatch, best_of=3)
    assert (row["agents"], row["success"], row["steps"]) == (["SheetAgent"], True, 2), row
    assert row["llm_calls"] == 6 and row["runner_options"]["best_of"] == 3  # three model calls per step, metered
    assert [p.temperature for p in llm.params] == [0.0, 0.7, 0.7] * 2
    assert [p.seed for p in llm.params] == [0, 1000, 2000, 10, 1010, 2010]  # distinct seeds per candidate

    traj = load_trajectory(tmp_path / "run" / row["trajectory"])
    first, second = traj.steps[0].info, traj.steps[1].info
    scores = {c["reply"]: c["score"] for c in first["best_of"]}
    assert [c["kept"] for c in first["best_of"]] == [False, True, False]
    assert scores[RIGHT] > scores[WRONG] > scores[BROKEN], first["best_of"]
    assert "call error" in first["best_of"][2]["why"] and "'60' appeared" in first["best_of"][1]["why"]
    assert traj.steps[0].action_text == RIGHT and first["messages"][-1]["content"] == RIGHT
    assert [c["args"]["value"] for c in first["calls"]] == ["Total", "60"]
    assert second["end"] == "done" and [c["kept"] for c in second["best_of"]] == [True, False, False]
    assert second["best_of"][1]["why"] == "same calls as candidate 0"
    cost = traj.meta.extra["best_of"]
    assert (cost["k"], cost["steps"], cost["extra_llm_calls"], cost["kept_sampled"]) == (3, 2, 4, 1)
    assert cost["candidates_run"] == 5  # 3 in step 1; done() and the 70 in step 2 (the second done() is the first's)

    # the candidates never touched the real workspace: its bytes before and after each selection are equal,
    # and before the first one they are the task's start
    assert len(around) == 2 and all(before == after for before, after in around)
    start = around[0][0]
    assert set(start) == {"budget.xlsx"}
    assert _cells(start["budget.xlsx"], tmp_path) == ["paper", 10, "ink", 50, None, None]
    # the real workspace holds only the kept reply's effect: one program run, the right values
    assert _cells(final["budget.xlsx"], tmp_path) == ["paper", 10, "ink", 50, "Total", 60]
    assert sorted(n for n in final if n.startswith(".agentlab/step_")) == [".agentlab/step_001.py"]
    assert '"value": "60"' in final[".agentlab/step_001.py"].decode()


def test_a_greedy_reply_whose_call_fails_loses_to_a_sampled_one_that_works(tmp_path, pool, monkeypatch) -> None:
    row, _, _, final = _run(tmp_path, pool, [BROKEN, RIGHT, BROKEN, "done()", "done()", "done()"], monkeypatch, best_of=3)
    assert (row["success"], row["steps"], row["error"]) == (True, 2, None), row
    traj = load_trajectory(tmp_path / "run" / row["trajectory"])
    assert [c["kept"] for c in traj.steps[0].info["best_of"]] == [False, True, False]
    assert "ERROR" not in traj.steps[0].info["results"]
    assert _cells(final["budget.xlsx"], tmp_path)[-2:] == ["Total", 60]


def test_k1_asks_exactly_as_before(tmp_path, pool, monkeypatch) -> None:
    """best_of=1 (the default) is today's agent: one model call per step, greedy then the same seeds,
    the greedy reply run, no candidates recorded."""
    seen = {}
    for name, options in (("default", {}), ("k1", {"best_of": 1})):
        row, llm, around, final = _run(tmp_path / name, pool, [WRONG, "done()"], monkeypatch, **options)
        traj = load_trajectory(tmp_path / name / "run" / row["trajectory"])
        assert row["llm_calls"] == row["steps"] == 2 and around == []
        assert all("best_of" not in s.info for s in traj.steps) and "best_of" not in traj.meta.extra
        assert _cells(final["budget.xlsx"], tmp_path)[-2:] == ["Total", 50]  # the greedy reply, wrong as it is
        seen[name] = ([(p.seed, p.temperature) for p in llm.params], [s.action_text for s in traj.steps])
    assert seen["default"] == seen["k1"] == ([(0, 0.0), (10, 0.0)], [WRONG, "done()"])


def test_bad_best_of_is_refused(pool) -> None:
    from agentlab.agents.base import build_agent
    from agentlab.errors import ConfigError

    doc = pool.get("SheetAgent")
    with pytest.raises(ConfigError, match="runner_options.best_of"):
        build_agent(dataclasses.replace(doc, runner_options={**doc.runner_options, "best_of": 0}), {})


# -- the request checker, on real files -----------------------------------------------------


def _xlsx(path: Path, b4: Any = None) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    for row in (["item", "cost"], ["paper", 10], ["ink", 50]):
        ws.append(row)
    if b4 is not None:
        ws["A4"], ws["B4"] = "Total", b4
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)


def _docx(path: Path, text: str) -> None:
    import docx

    doc = docx.Document()
    doc.add_paragraph("Contract")
    doc.add_paragraph(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path))


OK: list[dict[str, Any]] = [{"call": "set_cell", "ok": True, "result": "done"}]


def test_the_checker_rewards_the_requested_value_in_a_workbook(tmp_path) -> None:
    kit = load_toolkit("sheets")
    request = "In budget.xlsx, type the word Total into cell A4 and the number 60 into cell B4."
    _xlsx(tmp_path / "start" / "budget.xlsx")
    for name, b4 in (("right", 60), ("wrong", 50)):
        _xlsx(tmp_path / name / "budget.xlsx", b4)
    # unchanged means the same bytes: a workbook written again a second later differs in its
    # saved-at time (docProps), which made this test fail on a loaded machine
    (tmp_path / "same").mkdir()
    shutil.copy2(tmp_path / "start" / "budget.xlsx", tmp_path / "same" / "budget.xlsx")
    right, why = request_score(request, tmp_path / "start", tmp_path / "right", kit, OK)
    wrong, _ = request_score(request, tmp_path / "start", tmp_path / "wrong", kit, OK)
    same, why_same = request_score(request, tmp_path / "start", tmp_path / "same", kit, OK)
    assert right > wrong > 0 > same, (right, wrong, same)
    assert "'60' appeared" in why and "B4 changed" in why and "nothing changed" in why_same
    erred, _ = request_score(request, tmp_path / "start", tmp_path / "right", kit,
                             [{"call": "set_cell", "ok": False, "error": "ToolError: no sheet"}])
    assert erred == right - ERROR


def test_the_checker_rewards_a_quoted_phrase_in_a_document_and_punishes_one_that_no_longer_opens(tmp_path) -> None:
    kit = load_toolkit("documents")
    request = "Replace every 'Ltd' with 'Limited' in contract.docx."
    _docx(tmp_path / "start" / "contract.docx", "Acme Ltd agrees to pay.")
    _docx(tmp_path / "right" / "contract.docx", "Acme Limited agrees to pay.")
    _docx(tmp_path / "other" / "contract.docx", "Acme Corp agrees to pay.")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "contract.docx").write_bytes(b"PK\x03\x04 not a document any more")
    right, why = request_score(request, tmp_path / "start", tmp_path / "right", kit, OK)
    other, _ = request_score(request, tmp_path / "start", tmp_path / "other", kit, OK)
    broken, why_broken = request_score(request, tmp_path / "start", tmp_path / "broken", kit, OK)
    unchanged, _ = request_score(request, tmp_path / "start", tmp_path / "start", kit, OK)
    assert right > other > unchanged > broken, (right, other, unchanged, broken)
    assert "'Limited' appeared" in why and "'Ltd' gone" in why
    assert "no longer opens: contract.docx" in why_broken


def test_the_checker_reads_text_files_whole(tmp_path) -> None:
    kit = load_toolkit("files")
    request = "Add 'eggs' at the end of list.txt."
    lines = [f"item {i}" for i in range(30)]  # longer than a description shows
    for name, extra in (("start", []), ("right", ["eggs"]), ("wrong", ["milk"])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "list.txt").write_text("\n".join(lines + extra) + "\n")
    right, _ = request_score(request, tmp_path / "start", tmp_path / "right", kit, OK)
    wrong, _ = request_score(request, tmp_path / "start", tmp_path / "wrong", kit, OK)
    assert right > wrong


def test_property_the_named_value_beats_any_other_and_an_error_costs_the_same(tmp_path) -> None:
    """For random values: writing the number the request names always scores above writing another,
    and a failed call always costs exactly ERROR."""
    kit = load_toolkit("files")
    rng = random.Random(7)
    for i in range(12):
        want, other = rng.sample(range(1, 10_000), 2)
        request = f"Set the limit in config.json to {want}."
        root = tmp_path / str(i)
        for name, value in (("start", rng.randint(10_001, 20_000)), ("right", want), ("wrong", other)):
            (root / name).mkdir(parents=True)
            (root / name / "config.json").write_text(json.dumps({"limit": value, "name": "x"}))
        right, _ = request_score(request, root / "start", root / "right", kit, OK)
        wrong, _ = request_score(request, root / "start", root / "wrong", kit, OK)
        erred, _ = request_score(request, root / "start", root / "right", kit, [{"ok": False, "error": "x"}])
        assert right > wrong and erred == right - ERROR, (want, other, right, wrong)


# -- trying candidates ----------------------------------------------------------------------


def test_candidates_run_on_a_scratch_copy_under_a_time_limit(tmp_path) -> None:
    kit = load_toolkit("sheets")
    ws = Workspace(root=tmp_path / "ws", config=WorkspaceConfig(sandbox="none"))
    _xlsx(ws.folder / "budget.xlsx")
    start = _bytes(ws.folder)
    calls = parse_calls(RIGHT, kit)
    with tried(ws, kit, calls, timeout_s=30) as (records, after):
        assert [r["ok"] for r in records] == [True, True]
        assert after != ws.folder and ws.folder not in after.parents
        assert openpyxl.load_workbook(after / "budget.xlsx")["Budget"]["B4"].value == 60
        assert not (after / ".agentlab").exists()  # the copy read holds the task's files only
    assert not after.exists() and _bytes(ws.folder) == start  # copies gone, workspace untouched
    with tried(ws, kit, calls, timeout_s=0.01) as (records, _):
        assert [r["ok"] for r in records] == [False, False] and records[0]["error"] == "timed out"
    assert _bytes(ws.folder) == start


def test_choose_breaks_ties_towards_the_greedy_reply_and_skips_what_is_not_calls(tmp_path) -> None:
    kit = load_toolkit("sheets")
    ws = Workspace(root=tmp_path / "ws", config=WorkspaceConfig(sandbox="none"))
    _xlsx(ws.folder / "budget.xlsx")
    request = "In budget.xlsx, type the word Total into cell A4 and the number 60 into cell B4."
    with ws.safe.private_copy() as start:
        same = "set_cell('budget.xlsx', 'Budget', 'B4', '60')"
        other = "set_cell('budget.xlsx', 'Budget', 'B4', '  60')"  # another reply, the same effect
        cands = [Candidate(0, same, 0, parse_calls(same, kit)), Candidate(1, other, 1, parse_calls(other, kit)),
                 Candidate(2, "oops", 2, None, why="unusable: not a call")]
        kept = choose(cands, instruction=request, start=start, ws=ws, kit=kit)
    assert kept.index == 0 and cands[0].score == cands[1].score and cands[2].score is None
    assert cands[2].why == "unusable: not a call"
