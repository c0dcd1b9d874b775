"""Device-aware routing: a decision restricted to the agents of the task's platform."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlab.metaagent.device import on_platform, platform_of_env
from agentlab.pool import AgentPool
from agentlab.tasks.decisions import RouteResult


def test_envs_name_their_platforms() -> None:
    assert platform_of_env("workspace") == platform_of_env("desktop") == "desktop"
    assert platform_of_env("phone") == "mobile" and platform_of_env("nope") is None


def test_a_cross_device_choice_goes_to_the_best_agent_of_the_platform(pool: AgentPool) -> None:
    res = RouteResult("TemuAgent", [("TemuAgent", 0.5), ("ChromeAgent", 0.3), ("YelpAgent", 0.1), ("WebAgent", 0.1)],
                      error="a warning kept")
    out = on_platform(res, pool, "desktop")
    assert out.agent == "ChromeAgent" and out.error == "a warning kept"
    assert [n for n, _ in out.ranking] == ["ChromeAgent", "WebAgent"]
    assert [round(p, 9) for _, p in out.ranking] == [0.75, 0.25]
    assert on_platform(res, pool, "mobile").agent == "TemuAgent"  # already on the platform: the decision stands
    assert on_platform(res, pool, None) is res
    # no ranked agent of the platform: nothing to choose from, the decision is left as it was
    only_phone = RouteResult("TemuAgent", [("TemuAgent", 1.0)])
    kept = on_platform(only_phone, pool, "desktop")
    assert kept.agent == "TemuAgent" and kept.ranking == only_phone.ranking
    assert kept.error == "no agent of platform 'desktop' was ranked; kept TemuAgent"  # said, not hidden


def test_a_decoded_choice_on_the_platform_is_kept_over_the_ranking_top(pool: AgentPool) -> None:
    """AgentToken decodes greedily; its choice may not be the ranking's top. On the platform, it stands."""
    res = RouteResult("SheetAgent", [("TemuAgent", 0.6), ("CalcAgent", 0.3), ("SheetAgent", 0.1)])
    assert on_platform(res, pool, "desktop").agent == "SheetAgent"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=4, max_size=4), st.sampled_from(["desktop", "mobile"]))
def test_the_restricted_ranking_is_a_distribution_over_the_platform(pool: AgentPool, probs: list[float], platform: str) -> None:
    names = ["TemuAgent", "ChromeAgent", "YelpAgent", "CalcAgent"]
    ranking = sorted(zip(names, probs), key=lambda x: -x[1])
    out = on_platform(RouteResult(ranking[0][0], ranking), pool, platform)
    assert out.agent is not None and pool.get(out.agent).platform == platform
    assert all(pool.get(n).platform == platform for n, _ in out.ranking)
    total = sum(p for _, p in out.ranking)
    assert total == 0 or abs(total - 1) < 1e-9
