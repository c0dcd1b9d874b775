"""Crash consistency of every append-only / resumable file, by property-based testing.

A crash can stop a write anywhere, so each test writes records, cuts the file at an
arbitrary byte offset (Hypothesis picks it, including inside a multi-byte character and
exactly before a newline), resumes the way the program does, and checks that every record
that was complete before the cut survives exactly once and that the run finishes.
Files: a generic JSON-lines file (manager predictions, figure manifests), the self-instruct
journal, and episode trajectories; atomic (whole-file) writes leave the old version intact.

Each test also checks that it explored: both ends (nothing kept, everything kept) and many cuts
between them; how many distinct offsets were cut is kept in the test's ``user_properties``
(``cut_offsets``: report plugins such as ``--report-log`` carry it) and shown when the check fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentlab.fileio import append_jsonl, atomic_write_text, read_jsonl

FAST = settings(max_examples=150, deadline=None)
SLOW = settings(max_examples=60, deadline=None)
#: distinct cut offsets each kind of test must reach (Hypothesis draws repeat some fractions)
AT_LEAST_FAST, AT_LEAST_SLOW = 40, 20

RECORDS = [{"id": f"t{i}", "agent": "SpotifyAgent", "text": "café ☕ 日本" * (i % 3 + 1), "n": i} for i in range(12)]


def _line_ends(path: Path) -> list[int]:
    data = path.read_bytes()
    return [i + 1 for i, b in enumerate(data) if b == 0x0A]


def _cut(path: Path, offset: int) -> int:
    """Truncate ``path`` to ``offset`` bytes; return how many whole lines remain."""
    ends = _line_ends(path)
    with open(path, "rb+") as fh:
        fh.truncate(offset)
    return sum(e <= offset for e in ends)


Cut = tuple[int, int]  #: (the offset cut at, the file's size before the cut)


def explore(config: settings, cut_once: Callable[[float], Cut], node: pytest.Item, at_least: int) -> None:
    """Run ``cut_once(frac)`` (one cut keeping ``frac`` of the file, then the resume and its checks)
    on every fraction Hypothesis picks and on both ends; then assert the cuts covered both ends and
    at least ``at_least`` distinct offsets, and record how many in the test's ``user_properties``."""
    cuts: list[Cut] = []

    @config
    @given(frac=st.floats(0.0, 1.0))
    @example(frac=0.0)
    @example(frac=1.0)
    def each(frac: float) -> None:
        cuts.append(cut_once(frac))

    each()
    offsets = {off for off, _ in cuts}
    node.user_properties.append(("cut_offsets", len(offsets)))
    ends = {"nothing kept": 0 in offsets, "everything kept": any(off == size for off, size in cuts)}
    assert all(ends.values()) and len(offsets) >= at_least, (
        f"{len(cuts)} cuts at {len(offsets)} distinct offsets {sorted(offsets)}; ends cut: {ends}")


def test_jsonl_resume_after_a_cut_keeps_every_complete_record_once(tmp_path_factory, request: pytest.FixtureRequest) -> None:
    """The resume pattern of ``agentlab route --mode manager``: read what is done, append the rest."""

    def cut_once(frac: float) -> Cut:
        path = tmp_path_factory.mktemp("jsonl") / "pred.jsonl"
        for r in RECORDS:
            append_jsonl(path, r)
        size = path.stat().st_size
        offset = int(frac * size)
        whole = _cut(path, offset)
        done = {r["id"] for r in read_jsonl(path)}  # a torn last line is not an error
        # a record cut exactly before its newline is complete and kept
        assert {f"t{i}" for i in range(whole)} <= done <= {f"t{i}" for i in range(whole + 1)}
        for r in RECORDS:
            if r["id"] not in done:
                append_jsonl(path, r)
        back = read_jsonl(path, tolerate_torn_tail=False)  # the file is whole again
        assert back == RECORDS
        return offset, size

    explore(FAST, cut_once, request.node, at_least=AT_LEAST_FAST)


def test_a_record_glued_to_a_fragment_by_an_older_version_is_recovered(tmp_path_factory, request: pytest.FixtureRequest) -> None:
    """Files damaged before append_jsonl repaired tails: the record behind the fragment is read."""

    def cut_once(frac: float) -> Cut:
        path = tmp_path_factory.mktemp("glued") / "journal.jsonl"
        for r in RECORDS[:6]:
            append_jsonl(path, r)
        size = path.stat().st_size
        offset = int(frac * size)
        whole = _cut(path, offset)
        with open(path, "ab") as fh:  # what the old append did: no look at the tail
            fh.write((json.dumps(RECORDS[6], ensure_ascii=False) + "\n").encode())
        ids = [r["id"] for r in read_jsonl(path)]
        assert ids[:whole] == [f"t{i}" for i in range(whole)] and ids[-1] == "t6"  # (+ a record that only lost its newline)
        assert len(ids) in (whole + 1, whole + 2)
        assert len(ids) == len(set(ids))
        return offset, size

    explore(FAST, cut_once, request.node, at_least=AT_LEAST_FAST)


