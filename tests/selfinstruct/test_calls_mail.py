"""Synthesized MailboxAgent pairs (:mod:`agentlab.selfinstruct.calls.mail`): for the real agent
document (its tool retrieval and grammar), most candidates of every family are kept, and a kept
reply run again on its regenerated start state succeeds and leaves the files as promised."""

from __future__ import annotations

import random

from agentlab.selfinstruct.calls.build import DOMAINS, Specialist, run_reply, synthesize
from agentlab.selfinstruct.calls.draft import reply
from agentlab.selfinstruct.calls.mail import GENERATORS


def test_mail_generators_are_kept_for_the_mailbox_agent(monkeypatch, pool, tmp_path) -> None:
    monkeypatch.setitem(DOMAINS, "mail", GENERATORS)
    spec = Specialist.from_document(pool.get("MailboxAgent"))
    assert set(GENERATORS) == set(spec.kit.tools)  # one generator per tool of the toolkit
    n = 3 * len(GENERATORS)
    kept, report = synthesize(spec, n, progress=False)
    summary = report.as_dict()
    assert report.dropped.get("generator_error", 0) == 0, summary
    assert len(kept) >= 0.6 * n, summary
    assert {p.family for p in kept} == {f"mail.{name}" for name in GENERATORS}, summary

    # a kept pair replays: the same seed makes the same start state, request and reply, and the
    # reply run through the toolkit runtime passes the draft's check
    pair = next(p for p in kept if p.family == "mail.move_messages")
    folder = tmp_path / "again"
    folder.mkdir()
    draft = GENERATORS[pair.family.split(".", 1)[1]](random.Random(pair.seed), folder)
    assert reply(spec.kit, draft) == pair.reply and draft.request == pair.request
    assert all(r["ok"] for r in run_reply(spec.kit, pair.reply, folder)) and draft.check(folder) is None


def test_a_check_refuses_the_untouched_start_state(tmp_path) -> None:
    """Every family's request changes something: its check fails before the calls ran."""
    for i, (name, gen) in enumerate(sorted(GENERATORS.items())):
        folder = tmp_path / name
        folder.mkdir()
        draft = gen(random.Random(i), folder)
        assert draft.family == f"mail.{name}"
        assert draft.check(folder) is not None, draft.request
