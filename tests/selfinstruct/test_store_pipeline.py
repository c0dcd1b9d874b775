"""Journal/dataset storage, the leakage filter, and the pipeline's stop rules (in-process)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentlab.errors import CheckpointError, DataError
from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds
from agentlab.selfinstruct.leakage import LeakageFilter
from agentlab.selfinstruct.store import Journal, load_candidates, load_demos, write_datasets

from .conftest import ScriptedBackend
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())


def _row(agent: str, text: str, rnd: int) -> dict:
    return dict(agent=agent, domain="calc", text=text, source="generated", round=rnd, generator="g",
                min_score=0.1, max_score=0.4, mean_score=0.2, priority=0.05, leak_score=0.3)


def test_journal_replay_ignores_torn_tail_and_duplicate_rounds(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = Journal(tmp_path)
    header = {"thresholds": {"tau1": 0.1}, "prompt_sha": "abc", "prompt_style": "completion", "generator": "g",
              "seeds": {"A": "h1"}}
    j.start(header, fresh=False)
    rec = {"agent": "A", "round": 1, "accepted": [_row("A", "x one", 1)], "candidates": [{"text": "x one", "status": "accepted"}],
           "parse": {"chatter": 2}, "raw_lines": 5, "leaked": 1, "empty_streak": 0, "seconds": 1.0}
    j.commit_round(rec)
    j.commit_round(rec)  # a duplicated line must not duplicate rows
    with open(j.path, "a") as fh:
        fh.write('{"type": "round", "agent": "A", "round": 2, "accepted": [{"te')  # killed mid-append
    st = j.state()["A"]
    assert [r["text"] for r in st.rows] == ["x one"] and st.rounds == 1
    assert st.parse == {"chatter": 2} and st.leaked == 1 and st.raw_lines == 5
    j.start(header, fresh=False)  # same run settings: resumes
    with pytest.raises(CheckpointError, match="different prompt_sha"):
        j.start({**header, "prompt_sha": "zzz"}, fresh=False)
    with pytest.raises(CheckpointError, match="demonstrations of A changed"):
        j.start({**header, "seeds": {"A": "other"}}, fresh=False)
    j.start({**header, "prompt_sha": "zzz"}, fresh=True)
    assert j.state() == {}


def test_datasets_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.store import AgentState

    seeds = [dict(_row("A", "seed one", 0), source="seed", generator="human", priority=None)]
    st = AgentState("A", rows=[_row("A", "gen one", 1), _row("A", "gen two", 2)],
                    candidates=[{"agent": "A", "text": "gen one", "status": "accepted", "round": 1}])
    write_datasets(tmp_path, seeds, {"A": st})
    write_datasets(tmp_path, seeds, {"A": st})  # rewriting in place is fine
    ds = load_demos(tmp_path)
    assert ds["text"] == ["seed one", "gen one", "gen two"]
    assert ds["source"] == ["seed", "generated", "generated"] and ds["round"] == [0, 1, 2]
    assert load_candidates(tmp_path)["status"] == ["accepted"]
    assert not list(tmp_path.glob(".save-*"))
    with pytest.raises(DataError, match="state.json missing"):
        load_demos(tmp_path / "nothing")


@needs_lists
def test_leakage_filter_drops_near_copy_of_benchmark_task(fast) -> None:  # type: ignore[no-untyped-def]
    from agentlab.eval.benchmarks import load_osworld

    tasks = [t.instruction for t in load_osworld()[:60]]
    target = tasks[7]
    near_copy = target.replace("Can you", "Could you").rstrip("?.") + ", please?"
    fresh_task = "Schedule a weekly alarm for 6:45 on weekdays with the ringtone Radar."
    filt = LeakageFilter(fast, tasks, tau=0.67)
    res = filt.check([near_copy, fresh_task])
    assert res.leaked.tolist() == [True, False]
    assert res.nearest[0] == target and res.max_score[0] > 0.9


GOOD = (
    " Set an alarm for 7:30 tomorrow morning.\n"
    "8. Start a 25 minute timer named Focus.\n"
    "9. Delete the alarm I set for Saturday at 9.\n"
    "10. Add the city Tokyo to my world clock.\n"
)
JUNK = "Sure! Here are more:\n"


def test_generator_with_nothing_usable_stops_agent_and_keeps_accepted(tmp_path, pool, fast) -> None:  # type: ignore[no-untyped-def]
    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=0.0, tau2=0.95, leakage_tau=0.99)
    th.save(tmp_path / "th.json")
    cfg = SelfInstructConfig(
        agents=["ClockAgent"], per_agent=100, max_rounds=6, patience=2, prompts_per_round=1,
        sequences_per_prompt=2, thresholds=tmp_path / "th.json", leakage=False, out_dir=tmp_path / "out",
    )
    backend = ScriptedBackend([GOOD, GOOD] + [JUNK] * 20)
    rep = run_selfinstruct_quiet(cfg, pool, backend, fast)
    a = rep.agent("ClockAgent")
    assert a.rounds == 3 and a.generated == 4 and a.total == 16
    assert a.stopped.startswith("generator returned nothing usable for 2 rounds in a row")
    assert "keeping its 4 accepted demonstrations" in a.stopped
    assert a.parse_rejects["chatter"] == 4 and a.parse_rejects["duplicate"] == 4
    ds = load_demos(tmp_path / "out")
    assert sorted(t for t, s in zip(ds["text"], ds["source"]) if s == "generated") == sorted(
        ["Set an alarm for 7:30 tomorrow morning.", "Start a 25 minute timer named Focus.",
         "Delete the alarm I set for Saturday at 9.", "Add the city Tokyo to my world clock."]
    )
    # the prompt showed the agent and a numbered list of its current demonstrations
    assert "ClockAgent" in backend.prompts[0] and backend.prompts[0].endswith("\n6.")
    # rerunning does not restart a stopped agent nor duplicate anything
    rep2 = run_selfinstruct_quiet(cfg, pool, ScriptedBackend([GOOD]), fast)
    assert rep2.agent("ClockAgent").rounds == 3 and len(load_demos(tmp_path / "out")) == 16
    rec = json.loads((tmp_path / "out" / "report.json").read_text())
    assert rec["agents"][0]["stopped"] == a.stopped


def test_band_filter_and_per_agent_cap(tmp_path, pool, fast) -> None:  # type: ignore[no-untyped-def]
    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=0.0, tau2=0.95, leakage_tau=0.99)
    th.save(tmp_path / "th.json")
    cfg = SelfInstructConfig(
        agents=["ClockAgent"], per_agent=14, max_rounds=3, prompts_per_round=1, sequences_per_prompt=1,
        thresholds=tmp_path / "th.json", leakage=False, out_dir=tmp_path / "out",
    )
    rep = run_selfinstruct_quiet(cfg, pool, ScriptedBackend([GOOD]), fast)
    a = rep.agent("ClockAgent")
    assert a.total == 14 and a.surplus == 2 and a.stopped == "reached 14 demonstrations"
    ds = load_demos(tmp_path / "out")
    texts = ds["text"]
    mat = fast.matrix(texts, texts)
    gen = [i for i, s in enumerate(ds["source"]) if s == "generated"]
    for i in gen:
        others = np.delete(mat[i], i)
        assert others.min() >= th.tau1 - 1e-5 and others.max() <= th.tau2 + 1e-5


def test_a_run_for_one_agent_keeps_the_others_in_the_report(tmp_path, pool, fast) -> None:  # type: ignore[no-untyped-def]
    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=0.0, tau2=0.95, leakage_tau=0.99)
    th.save(tmp_path / "th.json")
    common = dict(per_agent=13, max_rounds=2, prompts_per_round=1, sequences_per_prompt=1,
                  thresholds=tmp_path / "th.json", leakage=False, out_dir=tmp_path / "out")
    run_selfinstruct_quiet(SelfInstructConfig(agents=["ClockAgent"], **common), pool, ScriptedBackend([GOOD]), fast)
    rep = run_selfinstruct_quiet(SelfInstructConfig(agents=["SpotifyAgent"], **common), pool, ScriptedBackend([GOOD]), fast)
    assert {a.agent for a in rep.agents} == {"ClockAgent", "SpotifyAgent"}
    rec = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {a["agent"] for a in rec["agents"]} == {"ClockAgent", "SpotifyAgent"}
    clock = next(a for a in rec["agents"] if a["agent"] == "ClockAgent")
    assert clock["stopped"] is not None and clock["stopped"] == rep.agent("ClockAgent").stopped  # not "not finished"
    assert "| ClockAgent |" in (tmp_path / "out" / "report.md").read_text()


def run_selfinstruct_quiet(cfg, pool, backend, fast):  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    return run_selfinstruct(cfg, pool=pool, backend=backend, scorer=fast, progress=False)


def test_agents_joining_a_resumed_run_are_checked_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = Journal(tmp_path)
    base = {"thresholds": {}, "prompt_sha": "p", "prompt_style": "completion", "generator": "g"}
    j.start({**base, "seeds": {"A": "a1"}}, fresh=False)
    j.start({**base, "seeds": {"B": "b1"}}, fresh=False)  # B joins later
    assert j.header()["seeds"] == {"A": "a1", "B": "b1"}
    with pytest.raises(CheckpointError, match="demonstrations of B changed"):
        j.start({**base, "seeds": {"B": "b2"}}, fresh=False)
