"""Synthesized (request -> calls) pairs: only pairs whose calls are decodable, run without error
through the real toolkit and leave the files as promised are kept; near-copies of evaluation
instructions are dropped; a kept reply tokenizes as the call grammar emits it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentlab.selfinstruct.calls import build
from agentlab.selfinstruct.calls.build import DOMAINS, Specialist, run_reply, synthesize
from agentlab.selfinstruct.calls.draft import Draft, reply
from agentlab.selfinstruct.calls.leakage import NearCopyFilter, evaluation_instructions
from agentlab.selfinstruct.calls.sheets import _book
from agentlab.toolkits import load_toolkit


def _spec(name: str) -> Specialist:
    kit = load_toolkit(name)
    return Specialist(f"Test-{name}", kit, lambda request: list(kit.tools), lambda folder: "(files)")


def _good(rng: random.Random, root: Path) -> Draft:
    b = _book(rng, root, n_sheets=1)
    return Draft(f"Rename the {b.sheet} tab of {b.file} to Results.", (("rename_sheet", (b.file, b.sheet, "Results")),),
                 lambda r: None, "test.good")


def _fails(rng: random.Random, root: Path) -> Draft:  # decodable, but openpyxl refuses a '/' in a sheet name
    b = _book(rng, root, n_sheets=1)
    return Draft(f"Rename the {b.sheet} tab of {b.file} to 'Q1/Q2'.", (("rename_sheet", (b.file, b.sheet, "Q1/Q2")),),
                 lambda r: None, "test.fails")


def _wrong(rng: random.Random, root: Path) -> Draft:  # the call works but does not do what the request says
    b = _book(rng, root, n_sheets=1)
    return Draft(f"Add a sheet Extra to {b.file}.", (("add_sheet", (b.file, "Extra")),),
                 lambda r: "no sheet Totals", "test.wrong")


def _unoffered(rng: random.Random, root: Path) -> Draft:  # a value neither the request nor the workbook has
    b = _book(rng, root, n_sheets=1)
    return Draft(f"Rename the {b.sheet} tab of {b.file}.", (("rename_sheet", (b.file, b.sheet, "Zzyzx")),),
                 lambda r: None, "test.unoffered")


def test_only_pairs_whose_calls_succeed_are_kept(monkeypatch) -> None:
    monkeypatch.setitem(DOMAINS, "sheets", {"a": _good, "b": _fails, "c": _wrong, "d": _unoffered})
    kept, report = synthesize(_spec("sheets"), 8, progress=False)
    assert [p.family for p in kept] == ["test.good", "test.good"]
    assert dict(report.dropped) == {"call_failed": 2, "postcondition": 2, "not_offered": 2}
    assert "Q1/Q2" in report.examples["call_failed"][0] and "Zzyzx" in report.examples["not_offered"][0]
    assert all(p.reply.endswith("done()") and p.observation == "(files)" for p in kept)


@pytest.mark.parametrize("toolkit", sorted(DOMAINS))
def test_every_generator_writes_pairs_that_replay(toolkit, tmp_path) -> None:
    """One candidate per family: most are kept, and a kept reply run again on the same start
    state (regenerated from its seed) succeeds through the toolkit runtime."""
    spec = _spec(toolkit)
    n = len(DOMAINS[toolkit])
    kept, report = synthesize(spec, n, progress=False)
    assert report.dropped.get("generator_error", 0) == 0, report.examples
    assert len(kept) >= n // 2, report.as_dict()
    pair = kept[0]
    folder = tmp_path / "again"
    folder.mkdir()
    draft = DOMAINS[toolkit][pair.family.split(".", 1)[1]](random.Random(pair.seed), folder)
    assert reply(spec.kit, draft) == pair.reply and draft.request == pair.request
    assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None




def test_leakage_filter_drops_a_near_copy_with_minilm() -> None:
    from agentlab.llm.similarity import default_encoder

    refs = ["Rename the Data sheet of budget.xlsx to Overview and add a sheet Notes."]
    f = NearCopyFilter(default_encoder(), refs, threshold=0.9)
    got = f.check(["Rename the Data sheet of budget.xlsx to Overview, then add a sheet Notes.",
                   "Rotate photo.png by 90 degrees."])
    assert got.leaked.tolist() == [True, False] and got.max_cosine[0] > 0.9 > got.max_cosine[1]


def test_evaluation_instructions_reads_only_the_instruction(tmp_path) -> None:
    (tmp_path / "t1.json").write_text(json.dumps({"id": "secret-id", "instruction": "Do the thing.",
                                                  "evaluator": {"func": "x"}, "solution": "print(1)"}))
    (tmp_path / "t2.json").write_text(json.dumps({"id": "other", "evaluator": {}}))
    assert evaluation_instructions([tmp_path]) == ["Do the thing."]


def test_build_writes_pairs_and_a_report(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(DOMAINS, "sheets", {"a": _good, "b": _fails})
    reports = build.build([_spec("sheets")], 4, tmp_path, leakage=None)
    rows = [json.loads(x) for x in (tmp_path / "Test-sheets.jsonl").read_text().splitlines()]
    assert reports["Test-sheets"].kept == len(rows) == 2
    meta = json.loads((tmp_path / "report.json").read_text())
    assert meta["agents"]["Test-sheets"]["dropped"]["call_failed"] == 2
    assert "| Test-sheets | 4 |" in (tmp_path / "report.md").read_text()


def test_building_for_some_agents_keeps_the_other_agents_report(monkeypatch, tmp_path) -> None:
    """``--agents`` synthesizes a few specialists into the shipped folder: the report of the
    pairs the others were trained on stays, each entry with the settings of its own run."""
    monkeypatch.setitem(DOMAINS, "sheets", {"a": _good, "b": _fails})
    build.build([_spec("sheets")], 4, tmp_path, leakage=None)
    spec = _spec("sheets")
    spec.name = "Other"
    build.build([spec], 2, tmp_path, leakage=None, two_ops=0)
    meta = json.loads((tmp_path / "report.json").read_text())
    assert set(meta["agents"]) == {"Test-sheets", "Other"}
    assert meta["agents"]["Test-sheets"]["settings"]["candidates_per_agent"] == 4
    assert meta["agents"]["Other"]["settings"]["candidates_per_agent"] == 2
    assert (tmp_path / "Test-sheets.jsonl").is_file()
    md = (tmp_path / "report.md").read_text()
    assert "| Test-sheets | 4 |" in md and "| Other | 2 |" in md
    # the leakage counts are the last synthesis' own, and the report says whose
    from agentlab.selfinstruct.calls.leakage import NearCopyFilter

    class _Far(NearCopyFilter):
        def __init__(self) -> None:
            self.threshold, self.references = 0.9, ["x"]

        def check(self, requests):  # type: ignore[no-untyped-def]
            import numpy as np
            from types import SimpleNamespace
            return SimpleNamespace(max_cosine=np.zeros(len(requests)), leaked=np.zeros(len(requests), dtype=bool))

    build.build([spec], 2, tmp_path, leakage=_Far())
    assert "requests of the last synthesis (Other) above" in (tmp_path / "report.md").read_text()
    (tmp_path / "report.json").write_text("{torn")  # a torn report is replaced, not fatal
    build.build([spec], 2, tmp_path, leakage=None)
    assert set(json.loads((tmp_path / "report.json").read_text())["agents"]) == {"Other"}


def test_exact_match_counts_replies_with_the_target_calls(pool) -> None:
    """The validation diagnostic regenerates each pair's start state, asks under the episode's
    grammar, and counts a reply whose calls equal the target's."""
    from dataclasses import asdict

    from agentlab.agents.tools import ToolAgent
    from agentlab.llm.base import LLMBackend
    from agentlab.selfinstruct.calls.validate import exact_match

    doc = pool.get("SheetAgent")
    agent = ToolAgent(doc, doc.runner_options)
    spec = Specialist("SheetAgent", agent.kit, lambda request: list(agent.kit.tools), lambda folder: "(files)")
    pairs = [asdict(p) for p in synthesize(spec, 2, progress=False)[0]]

    class Replies(LLMBackend):
        model_id = "replies"

        def __init__(self, replies: list[str]) -> None:
            self.replies, self.grammars = list(replies), []

        def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
            self.grammars.append(params.grammar)
            return [self.replies.pop(0)]

        def complete(self, prompt, params=None):  # type: ignore[no-untyped-def]
            raise AssertionError("chat only")

    right = Replies([p["reply"] for p in pairs])
    assert exact_match(agent, right, pairs, progress=False) == 1.0
    assert all(g is not None and pairs[0]["reply"].split("(")[0] in g.tools for g in right.grammars[:1])
    assert exact_match(agent, Replies(["done()", pairs[1]["reply"]]), pairs, progress=False) == 0.5


