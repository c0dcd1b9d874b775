"""The PC-Eval analog (data/tasks/pc-*.json): desktop tasks that touch two applications or files.

Without a GUI, every task fails on its start state, passes once a correct solution (written here,
independently of the task file's reference solution, as the files a person would leave) has
been applied, and still fails after a plausible slip (the wrong row, the wrong order, only half
the job). The desktop opener gives each application of a task its own file; under Xvfb a
two-application task opens both windows in one LibreOffice process, the UNO pipe reaches both
documents, the windows are tiled side by side, and ``collect()`` leaves the saved files and no
process behind; a scripted GUI agent (the ``gui`` runner) carries one task out across both
windows; and the evaluators read files as LibreOffice itself saves them.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlab.envs.testing.system import missing_system

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop_task import LAUNCHERS, AppStart, DesktopTaskEnv, app_starts, open_desktop_task
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.xdisplay import SYSTEM_PYTHON, xvfb_available
from agentlab.run.episode import ExecOptions, run_task
from agentlab.errors import EnvironmentUnavailableError
from agentlab.tasks.spec import MULTI_APP_DOMAIN, ExecTask, load_task, load_tasks, tasks_dir
from agentlab.llm.base import ChatMessage
from agentlab.pool import AgentPool

PC_TASKS = [t for t in load_tasks() if t.id.startswith("pc-")]


def _task(task_id: str) -> ExecTask:
    return next(t for t in PC_TASKS if t.id == task_id)


# -- editing the files as a person's applications would leave them --------------------------------
def _set_cells(path: Path, sheet: str, values: dict[str, Any], *, rename: str | None = None) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(path)
    ws = wb[sheet]
    for ref, value in values.items():
        ws[ref] = value
    if rename is not None:
        ws.title = rename
    wb.save(path)


def _docx_lines(path: Path, lines: list[str]) -> None:
    """The document's paragraphs become ``lines`` (the existing paragraphs keep their styles)."""
    import docx

    d = docx.Document(str(path))
    paras = list(d.paragraphs)
    for para, text in zip(paras, lines, strict=False):
        for run in para.runs[1:]:
            run.text = ""
        para.runs[0].text = text
    for para in paras[len(lines):]:
        para._p.getparent().remove(para._p)
    for text in lines[len(paras):]:
        d.add_paragraph(text)
    d.save(str(path))


def _docx_replace(path: Path, old: str, new: str) -> None:
    import docx

    d = docx.Document(str(path))
    _docx_lines(path, [p.text.replace(old, new) for p in d.paragraphs])


def _slide_lines(path: Path, index: int, *, title: str | None = None, lines: list[str] | None = None) -> None:
    import pptx

    prs = pptx.Presentation(str(path))
    slide = prs.slides[index]
    if title is not None:
        slide.shapes.title.text = title
    if lines is not None:
        body = slide.placeholders[1].text_frame
        body.text = lines[0]
        for line in lines[1:]:
            body.add_paragraph().text = line
    prs.save(str(path))


NAMES = ["Amara Singh", "Tomasz Nowak", "Keiko Tanaka", "Diego Ramos"]
MEMO = ["Memo to the warehouse", "These orders are late and need a call to the customer today:"]
PRICES = ["Basic: 9 EUR per month", "Team: 29 EUR per month", "Enterprise: 99 EUR per month"]
ACTIONS = [("Priya", "book the venue"), ("Marco", "send the final agenda"), ("Ines", "order the name badges")]

Edit = Callable[[Path], None]

