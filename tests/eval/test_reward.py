"""AppAgent's Reward on this workbench: the mean of the evaluator's check scores on the final state."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentlab.eval.reward import mean_reward, reward
from agentlab.judge.evaluators import EvalResult


def _row(scores: list[float], success: bool = False) -> dict:
    return {"success": success, "verdict": {"score": 0.0, "success": success,
                                            "checks": [{"metric": "exact_match", "score": s} for s in scores]}}


def test_a_partly_reached_objective_earns_part_of_the_reward() -> None:
    assert reward(_row([1.0, 1.0, 0.0])) == 2 / 3  # two of three checks met: 0 ExecutionAcc, 0.67 reward
    assert reward(_row([1.0], success=True)) == 1.0
    assert reward(_row([0.0])) == 0.0
    assert reward({"success": False, "verdict": {"score": 0.4, "checks": []}}) == 0.4  # no checks listed: the score
    assert reward({"success": False, "error": "harness error"}) is None  # never judged: no reward
    assert mean_reward([_row([1.0, 0.0]), {"verdict": None}, _row([1.0], success=True)]) == 0.75
    assert mean_reward([]) is None


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_the_reward_is_between_the_failure_and_the_success_it_sits_between(scores: list[float]) -> None:
    got = reward(_row(scores))
    assert got is not None and 0.0 <= got <= 1.0
    assert (got == 1.0) == all(s == 1.0 for s in scores)


def test_it_reads_the_verdict_a_row_gets_from_the_evaluator() -> None:
    """The row's ``verdict`` is :meth:`EvalResult.record`'s: the reward reads that very shape."""
    from agentlab.judge.evaluators import CheckOutcome

    verdict = EvalResult(0.0, [CheckOutcome("exact_match", 1.0, 1, 1), CheckOutcome("exact_match", 0.0, 2, 3)])
    assert reward({"success": verdict.success, "verdict": verdict.as_record()}) == 0.5