def test_two_operation_pairs_join_two_asks_and_keep_both_calls_in_order(tmp_path) -> None:
    """A composed candidate asks for two things in one request; it is kept only when both calls run
    on the combined start state and both postconditions hold afterwards."""
    from agentlab.selfinstruct.calls.compose import compose, join_requests

    assert join_requests("Put 5 in A1 of x.xlsx.", "Sort the Name column", random.Random(0)).count("x.xlsx") == 1
    joined = {join_requests("Do A.", "Do B", random.Random(s)) for s in range(40)}
    assert len(joined) >= 4 and all(j.startswith("Do A") and j.rstrip().endswith(("do B", "Do B")) for j in joined)
    assert "CSV" in join_requests("Do A", "CSV files go to data", random.Random(1))  # an acronym keeps its case

    spec = _spec("files")
    kept, report = synthesize(spec, 0, two_ops=12, progress=False)
    assert report.generated == 12 and len(kept) >= 6, report.as_dict()
    for pair in kept:
        calls = [line for line in pair.reply.splitlines() if line != "done()"]
        assert pair.family.startswith("two:") and len(calls) == 2 and pair.reply.endswith("done()")
    pair = kept[0]
    folder = tmp_path / "again"
    folder.mkdir()
    draft = compose(DOMAINS["files"], random.Random(pair.seed), folder)
    assert draft.request == pair.request and reply(spec.kit, draft) == pair.reply
    assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None


