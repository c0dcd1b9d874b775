"""The store policy: who is a generalist, when a task falls back to one, how the threshold is fitted,
and that the manager plans over specialists unless told otherwise."""

from __future__ import annotations

import pytest

from agentlab.errors import ConfigError
from agentlab.llm.base import LLMBackend
from agentlab.metaagent.manager import HashManager
from agentlab.metaagent.store_policy import FallbackPolicy, fallback_score, fit_threshold, generalists, is_generalist, separation


def test_generalists_are_the_catch_all_gui_agents(pool) -> None:
    names = generalists(pool)
    assert {"AgentS2", "PCAgent", "AppAgent"} <= set(names)
    # tool agents with the catch-all domain serve one tool: specialists
    assert not {"CoderAgent", "GoogleDrive", "Searcher", "VisionAgent", "SheetAgent"} & set(names)
    assert all(is_generalist(pool.get(n)) for n in names)


def test_fallback_when_no_specialist_is_sure() -> None:
    policy = FallbackPolicy(("AgentS2", "PCAgent"), threshold=0.7)  # best specialist below 0.3 -> fall back
    sure = [("AgentS2", 0.5), ("SheetAgent", 0.35), ("PCAgent", 0.1), ("WordAgent", 0.05)]
    d = policy.decide(sure)
    assert d.agent == "SheetAgent" and not d.fell_back and d.score == pytest.approx(0.65)
    unsure = [("SheetAgent", 0.25), ("PCAgent", 0.2), ("WordAgent", 0.2), ("AgentS2", 0.1)]
    d = policy.decide(unsure)
    assert d.agent == "PCAgent" and d.fell_back and d.specialist == "SheetAgent"


def test_fallback_on_generalist_mass() -> None:
    ranking = [("SheetAgent", 0.4), ("AgentS2", 0.25), ("PCAgent", 0.2), ("WordAgent", 0.15)]
    assert fallback_score(ranking, ["AgentS2", "PCAgent"], "generalist_mass") == pytest.approx(0.45)
    assert FallbackPolicy(("AgentS2", "PCAgent"), 0.4, "generalist_mass").decide(ranking).agent == "AgentS2"
    assert FallbackPolicy(("AgentS2", "PCAgent"), 0.5, "generalist_mass").decide(ranking).agent == "SheetAgent"
    with pytest.raises(ConfigError):
        FallbackPolicy(("AgentS2",), 0.5, "vibes")


def test_fallback_keeps_the_routers_own_specialist() -> None:
    policy = FallbackPolicy(("AgentS2",), threshold=0.9)
    ranking = [("SheetAgent", 0.5), ("CalcAgent", 0.4), ("AgentS2", 0.1)]
    assert policy.decide(ranking, routed="CalcAgent").agent == "CalcAgent"
    assert policy.decide(ranking, routed="AgentS2").agent == "SheetAgent"  # a generalist is never taken below the threshold


def test_threshold_fit_respects_the_budget() -> None:
    spec = [i / 100 for i in range(1, 101)]  # 0.01 .. 1.00
    fit = fit_threshold(spec, [0.995, 0.985, 0.5], max_specialist_fallback=0.05)
    assert fit.threshold == pytest.approx(0.95)  # 0.96 .. 1.00 (5 of 100) lie above it
    assert fit.specialist_fallback == pytest.approx(0.05) and fit.generalist_fallback == pytest.approx(2 / 3)
    assert fit_threshold(spec, [0.5], max_specialist_fallback=0.0).threshold == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        fit_threshold([], [0.1])


def test_separation_is_an_auc() -> None:
    assert separation([0.1, 0.2], [0.3, 0.4]) == 1.0
    assert separation([0.3, 0.4], [0.1, 0.2]) == 0.0
    assert separation([0.1, 0.3], [0.2, 0.3]) == pytest.approx((1 + 1 + 0.5) / 4)


class _NoModel(LLMBackend):
    model_id = "none"

    def chat(self, messages, params=None):  # type: ignore[override]
        raise AssertionError

    def complete(self, prompt, params=None):  # type: ignore[override]
        raise AssertionError


def test_manager_candidates_are_specialists_unless_generalists(pool) -> None:
    ranked = [pool.get(n) for n in ["SheetAgent", "PCAgent", "AgentS2", "WordAgent", "SlideAgent", "CalcAgent", "MailAgent"]]
    plain = HashManager(_NoModel(), constrained=False)
    assert [d.name for d in plain.candidates(ranked, 3)] == ["SheetAgent", "WordAgent", "SlideAgent"]
    both = HashManager(_NoModel(), constrained=False, generalists=True)
    assert [d.name for d in both.candidates(ranked, 3)] == ["SheetAgent", "PCAgent", "AgentS2"]
    only_general = [pool.get("AgentS2"), pool.get("PCAgent")]
    assert [d.name for d in plain.candidates(only_general, 5)] == ["AgentS2", "PCAgent"]  # nothing else to plan with


def test_distinct_domain_candidates(pool) -> None:
    ranked = [pool.get(n) for n in ["SheetAgent", "CalcAgent", "PCAgent", "WordAgent", "WriterAgent", "SlideAgent"]]
    m = HashManager(_NoModel(), constrained=False, distinct_domains=True)
    assert [d.name for d in m.candidates(ranked, 2)] == ["SheetAgent", "WordAgent"]
    assert [d.name for d in m.candidates(ranked, 5)] == ["SheetAgent", "WordAgent", "SlideAgent"]
