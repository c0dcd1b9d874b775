"""COLA's per-action review: the reviewer judges each action as it is taken, and a rejected
action ends the step at once (agentlab.teams.cola.action_review)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.envs.actions.workspace import RunProgram
from agentlab.envs.base import Env, Observation, StepResult
from agentlab.errors import ActionRejected
from agentlab.run.episode import run_task
from agentlab.teams.cola.action_review import ActionView, ReviewedEnv
from agentlab.teams.cola.reviewer import Review
from agentlab.viz.team import team_messages

from .conftest import TeamScript
from .test_cola_team import ONE_STEP, SOLVE, TASK, WRONG, YES, _options, _team_roles

ACTION_NO = "Verdict: no\nReason: notes.txt is not the report the subtask asks for"
ACTION_YES = "Verdict: yes\nReason: it writes report.xlsx"


class _Folder(Env):
    """A stand-in env: each action writes the file its code names under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stepped = 0

    @property
    def actions(self):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    def reset(self, task: str | None = None) -> Observation:
        return Observation(None, [])

    def step(self, action) -> StepResult:  # type: ignore[no-untyped-def]
        self.stepped += 1
        (self.root / action.code).write_text("x")
        return StepResult(Observation(None, [], text="ran"), False, info={"returncode": 0, "stdout": f"wrote {action.code}"})


def _judge(verdicts: list[str], seen: list[ActionView]):  # type: ignore[no-untyped-def]
    def judge(view: ActionView) -> Review:
        seen.append(view)
        return Review(verdicts.pop(0), f"verdict on {view.action}", "model")  # type: ignore[arg-type]
    return judge


def test_a_rejected_action_raises_after_it_ran_and_every_verdict_is_kept(tmp_path) -> None:
    seen: list[ActionView] = []
    inner = _Folder(tmp_path)
    env = ReviewedEnv(inner, _judge(["yes", "unsure", "no"], seen), subtask="write a.txt", agent="DataAgent", root=tmp_path)
    env.step(RunProgram("python", "a.txt"))
    env.step(RunProgram("python", "b.txt"))  # unsure: the agent goes on
    with pytest.raises(ActionRejected, match=r"rejected action 3 .*c\.txt.*: verdict on"):
        env.step(RunProgram("python", "c.txt"))
    assert inner.stepped == 3 and (tmp_path / "c.txt").exists()  # the rejected action had run
    assert [r.verdict for r in env.reviews] == ["yes", "unsure", "no"] and [r.index for r in env.reviews] == [1, 2, 3]
    assert seen[1].changed == ("b.txt",) and "wrote b.txt" in seen[1].report and seen[1].subtask == "write a.txt"
    assert env.root == tmp_path  # anything else is the inner env's


def test_the_team_stops_a_wrong_action_at_once_and_retries_with_the_reviewers_reason(tmp_path, pool) -> None:
    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG, SOLVE], reviewer=[ACTION_NO, ACTION_YES, YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(review_actions=True))
    assert row["error"] is None and row["success"] is True
    assert (row["action_reviews"], row["actions_rejected"], row["retries"], row["reviews"]) == (2, 1, 1, 2)
    first_action = llm.prompts["reviewer"][0][-1].content
    assert first_action.startswith("You review one action") and "notes.txt" in first_action and "Its action number 1" in first_action
    assert "not the report the subtask asks for" in llm.first_user_text("agent", 1)  # the retry was told why
    reviewer = [m for m in _team_roles(tmp_path / row["trajectory"]) if m["role"] == "reviewer"]
    step_reviews = [m for m in reviewer if "action" not in m]
    assert [m["by"] for m in step_reviews] == ["check", "model"]  # the rejected step needed no step-review call
    assert "rejected action 1" in step_reviews[0]["text"]
    assert [(m["action"], m["verdict"]) for m in reviewer if "action" in m] == [(1, "no"), (1, "yes")]  # shown per attempt
    shown = [m.text for m in team_messages(tmp_path / row["trajectory"]) if m.role == "reviewer"]
    assert sum(t.startswith("action 1 (") for t in shown) == 2  # the notebook's table of team messages has them


def test_without_review_actions_no_action_is_reviewed(tmp_path, pool) -> None:
    llm = TeamScript(planner=[ONE_STEP], agent=[SOLVE], reviewer=[YES])  # one reply only: an action review would run out
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    assert row["success"] is True and (row["action_reviews"], row["actions_rejected"]) == (0, 0)
