"""Synthesized pairs of the four later specialists (browser, mail, media player, data: issue #38) and
of the files toolkit (whose tools over many files and lines came later),
under each real agent document's tool retrieval and call grammar: most candidates of every family
are kept (decodable, run through the toolkit without error, files as promised); a kept pair of
each kind replays on its start state regenerated from its seed; and every family's check refuses
the untouched start state, so no request is one the start already satisfies."""

from __future__ import annotations

import random

import pytest

from agentlab.selfinstruct.calls.build import DOMAINS, Specialist, run_reply, synthesize
from agentlab.selfinstruct.calls.draft import reply

#: toolkit -> its agent, and a family prefix of the pairs replayed (one of each kind of file)
AGENTS = {"browser": ("BrowserAgent", ("add_bookmark", "set_preference")), "mail": ("MailboxAgent", ("move_messages", "set_pref")),
          "media": ("MediaAgent", ("make_playlist", "set_option")), "data": ("DataAgent", ("total_by", "count_words")),
          "files": ("FileAgent", ("remove_lines", "move_matching", "delete_matching", "add_prefix"))}


@pytest.mark.parametrize("toolkit", sorted(AGENTS))
def test_generators_are_kept_under_the_real_agent_and_replay(toolkit, pool, tmp_path) -> None:
    agent, replayed = AGENTS[toolkit]
    gens = DOMAINS[toolkit]
    spec = Specialist.from_document(pool.get(agent))
    assert spec.kit.name == toolkit and set(gens) == set(spec.kit.tools)  # one generator per tool
    n = 3 * len(gens)
    kept, report = synthesize(spec, n, progress=False)
    summary = report.as_dict()
    assert report.dropped.get("generator_error", 0) == 0, summary
    assert len(kept) >= 0.6 * n, summary
    assert {p.family for p in kept} == {f"{toolkit}.{name}" for name in gens}, summary
    assert all(p.reply.endswith("done()") and p.toolkit == toolkit for p in kept)
    for family in replayed:
        pair = next(p for p in kept if p.family == f"{toolkit}.{family}")
        folder = tmp_path / family
        folder.mkdir()
        draft = gens[family](random.Random(pair.seed), folder)
        assert reply(spec.kit, draft) == pair.reply and draft.request == pair.request
        assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None


@pytest.mark.parametrize("toolkit", sorted(AGENTS))
def test_every_check_refuses_the_untouched_start_state(toolkit, tmp_path) -> None:
    for name, gen in sorted(DOMAINS[toolkit].items()):
        for seed in range(3):
            folder = tmp_path / f"{name}-{seed}"
            folder.mkdir()
            draft = gen(random.Random(seed), folder)
            assert draft.family == f"{toolkit}.{name}"
            assert draft.check(folder) is not None, (name, seed, draft.request)
