"""The store's decision: the device first, specialists first, a generalist for a request naming two applications."""

from __future__ import annotations

import math

import pytest

from agentlab.errors import ConfigError
from agentlab.metaagent.store import StoreRule, check_policy
from agentlab.pool import AgentPool
from agentlab.tasks.decisions import RouteResult


@pytest.fixture(scope="module")
def rule(pool: AgentPool) -> StoreRule:
    return StoreRule(pool)


def test_a_generalist_that_scored_highest_gives_way_to_the_best_specialist(rule: StoreRule) -> None:
    res = RouteResult("PCAgent", [("PCAgent", 0.5), ("SheetAgent", 0.3), ("WordAgent", 0.2)])
    out = rule.decide(res, "Sort the rows of budget.xlsx by amount", "desktop")
    assert out.agent == "SheetAgent" and out.ranking == res.ranking  # the ranking shows what the router thought


def test_a_request_naming_two_applications_goes_to_the_best_generalist(rule: StoreRule) -> None:
    res = RouteResult("SheetAgent", [("SheetAgent", 0.6), ("AgentS2", 0.2), ("PCAgent", 0.1), ("WordAgent", 0.1)])
    text = "Copy the total of invoice.xlsx (open in LibreOffice Calc) into letter.docx (open in LibreOffice Writer)"
    assert rule.decide(res, text, "desktop").agent == "AgentS2"
    # a specialist's single-application request stays with it, and so does the router's own choice
    assert rule.decide(res, "Sum the Amount column of invoice.xlsx", "desktop") is res


def test_the_device_comes_first_even_for_a_generalist(rule: StoreRule) -> None:
    """A desktop request naming two desktop applications never goes to the phone's generalist."""
    res = RouteResult("AppAgent", [("AppAgent", 0.5), ("SheetAgent", 0.3), ("PCAgent", 0.2)])
    text = "Put the figures from report.docx into budget.xlsx"
    assert rule.decide(res, text, "desktop").agent == "PCAgent"
    assert rule.decide(res, "Sum column B of budget.xlsx", "desktop").agent == "SheetAgent"


def test_a_pool_without_generalists_is_left_as_the_router_decided(pool: AgentPool) -> None:
    small = StoreRule(pool.subset(["SheetAgent", "WordAgent"]))
    res = RouteResult("WordAgent", [("WordAgent", 0.6), ("SheetAgent", 0.4)])
    assert small.decide(res, "Copy report.docx into budget.xlsx", "desktop") is res


def test_the_signal_threshold_is_explicit(pool: AgentPool) -> None:
    assert StoreRule(pool).threshold == math.inf  # by default the signal never falls back
    eager = StoreRule(pool, threshold=0.1)
    res = RouteResult("SheetAgent", [("SheetAgent", 0.5), ("PCAgent", 0.3), ("AgentS2", 0.2)])
    assert eager.decide(res, "Tidy up this", "desktop").agent == "PCAgent"  # generalists' mass 0.5 > 0.1


def test_an_unknown_policy_is_one_clear_error() -> None:
    assert check_policy("open") == "open"
    with pytest.raises(ConfigError, match="--policy must be one of store, open, not 'greedy'"):
        check_policy("greedy")


def test_a_request_whose_phrases_need_two_applications_goes_to_a_generalist_with_the_detector(
        pool: AgentPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """No application is named; the phrase detector (when given) sees notes -> writer, slides -> impress."""
    from agentlab.metaagent import spans
    from tests.metaagent.test_spans import WordEncoder, _detector

    monkeypatch.setattr(spans, "_encoder", lambda model_id: WordEncoder())
    res = RouteResult("SlideAgent", [("SlideAgent", 0.6), ("AgentS2", 0.2), ("PCAgent", 0.1), ("WordAgent", 0.1)])
    text = "turn the meeting notes into slides"
    assert StoreRule(pool).decide(res, text, "desktop") is res  # named applications only: stays
    assert StoreRule(pool, spans=_detector()).decide(res, text, "desktop").agent == "AgentS2"
    assert StoreRule(pool, spans=_detector()).decide(res, "make the slides of the deck blue", "desktop") is res
