"""The quality check before Algorithm 1: non-requests, agent names, other apps and copies are
dropped and counted; every hand-written demonstration of the pool passes."""

from __future__ import annotations

import pytest

from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds
from agentlab.selfinstruct.generate import ParseResult
from agentlab.selfinstruct.quality import QualityCheck, is_request

from .conftest import ScriptedBackend


def test_every_hand_written_demonstration_passes(pool) -> None:  # type: ignore[no-untyped-def]
    failed = []
    for doc in pool:
        check = QualityCheck.for_agent(doc, pool.names)
        texts = [d.text for d in doc.demonstrations]
        for i, t in enumerate(texts):
            why = check.reason(t, texts[:i] + texts[i + 1 :])
            if why:
                failed.append((doc.name, t, why))
    assert failed == []


@pytest.mark.parametrize(
    "text",
    [
        "Set an alarm for 7:30 tomorrow morning.",
        "Could you mute the group chat until Monday?",
        "I need the cheapest flight to Lisbon in May.",
        "How do I turn off read receipts?",
        "In cell B2, put the sum of column A.",
        "Every Monday at 9, remind me to send the report.",
    ],
)
def test_requests_pass(text: str) -> None:
    assert is_request(text)


@pytest.mark.parametrize(
    "text",
    [
        "The product will not be sold at the end of the day.",
        "You can do it here.",
        "It will be my first customer.",
        "This feature can be used for customization purposes.",
        "In the end, the user will be given an answer.",
    ],
)
def test_statements_are_not_requests(text: str) -> None:
    assert not is_request(text)


def test_agent_names_other_apps_and_copies(pool) -> None:  # type: ignore[no-untyped-def]
    calc = QualityCheck.for_agent(pool.get("CalcAgent"), pool.names)
    assert calc.reason("Set up CalcAgent so it opens my budget sheet on start.", []) == "names_agent"
    mail = QualityCheck.for_agent(pool.get("MailAgent"), pool.names)
    # "Friday" is an agent's name but also a word: not talk about an agent
    assert mail.reason('Reply to Laura with "See you on Friday."', []) is None
    gmail = QualityCheck.for_agent(pool.get("GmailAgent"), pool.names)
    assert gmail.reason("Share this message to the team via Twitter.", []) == "other_app"
    x = QualityCheck.for_agent(pool.get("XAgent"), pool.names)
    assert x.reason("Post a tweet saying the meetup moved to 7 pm.", []) is None  # its own app
    web = QualityCheck.for_agent(pool.get("WebAgent"), pool.names)
    assert web.reason("Open Chrome and compare hotel prices in Rome for June 3-5.", []) is None  # its document names Chrome
    seed = pool.get("GmailAgent").demonstrations[0].text
    copy = seed.replace("the", "a", 1) if " the " in seed else seed + " now"
    assert gmail.reason(copy, [seed]) == "copies_seed"
    assert gmail.reason(copy, []) is None


def test_filter_moves_failures_to_counted_drops(pool) -> None:  # type: ignore[no-untyped-def]
    check = QualityCheck.for_agent(pool.get("ClockAgent"), pool.names)
    parsed = ParseResult(candidates=["Set an alarm for 6.", "You can have a wonderful sleep tomorrow.", "Start a timer."])
    parsed.drop("chatter", "Sure:")
    out = check.filter(parsed, [])
    assert out.candidates == ["Set an alarm for 6.", "Start a timer."]
    assert out.reasons == {"chatter": 1, "not_a_request": 1}
    assert out.dropped["not_a_request"] == ["You can have a wonderful sleep tomorrow."]
    assert parsed.candidates[1] == "You can have a wonderful sleep tomorrow."  # the input is left alone


MIXED = (
    " Set an alarm for 7:30 tomorrow morning.\n"
    "8. You can have a wonderful sleep tomorrow.\n"
    "9. Ask ClockAgent to be faster in the morning.\n"
    "10. Add the city Tokyo to my world clock.\n"
)


@pytest.mark.parametrize("quality", [True, False])
def test_pipeline_drops_failing_lines_before_the_band(tmp_path, pool, fast, quality: bool) -> None:  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.pipeline import run_selfinstruct

    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=-1.0, tau2=0.99, leakage_tau=0.99)
    th.save(tmp_path / "th.json")
    cfg = SelfInstructConfig(
        agents=["ClockAgent"], per_agent=100, max_rounds=1, prompts_per_round=1, sequences_per_prompt=1,
        thresholds=tmp_path / "th.json", leakage=False, out_dir=tmp_path / "out", quality=quality,
    )
    rep = run_selfinstruct(cfg, pool=pool, backend=ScriptedBackend([MIXED]), scorer=fast, progress=False)
    a = rep.agent("ClockAgent")
    texts = {c["text"] for c in rep.candidates}
    if quality:
        assert a.parse_rejects == {"names_agent": 1, "not_a_request": 1} == a.quality_rejects
        assert texts == {"Set an alarm for 7:30 tomorrow morning.", "Add the city Tokyo to my world clock."}
        row = next(r for r in (tmp_path / "out" / "report.md").read_text().splitlines() if r.startswith("| ClockAgent |"))
        assert "| names_agent 1, not_a_request 1 |" in row  # its own column, apart from the parser's drops
    else:
        assert a.parse_rejects == {} and len(texts) == 4
