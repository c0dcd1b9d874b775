"""Synthesized DataAgent pairs (:mod:`agentlab.selfinstruct.calls.data`): under the real DataAgent
document's tool retrieval and call grammar, most candidates of every family are kept (decodable,
run through the data toolkit without error, files as promised), a kept pair replays on its start
state regenerated from its seed, and no family's check holds before its calls ran."""

from __future__ import annotations

import random

from agentlab.selfinstruct.calls.build import DOMAINS, Specialist, run_reply, synthesize
from agentlab.selfinstruct.calls.data import GENERATORS
from agentlab.selfinstruct.calls.draft import reply


def test_data_generators_are_kept_under_the_real_agent_and_replay(monkeypatch, pool, tmp_path) -> None:
    monkeypatch.setitem(DOMAINS, "data", GENERATORS)
    spec = Specialist.from_document(pool.get("DataAgent"))
    assert spec.kit.name == "data" and set(GENERATORS) == set(spec.kit.tools) - {"done", "fail"}
    n = 3 * len(GENERATORS)
    kept, report = synthesize(spec, n, progress=False)
    assert report.dropped.get("generator_error", 0) == 0, report.examples
    assert len(kept) >= 0.6 * n, report.as_dict()
    assert {p.family for p in kept} == {f"data.{name}" for name in GENERATORS}, report.as_dict()

    pair = kept[0]
    folder = tmp_path / "again"
    folder.mkdir()
    draft = GENERATORS[pair.family.split(".", 1)[1]](random.Random(pair.seed), folder)
    assert reply(spec.kit, draft) == pair.reply and draft.request == pair.request
    assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None


def test_every_check_fails_on_the_untouched_start_state(tmp_path) -> None:
    for name, gen in GENERATORS.items():
        for seed in range(3):
            folder = tmp_path / f"{name}-{seed}"
            folder.mkdir()
            draft = gen(random.Random(seed), folder)
            assert draft.family == f"data.{name}"
            assert draft.check(folder) is not None, (name, seed, draft.request)
