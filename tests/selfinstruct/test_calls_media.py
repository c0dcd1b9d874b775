"""Synthesized MediaAgent pairs (:mod:`agentlab.selfinstruct.calls.media`): under the real
MediaAgent document's tool retrieval and call grammar, most candidates of every family are kept
(decodable, run through the media toolkit without error, files as promised), and a kept pair
replays on its start state regenerated from its seed."""

from __future__ import annotations

import random

from agentlab.selfinstruct.calls.build import DOMAINS, Specialist, run_reply, synthesize
from agentlab.selfinstruct.calls.draft import reply
from agentlab.selfinstruct.calls.media import GENERATORS


def test_media_generators_are_kept_under_the_real_agent_and_replay(monkeypatch, pool, tmp_path) -> None:
    monkeypatch.setitem(DOMAINS, "media", GENERATORS)
    spec = Specialist.from_document(pool.get("MediaAgent"))
    assert spec.kit.name == "media" and set(GENERATORS) == set(spec.kit.tools) - {"done", "fail"}
    n = 3 * len(GENERATORS)
    kept, report = synthesize(spec, n, progress=False)
    assert report.dropped.get("generator_error", 0) == 0, report.examples
    assert len(kept) >= 0.6 * n, report.as_dict()
    assert {p.family for p in kept} == {f"media.{name}" for name in GENERATORS}, report.as_dict()

    pair = kept[0]
    folder = tmp_path / "again"
    folder.mkdir()
    draft = GENERATORS[pair.family.split(".", 1)[1]](random.Random(pair.seed), folder)
    assert reply(spec.kit, draft) == pair.reply and draft.request == pair.request
    assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None