#: task id -> (a correct end state, a plausible slip that must not pass)
SOLUTIONS: dict[str, tuple[Edit, Edit]] = {
    "pc-invoice-total-to-letter": (
        lambda r: _docx_replace(r / "letter.docx", "[TOTAL]", "1950"),
        lambda r: _docx_replace(r / "letter.docx", "[TOTAL]", "1650"),  # one row left out
    ),
    "pc-attendees-to-roster": (
        lambda r: _set_cells(r / "roster.xlsx", "Roster", {f"A{i}": n for i, n in enumerate(NAMES, start=2)}),
        lambda r: _set_cells(r / "roster.xlsx", "Roster", {f"A{i}": n for i, n in enumerate(sorted(NAMES), start=2)}),
    ),
    "pc-report-heading-to-slide": (
        lambda r: _slide_lines(r / "deck.pptx", 0, title="Northwind expansion: results for Q3 2025"),
        lambda r: _slide_lines(r / "deck.pptx", 0, title="Northwind expansion"),
    ),
    "pc-regional-sales-summary": (
        lambda r: _set_cells(r / "summary.xlsx", "Summary", {"B2": 12750, "B3": 15275}),
        lambda r: _set_cells(r / "summary.xlsx", "Summary", {"B2": 15275, "B3": 12750}),  # regions swapped
    ),
    "pc-meeting-actions-to-sheet": (
        lambda r: _set_cells(r / "actions.xlsx", "Actions",
                             {**{f"A{i}": o for i, (o, _) in enumerate(ACTIONS, 2)},
                              **{f"B{i}": t for i, (_, t) in enumerate(ACTIONS, 2)}}),
        lambda r: _set_cells(r / "actions.xlsx", "Actions", {f"A{i}": f"{o} - {t}" for i, (o, t) in enumerate(ACTIONS, 2)}),
    ),
    "pc-prices-into-slide": (
        lambda r: _slide_lines(r / "pricing.pptx", 1, lines=PRICES),
        lambda r: _slide_lines(r / "pricing.pptx", 1, lines=[PRICES[0], "Team: ? EUR per month", PRICES[2]]),
    ),
    "pc-sheet-named-from-brief": (
        lambda r: _set_cells(r / "budget.xlsx", "Sheet1", {}, rename="ORION-7"),
        lambda r: _set_cells(r / "budget.xlsx", "Sheet1", {}, rename="Project code ORION-7"),
    ),
    "pc-slide-titles-to-agenda": (
        lambda r: _docx_lines(r / "agenda.docx", ["Team day agenda", "Roadmap review", "Budget", "Hiring plan"]),
        lambda r: _docx_lines(r / "agenda.docx", ["Team day agenda", "Team day 2025", "Roadmap review", "Budget",
                                                  "Hiring plan"]),  # the title slide too
    ),
    "pc-contact-email-to-letter": (
        lambda r: _docx_replace(r / "letter.docx", "[EMAIL]", "jonas.berg@example.net"),
        lambda r: _docx_replace(r / "letter.docx", "[EMAIL]", "jb@example.com"),  # Jonas Bergmann's
    ),
    "pc-late-orders-to-memo": (
        lambda r: _docx_lines(r / "memo.docx", [*MEMO, "A-1002", "A-1004", "Thanks, Sam"]),
        lambda r: _docx_lines(r / "memo.docx", [*MEMO, "A-1002, A-1004", "Thanks, Sam"]),  # one line for both
    ),
    "pc-headcount-from-slide": (
        lambda r: _set_cells(r / "staffing.xlsx", "Staff", {"B2": 14, "B3": 6, "B4": 4}),
        lambda r: _set_cells(r / "staffing.xlsx", "Staff", {"B2": 4, "B3": 14, "B4": 6}),  # in the slide's order
    ),
    "pc-exchange-rate-prices": (
        lambda r: _set_cells(r / "prices.xlsx", "Prices", {"C2": 43.2, "C3": 204.66, "C4": 70.47}),
        lambda r: _set_cells(r / "prices.xlsx", "Prices", {"C2": 34.0, "C3": 161.08, "C4": 55.46}),  # the GBP rate
    ),
}


# -- the task files ------------------------------------------------------------------------------
def test_there_are_at_least_ten_multi_app_desktop_tasks() -> None:
    assert len(PC_TASKS) >= 10 and set(SOLUTIONS) == {t.id for t in PC_TASKS}
    for t in PC_TASKS:
        assert (t.domain, t.env) == (MULTI_APP_DOMAIN, "desktop"), t.id
        assert all(a in LAUNCHERS for a in t.apps), t.id
        files = [s["path"] for s in t.setup]
        assert len(files) >= 2 and all(f in t.instruction for f in files), f"{t.id}: two files, named in the instruction"
    two_apps = [t for t in PC_TASKS if len(set(t.apps)) >= 2]
    assert len(two_apps) >= 10
    assert {frozenset(t.apps) for t in two_apps} == {frozenset(p) for p in (
        ("libreoffice-calc", "libreoffice-writer"), ("libreoffice-writer", "libreoffice-impress"),
        ("libreoffice-calc", "libreoffice-impress"))}


