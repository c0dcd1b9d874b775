"""Continuing a journal under changed settings (``--revise``), withdrawing rows (``remove``), and
the leakage filter's second source (the project's routing set v2)."""

from __future__ import annotations

import pytest

from agentlab.errors import CheckpointError
from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds
from agentlab.selfinstruct.store import Journal, narrowed_bands

from .conftest import ScriptedBackend
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())


def _th(tau1: float, tau2: float, **per: tuple[float, float]) -> dict:
    return {"tau1": tau1, "tau2": tau2, "per_domain": {d: {"tau1": a, "tau2": b} for d, (a, b) in per.items()}}


BASE = {"thresholds": _th(0.1, 0.5, gmail=(0.2, 0.4)), "prompt_sha": "p1", "prompt_style": "completion",
        "generator": "g", "seeds": {"A": "a1"}}


def test_revise_records_changed_settings_and_refuses_narrowing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = Journal(tmp_path)
    j.start(BASE, fresh=False)  # written before the quality field existed: reads as quality off
    new = {**BASE, "prompt_sha": "p2", "quality": True, "thresholds": _th(0.1, 0.5, gmail=(0.1, 0.55))}
    with pytest.raises(CheckpointError, match="--revise"):
        j.start(new, fresh=False)
    j.start(new, fresh=False, revise=True)
    rev = [r for r in j.records() if r.get("type") == "revision"]
    assert len(rev) == 1 and sorted(rev[0]["changed"]) == ["prompt_sha", "quality", "thresholds"]
    assert j.header()["prompt_sha"] == "p1"  # the first line stays as written
    s = j.settings()
    assert s["prompt_sha"] == "p2" and s["quality"] is True and s["thresholds"] == new["thresholds"]
    j.start(new, fresh=False)  # the revised settings now resume without --revise, and add nothing
    assert len([r for r in j.records() if r.get("type") == "revision"]) == 1
    with pytest.raises(CheckpointError, match="different prompt_sha"):
        j.start({**BASE, "thresholds": new["thresholds"], "quality": True}, fresh=False)
    narrower = {**new, "thresholds": _th(0.1, 0.5, gmail=(0.15, 0.55))}
    with pytest.raises(CheckpointError, match="only widen.*gmail"):
        j.start(narrower, fresh=False, revise=True)


def test_narrowed_bands() -> None:
    old = _th(0.1, 0.5, gmail=(0.2, 0.4), maps=(0.2, 0.4))
    assert narrowed_bands(old, _th(0.05, 0.6, gmail=(0.1, 0.45), maps=(0.2, 0.4))) == []
    assert narrowed_bands(old, _th(0.1, 0.45, gmail=(0.2, 0.39), maps=(0.2, 0.4))) == ["global", "gmail"]
    # a domain that loses its own band falls back to the global one, which must contain it
    assert narrowed_bands(old, _th(0.1, 0.5, gmail=(0.2, 0.4))) == []
    assert narrowed_bands(old, _th(0.25, 0.5, gmail=(0.2, 0.4))) == ["global", "maps"]


def _row(text: str, rnd: int) -> dict:
    return dict(agent="A", domain="calc", text=text, source="generated", round=rnd, generator="g",
                min_score=0.1, max_score=0.4, mean_score=0.2, priority=0.05, leak_score=0.3)


def test_removal_withdraws_rows_and_marks_their_candidates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = Journal(tmp_path)
    j.start(BASE, fresh=False)
    j.commit_round({"agent": "A", "round": 1, "accepted": [_row("keep me", 1), _row("drop me", 1)],
                    "candidates": [{"text": "keep me", "status": "accepted"}, {"text": "drop me", "status": "accepted"},
                                   {"text": "other", "status": "below_tau1"}]})
    j.commit_removal("A", ["drop me"], "leak")
    st = j.state()["A"]
    assert [r["text"] for r in st.rows] == ["keep me"] and st.removed == {"leak": 1}
    assert [c["status"] for c in st.candidates] == ["accepted", "removed_leak", "below_tau1"]


