"""SubtaskAcc judged on the end state: each annotated subtask by its own evaluator checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlab.errors import DataError
from agentlab.judge.evaluators import CheckOutcome, EvalResult
from agentlab.llm.roles import Backends
from agentlab.pool import AgentPool
from agentlab.run import RunSpec, execute
from agentlab.run.episode import ExecOptions
from agentlab.run.worker import EpisodeRecipe, Worker
from agentlab.tasks.spec import SubtaskSpec, judge_subtasks, load_task, subtask_problems, tasks_dir

from ..episode.conftest import ScriptedBackend, py

TASKS = [load_task(p) for p in sorted(tasks_dir().glob("*.json"))]


def test_every_gold_plan_is_annotated_step_for_step_and_covers_every_check_once() -> None:
    planned = [t for t in TASKS if t.plan]
    assert len(planned) >= 40
    for t in planned:
        assert t.subtasks is not None, t.id
        assert [(s.agent, s.subtask) for s in t.subtasks] == [(p.agent, p.subtask) for p in t.plan or []], t.id
        owned = sorted(c for s in t.subtasks for c in s.checks)
        assert owned == list(range(len(t.evaluator.funcs))), t.id
        assert not subtask_problems(t.subtasks, len(t.evaluator.funcs))


def test_bad_annotations_are_one_line_each() -> None:
    subs = [SubtaskSpec(subtask="a", checks=[0, 3]), SubtaskSpec(subtask="b", checks=[0])]
    assert subtask_problems(subs, 2) == ["subtasks[0].checks: 3 is not a check of the evaluator (0-1)",
                                         "subtasks[1].checks: check 0 already belongs to subtasks[0]"]
    assert subtask_problems([], 2) == ["subtasks: an empty list; leave 'subtasks' out when none are annotated"]


def test_a_task_file_with_a_bad_subtask_says_where(tmp_path: Path) -> None:
    source = next(t for t in TASKS if t.plan)
    assert source.source is not None
    data = json.loads(Path(source.source).read_text(encoding="utf-8"))
    data["subtasks"][1]["checks"] = [99]
    bad = tmp_path / f"{source.id}.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_task(bad)
    assert "subtasks[1].checks: 99 is not a check of the evaluator" in str(err.value)
    assert "\n" not in err.value.message


def test_a_subtask_is_done_only_when_all_its_checks_score_full_marks() -> None:
    verdict = EvalResult(0.0, [CheckOutcome("m", 1.0, 1, 1), CheckOutcome("m", 1.0, 1, 1), CheckOutcome("m", 0.5, 1, 2)])
    subs = [SubtaskSpec(subtask="first", agent="A", checks=[0, 1]), SubtaskSpec(subtask="second", checks=[2]),
            SubtaskSpec(subtask="missing", checks=[7])]
    judged = judge_subtasks(subs, verdict)
    assert [j["success"] for j in judged] == [True, False, False]
    assert judged[0] == {"subtask": "first", "agent": "A", "checks": [0, 1], "success": True}


def test_a_gold_plan_run_where_only_the_first_step_works_has_subtask_acc_one_half(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Scripted replies (a test double, not a model): step 1's agent answers with the program that
    solves its subtask, step 2's with one that does nothing. The end state then passes step 1's
    checks only: the row is not a success, and half of its annotated subtasks are judged done."""
    task = next(t for t in TASKS if t.id == "multi-calc-csv-to-xlsx-pptx-agenda-slide")
    assert task.plan is not None and task.subtasks is not None
    first = next(t for t in TASKS if t.instruction.strip() == task.plan[0].subtask.strip())
    assert first.reference_solution is not None
    solution = first.reference_solution.code

    def reply(messages) -> str:  # type: ignore[no-untyped-def]
        text = "\n".join(str(m.content) for m in messages)
        return py(solution, "DONE") if task.plan[0].subtask[:60] in text else py("print('nothing to do')", "DONE")

    llm = ScriptedBackend([reply] * 12)
    summary = execute(RunSpec(EpisodeRecipe(tmp_path / "run", ExecOptions(max_steps=1))), [task],
                      worker=Worker(AgentPool.from_dir(None), Backends(llm)), progress=False)
    row = summary.rows[0]
    assert row["success"] is False
    assert [s["success"] for s in row["judged_subtasks"]] == [True, False]
    assert row["subtask_acc"] == 0.5 and summary.subtask_counts == (1, 2)
    prompts = "\n".join(str(m.content) for p in llm.prompts for m in p)
    assert "judged_subtasks" not in prompts and '"checks"' not in prompts  # the annotation never reaches an agent