@pytest.mark.parametrize("task", PC_TASKS, ids=[t.id for t in PC_TASKS])
def test_start_fails_a_correct_end_state_passes_and_a_slip_fails(task: ExecTask, tmp_path: Path) -> None:
    solve, slip = SOLUTIONS[task.id]
    for case, edit, passes in (("solved", solve, True), ("slip", slip, False)):
        root = tmp_path / case
        task.prepare(root)
        before = task.evaluate(root)
        assert before.score == 0.0, before.explain()
        edit(root)
        after = task.evaluate(root)
        assert after.success is passes, f"{case}: {after.explain()}"


#: LibreOffice's export filter for each output type (what "keep the format" saves)
FILTERS = {".xlsx": "xlsx:Calc MS Excel 2007 XML", ".docx": "docx:MS Word 2007 XML",
           ".pptx": "pptx:Impress MS PowerPoint 2007 XML"}


def _resave_with_libreoffice(files: list[Path], profile: Path) -> None:
    """Each file opened and saved again by headless LibreOffice, in the same format."""
    out = profile.parent / "resaved"
    for f in files:
        shutil.rmtree(out, ignore_errors=True)
        done = subprocess.run(["soffice", f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless",
                               "--convert-to", FILTERS[f.suffix], "--outdir", str(out), str(f)],
                              capture_output=True, text=True, timeout=180)
        assert (out / f.name).is_file(), done.stderr
        shutil.copy(out / f.name, f)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_evaluators_read_what_libreoffice_saves(tmp_path: Path) -> None:
    """The start and the solved files, each re-saved by LibreOffice itself: still 0 and 1."""
    if not shutil.which("soffice"):
        missing_system("LibreOffice is not installed (apt-get install libreoffice-calc libreoffice-writer libreoffice-impress)")
    for task in PC_TASKS:
        for case, solved in (("start", False), ("solved", True)):
            root = tmp_path / task.id / case
            task.prepare(root)
            if solved:
                SOLUTIONS[task.id][0](root)
            _resave_with_libreoffice([root / o for o in task.outputs], tmp_path / "profile")
            result = task.evaluate(root)
            assert result.success is solved and (solved or result.score == 0.0), f"{task.id} {case}: {result.explain()}"


# -- which application opens which file ------------------------------------------------------------
@pytest.mark.parametrize("task", PC_TASKS, ids=[t.id for t in PC_TASKS])
def test_each_application_opens_its_own_file(task: ExecTask, tmp_path: Path) -> None:
    task.prepare(tmp_path)
    starts = app_starts(task, tmp_path)
    assert [s.name for s in starts] == list(dict.fromkeys(task.apps))
    assert all(s.file is not None and s.file.is_file() for s in starts)
    assert len({s.file for s in starts}) == len(starts)
    if len(starts) > 1:
        assert all(s.file is not None and s.file.suffix in s.launcher.extensions for s in starts)
    output = tmp_path / task.outputs[0]
    assert output in {s.file for s in starts}, "the file to change is open at the start"


def test_a_task_with_one_application_opens_what_it_always_did(tmp_path: Path) -> None:
    calc = load_task(tasks_dir() / "calc-enter-total.json")
    calc.prepare(tmp_path)
    assert app_starts(calc, tmp_path) == [AppStart("libreoffice-calc", LAUNCHERS["libreoffice-calc"], tmp_path / "budget.xlsx")]
    # one application, whatever the file type (first output, else first setup file), as before
    odd = calc.model_copy(update={"apps": ["libreoffice-writer", "python"]})
    assert app_starts(odd, tmp_path) == [AppStart("libreoffice-writer", LAUNCHERS["libreoffice-writer"], tmp_path / "budget.xlsx")]
    # the same application twice opens one window
    twice = calc.model_copy(update={"apps": ["libreoffice-calc", "libreoffice-calc"]})
    assert len(app_starts(twice, tmp_path)) == 1


