"""Issue #37, case 1: COLA's rollback never writes through what a failed step planted.

Two subtasks: step 1 writes ``sub/note.txt``; step 2 renames ``sub`` and plants ``sub`` as a
symbolic link to a folder outside, then fails. The retry's rollback restores the state before
step 2 -- before the fix it wrote ``note.txt`` into the outside folder. With one subtask the
same happened with the task's own setup file (a nested path). Model replies are scripted per
role (the team's test double); the programs run in the real sandbox.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentlab.run.episode import ExecOptions, run_task
from agentlab.llm.base import ChatMessage
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.teams.cola.options import ColaOptions

from .conftest import TeamScript, py

YES = "Verdict: yes\nReason: the step did what it was asked"
TWO_STEPS = "1. Write a note into sub/note.txt\n2. Tidy the sub folder"
ONE_STEP = "1. Add the bookmark"


def _options() -> ExecOptions:
    return ExecOptions(team="cola", max_steps=3, team_settings=ColaOptions())  # type: ignore[arg-type]


def _outside(tmp_path: Path) -> tuple[Path, dict[str, tuple[int, bytes | None]]]:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "keep.txt").write_text("the outside folder's own file")
    return out, _state(out)


def _state(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    return {p.relative_to(folder).as_posix(): (os.lstat(p).st_mtime_ns, p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))} | {".": (os.lstat(folder).st_mtime_ns, None)}


def _plant(target: Path, folder: str) -> str:
    """The hostile step: rename ``folder`` away, plant it as a link to ``target``, give up."""
    return py(f"import os\nos.rename({folder!r}, {folder + '-moved'!r})\nos.symlink({str(target)!r}, {folder!r})", end="FAIL")


def test_a_retry_after_a_planted_folder_link_restores_inside_and_writes_nothing_outside(tmp_path, pool) -> None:
    task = load_task(tasks_dir() / "csv-sales-summary.json")
    out, before = _outside(tmp_path)
    seen: dict[str, object] = {}

    def after_rollback(messages: list[ChatMessage]) -> str:
        ws = tmp_path / "episodes" / task.id / "workspace"
        seen["sub"] = "link" if (ws / "sub").is_symlink() else "dir" if (ws / "sub").is_dir() else "missing"
        seen["note"] = (ws / "sub" / "note.txt").read_text() if seen["sub"] == "dir" else None
        seen["outside"] = _state(out)
        return py("print('tidied')")

    write_note = py("import os\nos.makedirs('sub', exist_ok=True)\nopen('sub/note.txt', 'w').write('mine')")
    llm = TeamScript(planner=[TWO_STEPS], agent=[write_note, _plant(out, "sub"), after_rollback], reviewer=[YES, YES])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    assert row["retries"] == 1, row
    assert _state(out) == before and not (out / "note.txt").exists(), "the rollback wrote into the linked folder"
    assert seen == {"sub": "dir", "note": "mine", "outside": before}  # restored inside, as it was before step 2
    assert row["status"] != "error" and row["error"] is None, row


def test_one_subtask_a_linked_setup_folder_is_restored_inside(tmp_path, pool) -> None:
    """The snapshot before the only step holds the task's setup file, a nested path
    (``.config/chromium/Default/Bookmarks``): the rollback must not write it into a planted link."""
    task = load_task(tasks_dir() / "chrome-add-bookmark.json")
    out, before = _outside(tmp_path)
    assert task.reference_solution is not None
    ws = tmp_path / "episodes" / task.id / "workspace"
    seen: dict[str, bool] = {}

    def solve(messages: list[ChatMessage]) -> str:
        seen["restored"] = (ws / ".config").is_dir() and not (ws / ".config").is_symlink() and (
            ws / ".config" / "chromium" / "Default" / "Bookmarks").is_file()
        assert task.reference_solution is not None
        return py(task.reference_solution.code)

    llm = TeamScript(planner=[ONE_STEP], agent=[_plant(out, ".config"), solve], reviewer=[YES])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    assert _state(out) == before and not (out / "chromium").exists(), "the rollback wrote the setup file outside"
    assert seen == {"restored": True}
    assert row["retries"] == 1 and row["success"] is True, row
