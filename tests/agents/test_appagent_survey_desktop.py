"""AppAgent's survey on a desktop: a real LibreOffice Calc under Xvfb opened on a skill
demonstration's start state (never an evaluation task), menus undone with Escape, a crashed or
closed application relaunched afresh, and the "same screen" test of roles and names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentlab.agents import DocStore
from agentlab.agents.appagent.survey import CLOSES, SAME_SCREEN_SLACK, SignedDesktop, Survey, desktop_survey_env
from agentlab.agents.gui_skills import load_demos
from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.actions.desktop import DESKTOP, Click
from agentlab.envs.base import Element, Observation, StepResult
from agentlab.envs.testing.system import missing_system
from agentlab.envs.xdisplay import xvfb_available
from agentlab.errors import ApplicationExitedError


def _el(i: int, role: str, text: str, state: tuple[str, ...] = ()) -> Element:
    return Element(i, (0, 20 * i, 80, 20 * i + 18), role, text, None, True, uid=f"app:{role}:{text}", state=list(state))


class _Desk:
    """TEST DOUBLE of a desktop env: a launch screen of two menus and a button that closes the app."""

    actions = DESKTOP

    def __init__(self) -> None:
        self.menu_open = False
        self.alive = True
        self.launches = 0

    def _obs(self) -> Observation:
        els = [_el(1, "menu", "File"), _el(2, "push button", "Quit"), _el(3, "table cell", "A1")]
        if self.menu_open:
            els += [_el(4, "menu item", "Save As..."), _el(5, "menu item", "Export as PDF..."), _el(6, "menu item", "Close")]
        return Observation(screenshot=None, elements=els)

    def reset(self, task: str = "") -> Observation:
        self.launches += 1
        self.alive, self.menu_open = True, False
        return self._obs()

    def observe(self) -> Observation:
        return self._obs()

    def step(self, action) -> StepResult:  # type: ignore[no-untyped-def]
        if isinstance(action, Click) and action.element == 2:
            self.alive = False
            raise ApplicationExitedError("the application app exited with status 0 during step 1")
        if isinstance(action, Click) and action.element == 1:
            self.menu_open = True
        elif not isinstance(action, Click):  # Escape closes the menu
            self.menu_open = False
        return StepResult(self._obs(), done=False)


def test_a_desktop_survey_documents_a_menu_undoes_it_with_escape_and_relaunches_after_an_exit(tmp_path: Path) -> None:
    desk = _Desk()
    env = SignedDesktop(desk)  # type: ignore[arg-type]
    store = DocStore("app", tmp_path / "docs")
    report = Survey(env, store, depth=1, relaunch=lambda: env.reset()).run()  # type: ignore[arg-type]
    by = {f.label.split('"')[1]: f for f in report.findings}
    assert set(by) == {"File", "Quit"}  # a sheet's cell is content, not a control: not clicked
    assert by["File"].doc == "Shows: Save As..., Export as PDF..., Close"
    assert by["Quit"].effect == "closes" and by["Quit"].doc == CLOSES
    # the menu was closed with Escape (no relaunch); the exit needed one, and the last one leaves the app as found
    assert desk.launches == 3 and report.relaunches == 2
    assert store.get("app:menu:File") is not None and store.useless() == set()  # no useless list on a desktop


def test_the_same_screen_test_ignores_states_and_a_few_controls_appearing() -> None:
    env = SignedDesktop(_Desk())  # type: ignore[arg-type]
    base = [_el(1, "menu", "File"), _el(2, "push button", "Cut")]

    def sig(els: list[Element]) -> str:
        return str(env._signed(Observation(screenshot=None, elements=els)).info["signature"])

    first = sig(base)
    assert sig([_el(5, "menu", "File", ("focused",)), _el(9, "push button", "Cut")]) == first  # numbers, states
    assert sig([*base, _el(3, "push button", "Paste")]) == first  # a Paste enabled by the cut
    bigger = [*base, *(_el(10 + i, "menu item", f"Item {i}") for i in range(SAME_SCREEN_SLACK + 1))]
    assert sig(bigger) != first  # a menu's items are a change


def test_the_surveys_own_folder_never_reaches_a_document(tmp_path: Path) -> None:
    env = SignedDesktop(_Desk(), tmp_path)  # type: ignore[arg-type]
    shown = env._signed(Observation(screenshot=None, elements=[_el(1, "text", f"{tmp_path}/launch-3/profile/")]))
    assert shown.elements[0].text == "<files>/profile/"


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_survey_of_calc_documents_its_menus_on_the_real_application(tmp_path: Path) -> None:
    reason = xvfb_available() or pyatspi_available()
    if reason or not shutil.which("soffice"):
        missing_system(f"no desktop with LibreOffice here: {reason or 'soffice not installed'}")
    demo = next(d for d in load_demos() if d.app == "calc" and d.skill == "set_cell")
    store = DocStore("calc", tmp_path / "docs")
    with desktop_survey_env(demo.task, tmp_path / "run") as (env, relaunch):
        report = Survey(env, store, depth=1, relaunch=relaunch, max_actions=4).run()
    docs = {f.label.split('"')[1]: f.doc for f in report.findings}
    assert list(docs)[:2] == ["File", "Edit"]
    assert "Save As..." in docs["File"] and "Find and Replace..." in docs["Edit"]
    assert report.relaunches == 1  # Escape closed each menu; only the closing relaunch
    assert (store.get("soffice:menu:File") or pytest.fail("File was not documented")).sources["click"] == "explore/survey"


def test_a_bad_start_task_is_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from agentlab.cli import main

    bad = tmp_path / "demo.json"
    bad.write_text('{"skill": "x", "task": {"id": 3}}')
    for args, line in [(["--env", "desktop", "--start", str(bad), "--app", "calc"], "not a skill demonstration"),
                       (["--env", "desktop", "--start", str(tmp_path / "none.json"), "--app", "calc"], "cannot read the start task"),
                       (["--env", "android", "--fake", "--start", str(bad)], "give one of them")]:
        with pytest.raises(SystemExit) as exc:
            main(["agent", "survey", *args])
        err = capsys.readouterr().err.strip()
        assert exc.value.code != 0 and len(err.splitlines()) == 1 and line in err, err
