"""PC-Agent's recovery rate and manager success, read from trajectories (issue 41; the paper's Table 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.envs.trajectory import TrajectoryRecorder
from agentlab.experiments import pcagent_metrics as pm
from agentlab.metaagent.mentions import ApplicationLexicon
from agentlab.pool import AgentPool

WRITER_CALC = ["libreoffice-writer", "libreoffice-calc"]


@pytest.fixture(scope="module")
def lexicon() -> ApplicationLexicon:
    return ApplicationLexicon.from_pool(AgentPool.from_dir("data/agents"))


def test_a_recovery_is_a_problem_then_an_action_as_intended_in_the_same_subtask() -> None:
    assert pm.recovered([(1, "no effect"), (1, "as intended")]) is True
    assert pm.recovered([(1, "unexpected change"), (1, None), (1, "as intended")]) is True
    assert pm.recovered([(1, "as intended"), (1, "no effect")]) is False  # the problem was never cleared
    assert pm.recovered([(1, "no effect"), (2, "as intended")]) is False  # another subtask's success
    assert pm.recovered([(1, None)]) is None and pm.recovered([]) is None  # nothing judged: no figure


@given(st.lists(st.tuples(st.integers(1, 3), st.sampled_from(["as intended", "no effect", "unexpected change"]))))
def test_no_problem_verdict_means_no_recovery(verdicts: list[tuple[int, str]]) -> None:
    got = pm.recovered(verdicts)
    if not any(v != "as intended" for _, v in verdicts):
        assert got is (None if not verdicts else False)
    else:
        assert got in (True, False)


def test_the_manager_is_judged_on_two_application_tasks_by_the_applications_its_subtasks_name(lexicon) -> None:
    good = ["Open attendees.docx in LibreOffice Writer and read the names", "Select the names",
            "Type them into column A of roster.xlsx in Calc and save"]
    assert pm.plan_domains(good, lexicon) == ["writer", "calc"]
    assert pm.manager_correct(good, WRITER_CALC, lexicon) is True
    assert pm.manager_correct(list(reversed(good)), WRITER_CALC, lexicon) is False  # the wrong order
    assert pm.manager_correct(["Copy the names from attendees.docx into roster.xlsx"], WRITER_CALC, lexicon) is False
    assert pm.manager_correct(["Read the names", "Write them down"], WRITER_CALC, lexicon) is False  # names neither
    assert pm.manager_correct([], WRITER_CALC, lexicon) is False
    assert pm.manager_correct(good, ["libreoffice-calc"], lexicon) is None  # one application: not judged
    assert pm.task_domains(["libreoffice-calc", "libreoffice-calc", "libreoffice-impress"]) == ["calc", "impress"]


def _episode(folder: Path, roles_per_step: list[tuple[int, list[dict]]]) -> Path:
    rec = TrajectoryRecorder(folder, task="t", env="desktop", agent="PCAgent")
    for subtask, roles in roles_per_step:
        rec.record(None, None, info={"roles": roles, "subtask": subtask})
    rec.finish("done")
    return folder


def test_episode_metrics_read_the_recorded_roles_and_a_fallback_plan_is_no_plan(tmp_path, lexicon) -> None:
    plan = ["Read the total in invoice.xlsx (Calc)", "Write it into letter.docx in Writer"]
    ep = _episode(tmp_path / "a", [
        (1, [{"role": "manager", "text": "1. ...", "plan": plan}, {"role": "decision"},
             {"role": "reflection", "verdict": "unexpected change"}]),
        (1, [{"role": "decision"}, {"role": "reflection", "verdict": "as intended"}]),
    ])
    assert pm.episode_metrics(ep, ["libreoffice-calc", "libreoffice-writer"], lexicon) == {
        "recovered": True, "reflection_problems": 1, "manager_ok": True}
    fell_back = _episode(tmp_path / "b", [(1, [{"role": "manager", "plan": ["Copy the total from Calc to Writer"],
                                                "text": "no usable plan (no numbered lines); carrying the instruction out as one subtask"}])])
    assert pm.episode_metrics(fell_back, ["libreoffice-calc", "libreoffice-writer"], lexicon) == {
        "recovered": None, "reflection_problems": 0, "manager_ok": False}
    assert pm.episode_metrics(tmp_path / "missing", WRITER_CALC, lexicon) == {
        "recovered": None, "reflection_problems": None, "manager_ok": None}
    assert pm.rate([True, None, False, True]) == (2, 3)
