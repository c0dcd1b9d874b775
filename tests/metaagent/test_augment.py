"""Document requests: Applications items and Capabilities sentences rewritten as requests, deterministically."""

from __future__ import annotations

from agentlab.metaagent.augment import add_document_requests, base_form, capability_request, document_requests, pool_requests
from agentlab.metaagent.data import load_training_set


def test_base_form_of_third_person_verbs() -> None:
    assert [base_form(v) for v in ("creates", "applies", "searches", "fixes", "goes", "pins", "handles")] == [
        "create", "apply", "search", "fix", "go", "pin", "handle"]


def test_capability_sentences_become_imperative_requests() -> None:
    assert capability_request("It can also edit captions of slides.", "SlideAgent") == "Please edit captions of slides."
    assert capability_request("SheetAgent creates charts with openpyxl.", "SheetAgent") == "Please create charts with openpyxl."
    assert capability_request("It sends, forwards and pins messages.", "TelegramAgent") == "Please send, forwards and pins messages."
    # descriptions of the agent, other subjects and self-references are not requests
    assert capability_request("It acts through taps on the screen.", "TelegramAgent") is None
    assert capability_request("TelegramAgent is specialised in Telegram.", "TelegramAgent") is None
    assert capability_request("Because it edits cells in code, it is fast.", "SheetAgent") is None
    assert capability_request("It asks SheetAgent for help.", "SheetAgent") is None


def test_document_requests_are_deterministic_and_name_the_applications(pool) -> None:
    doc = pool.get("SheetAgent")
    reqs = document_requests(doc)
    assert reqs == document_requests(doc)
    assert reqs[0] == "I need to get something done in Terminal."
    assert any("openpyxl" in r for r in reqs)  # the parenthesis does not split the item
    assert not any("SheetAgent" in r for r in reqs)
    assert all(len(v) >= 1 for v in pool_requests(pool).values())


def test_add_document_requests_appends_labelled_rows_without_duplicates(pool) -> None:
    sub = pool.subset(["SheetAgent", "TelegramAgent"])
    base = load_training_set(sub, source="seed")
    more = add_document_requests(base, sub)
    assert more.texts[: len(base)] == base.texts
    extra = list(zip(more.texts[len(base):], more.labels[len(base):]))
    assert extra and all(more.agents[y] in ("SheetAgent", "TelegramAgent") for _, y in extra)
    assert {t for t, y in extra if more.agents[y] == "TelegramAgent"} == set(document_requests(sub.get("TelegramAgent")))
    assert len({t.lower() for t in more.texts}) == len(more)
    assert len(add_document_requests(more, sub)) == len(more)  # idempotent