def test_a_composed_pair_whose_second_check_fails_is_dropped(monkeypatch) -> None:
    monkeypatch.setitem(DOMAINS, "sheets", {"a": _good, "c": _wrong})
    kept, report = synthesize(_spec("sheets"), 0, two_ops=6, progress=False)
    assert kept == [] and report.dropped["postcondition"] == 6


def test_training_gives_two_operation_pairs_their_share() -> None:
    from agentlab.selfinstruct.calls.fit import choose

    pairs = [{"family": f"f{i % 5}", "i": i} for i in range(100)] + [{"family": f"two:f{i % 5}+f{(i + 1) % 5}", "i": 100 + i}
                                                                      for i in range(60)]
    got = choose(pairs, 50, seed=0, two_share=0.4)
    assert len(got) == 50 and sum(str(p["family"]).startswith("two:") for p in got) == 20
    assert {p["family"] for p in got if not str(p["family"]).startswith("two:")} == {f"f{i}" for i in range(5)}
    assert sum(str(p["family"]).startswith("two:") for p in choose(pairs, 50, seed=0)) > 0  # no share: families alone


def test_the_blind_request_sets_count_as_evaluation_data() -> None:
    """A synthesized request that copies a blind request of data/requests is dropped like a task's copy."""
    import json

    from agentlab.paths import data_dir
    from agentlab.selfinstruct.calls.leakage import evaluation_instructions

    texts = set(evaluation_instructions())
    first = json.loads((data_dir() / "requests" / "two_app_blind.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["request"] in texts