def test_a_second_application_without_a_file_of_its_type_is_a_harness_error(tmp_path: Path) -> None:
    calc = load_task(tasks_dir() / "calc-enter-total.json")
    both = calc.model_copy(update={"apps": ["libreoffice-calc", "libreoffice-impress"]})
    both.prepare(tmp_path)
    with pytest.raises(EnvironmentUnavailableError, match="no start file is left for libreoffice-impress .it opens .pptx"):
        app_starts(both, tmp_path)


def test_every_application_must_be_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = dataclasses.replace(LAUNCHERS["libreoffice-impress"], program="soffice-impress-not-here")
    monkeypatch.setitem(LAUNCHERS, "libreoffice-impress", gone)
    with pytest.raises(EnvironmentUnavailableError, match="libreoffice-impress is not installed here"):
        open_desktop_task(_task("pc-report-heading-to-slide"), tmp_path, TaskEnvOptions())


# -- both windows under Xvfb ---------------------------------------------------------------------------
UNO_FILL = textwrap.dedent("""
    import sys, uno
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    ctx = resolver.resolve(sys.argv[1])
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    docs = {d.getURL().rsplit("/", 1)[-1]: d for d in desktop.getComponents()}
    print(sorted(docs))
    letter = docs["letter.docx"]
    search = letter.createReplaceDescriptor()
    search.SearchString = "[TOTAL]"
    search.ReplaceString = "1950"
    letter.replaceAll(search)
    letter.store()
    docs["invoice.xlsx"].Sheets.getByIndex(0).getCellRangeByName("C1").setString("checked")
    docs["invoice.xlsx"].store()
""")


