"""Synthesized BrowserAgent pairs (:mod:`agentlab.selfinstruct.calls.browser`): with the real
BrowserAgent document (its toolkit, tool retrieval and grammar), most candidates of every family
are kept, and a kept reply replays on its start state regenerated from the seed."""

from __future__ import annotations

import random

import pytest

from agentlab.selfinstruct.calls.browser import GENERATORS
from agentlab.selfinstruct.calls.build import DOMAINS, Specialist, run_reply, synthesize
from agentlab.selfinstruct.calls.draft import reply


@pytest.fixture(scope="module")
def spec() -> Specialist:
    from agentlab.pool import AgentPool

    return Specialist.from_document(AgentPool.from_dir().get("BrowserAgent"))


def test_browser_generators_are_mostly_kept_and_replay(monkeypatch, spec, tmp_path) -> None:
    monkeypatch.setitem(DOMAINS, "browser", GENERATORS)
    assert spec.kit.name == "browser" and set(spec.kit.tools) == set(GENERATORS)
    n = 3 * len(GENERATORS)
    kept, report = synthesize(spec, n, progress=False)
    summary = report.as_dict()
    print(summary)
    assert report.dropped.get("generator_error", 0) == 0, report.examples
    assert len(kept) >= 0.6 * n, summary
    assert {p.family for p in kept} == {f"browser.{name}" for name in GENERATORS}, summary
    assert all(p.reply.endswith("done()") and p.toolkit == "browser" for p in kept)

    marks = next(p for p in kept if "bookmark" in p.family)  # a bookmarks pair, then a settings one
    prefs = next(p for p in kept if "bookmark" not in p.family)
    for pair in (marks, prefs):
        folder = tmp_path / pair.family
        folder.mkdir()
        draft = GENERATORS[pair.family.split(".", 1)[1]](random.Random(pair.seed), folder)
        assert reply(spec.kit, draft) == pair.reply and draft.request == pair.request
        assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None