def _round(agent: str, k: int) -> dict:
    return {"agent": agent, "round": k, "accepted": [{"agent": agent, "text": f"{agent} tâche {k}"}],
            "candidates": [], "empty_streak": 0, "raw_lines": 1, "seconds": 0.1}


HEADER = {"thresholds": {"tau1": 0.5}, "prompt_sha": "abc", "generator": "g", "prompt_style": "completion",
          "seeds": {"A": "1", "B": "2"}}


def test_selfinstruct_journal_resumes_after_a_cut(tmp_path_factory, request: pytest.FixtureRequest) -> None:
    from agentlab.selfinstruct.store import Journal

    plan = [("A", 1), ("B", 1), ("A", 2), ("B", 2), ("A", 3)]

    def cut_once(frac: float) -> Cut:
        out = tmp_path_factory.mktemp("journal")
        j = Journal(out)
        j.start(HEADER, fresh=False)
        for agent, k in plan:
            j.commit_round(_round(agent, k))
        j.commit_stop("A", "target reached")
        size = j.path.stat().st_size
        offset = int(frac * size)
        _cut(j.path, offset)
        # resume as the pipeline does: check the header, then run the rounds the journal lacks
        j = Journal(out)
        j.start(HEADER, fresh=False)
        state = j.state()
        for agent, k in plan:
            if k > (state[agent].rounds if agent in state else 0):
                j.commit_round(_round(agent, k))
        if "A" not in state or state["A"].stopped is None:
            j.commit_stop("A", "target reached")
        final = Journal(out).state()
        assert [r["text"] for r in final["A"].rows] == [f"A tâche {k}" for k in (1, 2, 3)]
        assert [r["text"] for r in final["B"].rows] == [f"B tâche {k}" for k in (1, 2)]
        assert final["A"].stopped == "target reached"
        read_jsonl(j.path, tolerate_torn_tail=False)  # every line whole
        return offset, size

    explore(SLOW, cut_once, request.node, at_least=AT_LEAST_SLOW)


def test_trajectory_resumes_after_a_cut(tmp_path_factory, request: pytest.FixtureRequest) -> None:
    from agentlab.envs.actions.phone import Back, Text
    from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

    def cut_once(frac: float) -> Cut:
        ep = tmp_path_factory.mktemp("traj") / "run" / "ep"
        rec = TrajectoryRecorder(ep, task="type a name")
        for i in range(6):
            rec.record(None, Text(text=f"Zoë {i} ✓") if i % 2 else Back(), thought=f"step {i} ünïcode")
        size = rec.traj_file.stat().st_size
        offset = int(frac * size)
        whole = _cut(rec.traj_file, offset)
        rec = TrajectoryRecorder(ep, task="type a name")  # resume
        assert whole <= len(rec.steps) <= whole + 1
        while len(rec.steps) < 6:
            i = len(rec.steps)
            rec.record(None, Text(text=f"Zoë {i} ✓") if i % 2 else Back(), thought=f"step {i} ünïcode")
        traj = load_trajectory(ep)
        assert [s.step for s in traj.steps] == list(range(6))
        assert [s.thought for s in traj.steps] == [f"step {i} ünïcode" for i in range(6)]
        return offset, size

    explore(SLOW, cut_once, request.node, at_least=AT_LEAST_SLOW)


def test_selfinstruct_datasets_rebuilt_after_a_cut_hold_every_row_once(tmp_path_factory, request: pytest.FixtureRequest) -> None:
    """The datasets are materialised from the journal after every round, so a resumed run
    rewrites them whole: each accepted row once, nothing from a torn round."""
    from agentlab.selfinstruct.store import Journal, load_demos, write_datasets

    def cut_once(frac: float) -> Cut:
        out = tmp_path_factory.mktemp("datasets")
        j = Journal(out)
        j.start(HEADER, fresh=False)
        for k in (1, 2, 3):
            j.commit_round(_row_round("A", k))
        write_datasets(out, [], j.state())
        size = j.path.stat().st_size
        offset = int(frac * size)
        _cut(j.path, offset)
        j = Journal(out)
        j.start(HEADER, fresh=False)
        done = j.state().get("A")
        for k in (1, 2, 3):
            if k > (done.rounds if done else 0):
                j.commit_round(_row_round("A", k))
        write_datasets(out, [], j.state())
        assert list(load_demos(out)["text"]) == [f"A tâche {k}" for k in (1, 2, 3)]
        return offset, size

    explore(settings(max_examples=8, deadline=None), cut_once, request.node, at_least=3)


def _row_round(agent: str, k: int) -> dict:
    rec = _round(agent, k)
    rec["accepted"] = [{"agent": agent, "domain": "spotify", "text": f"{agent} tâche {k}", "source": "generated",
                        "round": k, "generator": "g"}]
    return rec


def test_an_interrupted_atomic_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "thresholds.json"
    atomic_write_text(target, "old\n")
    from agentlab.fileio import atomic_path

    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == ["thresholds.json"]