@needs_lists
def test_leakage_tasks_include_the_project_routing_set() -> None:
    from agentlab.eval.benchmarks import all_instructions, load_project_set
    from agentlab.selfinstruct.leakage import leakage_tasks

    tasks = leakage_tasks()
    v2 = [t.instruction for t in load_project_set()]
    assert set(all_instructions()) <= set(tasks) and set(v2) <= set(tasks)


def test_pipeline_withdraws_a_row_that_leaks_a_routing_set_task(tmp_path, pool, fast) -> None:  # type: ignore[no-untyped-def]
    """A row accepted before the routing set joined the filter is withdrawn on the next run (and
    a new candidate copying a routing-set task is dropped as leakage)."""
    from agentlab.eval.benchmarks import load_project_set
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    task = next(t.instruction for t in load_project_set() if t.domain == "clock")
    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=-1.0, tau2=0.99, leakage_tau=0.85)
    th.save(tmp_path / "th.json")
    common = dict(agents=["ClockAgent"], per_agent=100, prompts_per_round=1, sequences_per_prompt=1,
                  thresholds=tmp_path / "th.json", out_dir=tmp_path / "out")
    first = " Set an alarm for 7:30 tomorrow morning.\n8. " + task + "\n"
    # round 1 without the leakage filter: the routing-set task gets in
    run_selfinstruct(SelfInstructConfig(max_rounds=1, leakage=False, **common), pool=pool,
                     backend=ScriptedBackend([first]), scorer=fast, progress=False)
    j = Journal(tmp_path / "out")
    assert task in [r["text"] for r in j.state()["ClockAgent"].rows]
    again = " Start a 25 minute timer named Focus.\n8. " + task.rstrip(".") + ", please.\n"
    rep = run_selfinstruct(SelfInstructConfig(max_rounds=2, **common), pool=pool,
                           backend=ScriptedBackend([again]), scorer=fast, progress=False)
    st = j.state()["ClockAgent"]
    assert task not in [r["text"] for r in st.rows] and st.removed == {"leak": 1}
    assert "Set an alarm for 7:30 tomorrow morning." in [r["text"] for r in st.rows]
    assert rep.agent("ClockAgent").leaked == 1  # the paraphrase in round 2
    removals = [r for r in j.records() if r.get("type") == "remove"]
    assert removals == [{"type": "remove", "agent": "ClockAgent", "texts": [task], "reason": "leak"}]
    # a rerun finds nothing more to withdraw
    run_selfinstruct(SelfInstructConfig(max_rounds=2, **common), pool=pool, backend=ScriptedBackend([again]),
                     scorer=fast, progress=False)
    assert len([r for r in j.records() if r.get("type") == "remove"]) == 1


def test_purge_quality_withdraws_accepted_non_requests(tmp_path, pool, fast) -> None:  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=-1.0, tau2=0.99, leakage_tau=0.99)
    th.save(tmp_path / "th.json")
    common = dict(agents=["ClockAgent"], per_agent=100, prompts_per_round=1, sequences_per_prompt=1,
                  thresholds=tmp_path / "th.json", out_dir=tmp_path / "out", leakage=False)
    lines = " Set an alarm for 7:30 tomorrow morning.\n8. You can have a wonderful sleep tomorrow.\n"
    run_selfinstruct(SelfInstructConfig(max_rounds=1, quality=False, **common), pool=pool,
                     backend=ScriptedBackend([lines]), scorer=fast, progress=False)
    j = Journal(tmp_path / "out")
    assert len(j.state()["ClockAgent"].rows) == 2
    with pytest.raises(CheckpointError, match="different quality"):
        run_selfinstruct(SelfInstructConfig(max_rounds=1, **common), pool=pool,
                         backend=ScriptedBackend([lines]), scorer=fast, progress=False)
    rep = run_selfinstruct(SelfInstructConfig(max_rounds=1, revise=True, purge_quality=True, **common), pool=pool,
                           backend=ScriptedBackend([lines]), scorer=fast, progress=False)
    assert rep.agent("ClockAgent").withdrawn == {"quality": 1} and rep.agent("ClockAgent").generated == 1
    st = j.state()["ClockAgent"]
    assert [r["text"] for r in st.rows] == ["Set an alarm for 7:30 tomorrow morning."]
    assert st.removed == {"quality": 1}