def _episode_processes(folder: Path) -> list[str]:
    return subprocess.run(["pgrep", "-f", str(folder)], capture_output=True, text=True).stdout.split()


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_two_application_task_opens_both_windows_in_one_libreoffice(tmp_path: Path) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if not shutil.which("soffice"):
        missing_system("LibreOffice is not installed (apt-get install libreoffice-calc libreoffice-writer libreoffice-gtk3)")
    task = _task("pc-invoice-total-to-letter")
    episode = tmp_path / "episode"
    opened = open_desktop_task(task, episode, TaskEnvOptions(app_start_timeout_s=240))
    try:
        assert isinstance(opened, DesktopTaskEnv)
        names = opened.display.window_names()
        assert any("invoice.xlsx" in n for n in names) and any("letter.docx" in n for n in names), names
        first, second = opened.apps
        assert isinstance(first.args, list) and isinstance(second.args, list)  # the argv each was launched with
        assert any(str(a).startswith("--accept=pipe") for a in first.args)
        assert not any(str(a).startswith("--accept") for a in second.args)
        assert second.wait(timeout=30) == 0  # it handed letter.docx to the running LibreOffice and left
        # tiled side by side in the listed order, so every listed element is where it is drawn
        elements = opened.env.observe().elements
        sheet = next(e for e in elements if e.role == "table")
        letter = next(e for e in elements if e.role == "paragraph" and "[TOTAL]" in e.text)
        half = opened.display.width // 2
        assert sheet.bbox[2] <= half <= letter.bbox[0], (sheet.bbox, letter.bbox)
        uno_url = opened.env.uno_url  # type: ignore[attr-defined]
        assert uno_url is not None
        has_uno = Path(SYSTEM_PYTHON).exists() and subprocess.run([SYSTEM_PYTHON, "-c", "import uno"]).returncode == 0
        if not has_uno:
            print(f"\nUNO part skipped: {SYSTEM_PYTHON} cannot import uno (apt-get install python3-uno)")
        else:
            # the one UNO pipe reaches both documents; what they store is what the evaluator reads
            done = subprocess.run([SYSTEM_PYTHON, "-c", UNO_FILL, uno_url], capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            assert "'invoice.xlsx', 'letter.docx'" in done.stdout
        opened.collect()
        assert not _episode_processes(episode), "a LibreOffice process outlived collect()"
        assert not list(opened.root.glob(".~lock*"))
        if has_uno:
            assert task.evaluate(opened.root).success
            from agentlab.judge.getters import FinalState, xlsx_cell

            assert xlsx_cell(FinalState(opened.root), "invoice.xlsx", "C1") == "checked"
    finally:
        opened.close()
    assert not _episode_processes(episode)


# -- who carries them out ---------------------------------------------------------------------------
def test_ground_truth_sends_them_to_a_general_gui_agent(pool: AgentPool) -> None:
    """No agent's domain is ``multi_apps``: ground truth falls back to the pool's general GUI
    agent (Agent S2 / PC-Agent once enrolled; a stand-in general GUI document here)."""
    from agentlab.run.episode import gt_agent

    calc = pool.get("CalcAgent")
    generalist = dataclasses.replace(calc, name="DeskGeneralist", domain="general")
    for task in PC_TASKS:
        assert gt_agent(task, AgentPool([calc, generalist, pool.get("WriterAgent")])) == "DeskGeneralist"


# -- a GUI agent across both windows -----------------------------------------------------------------
def _screen(messages: list[ChatMessage]) -> str:
    """The element listing of the GUI runner's prompt."""
    return messages[-1].content.split("Elements on the current screen", 1)[1].split("Actions you can take", 1)[0]


def _element(screen: str, pattern: str) -> int | None:
    m = re.search(r"^\[(\d+)\] " + pattern, screen, re.M)
    return int(m.group(1)) if m else None


def _reply(action: str, summary: str) -> str:
    return f"Observation: a spreadsheet and a letter.\nThought: next step.\nAction: {action}\nSummary: {summary}"


class LetterPolicy:
    """Replies computed from the prompt, as a model reading both windows would: the invoice's
    amounts are on the left, the letter on the right; put their sum in place of [TOTAL], save
    as Word."""

    def __init__(self) -> None:
        self.stage = 0

    def __call__(self, messages: list[ChatMessage]) -> str:
        screen = _screen(messages)
        if self.stage < 2:
            para = _element(screen, r'paragraph "The amount due is \[TOTAL\]')
            assert para is not None, f"the letter's paragraph is not listed:\n{screen}"
            self.stage += 1
            if self.stage == 1:
                return _reply(f"click({para})", "clicked into the letter")
            return _reply(f'select_text("[TOTAL]", {para})', "selected the placeholder")
        if self.stage == 2:
            self.stage = 3
            return _reply('type("1950")', "typed the total")
        if self.stage == 3:
            self.stage = 4
            return _reply('hotkey("ctrl", "s")', "saving")
        keep = _element(screen, r'push button "Use Word')
        if self.stage == 4 and keep is not None:
            self.stage = 5
            return _reply(f"click({keep})", "kept the Word format")
        if self.stage == 4:
            return _reply('hotkey("shift")', "waiting for the save dialog")
        return _reply("FINISH", "done")


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_gui_agent_carries_a_two_application_task_out(tmp_path: Path, pool: AgentPool, scripted) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason:
        missing_system(f"no desktop here: {reason}")
    if not shutil.which("soffice"):
        missing_system("LibreOffice is not installed (apt-get install libreoffice-calc libreoffice-writer libreoffice-gtk3)")
    policy = LetterPolicy()
    row = run_task(_task("pc-invoice-total-to-letter"), pool=pool, llm=scripted([policy] * 14), out_dir=tmp_path,
                   agent="WriterAgent", options=ExecOptions(max_steps=12, runner_options={"route": "gui", "actions": "raw"},
                                                            envs=TaskEnvOptions(app_start_timeout_s=240)))
    assert row["error"] is None, row["error"]
    assert policy.stage == 5, policy.stage
    assert (row["success"], row["score"], row["status"]) == (True, 1.0, "done")
    assert not _episode_processes(tmp_path / row["trajectory"])
