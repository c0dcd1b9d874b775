"""Agent-level routing scores and the CLI/GUI confusion (real pool), by hand and by property."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.cli import main
from agentlab.errors import DataError
from agentlab.eval.metrics import agent_accuracy, routing_accuracy


def test_agent_level_tells_sheetagent_from_calcagent(pool) -> None:  # type: ignore[no-untyped-def]
    pred = ["CalcAgent", "SheetAgent", "SheetAgent", "AgentS2", None, "NotAnAgent", "Friday"]
    gold_agents = [["SheetAgent"], ["SheetAgent"], ["CalcAgent"], ["AgentS2", "PCAgent"], ["CalcAgent"], ["Friday"], ["OSAgent"]]
    doms = ["calc", "calc", "calc", "general", "calc", "os", "os"]
    rep = agent_accuracy(pred, gold_agents, doms, pool)
    # domain level: CalcAgent/SheetAgent are all "calc" -> 3 of 4 calc tasks right (None is wrong)
    assert (rep.domain.per_domain["calc"].correct, rep.domain.per_domain["calc"].total) == (3, 4)
    assert (rep.agent.per_domain["calc"].correct, rep.agent.per_domain["calc"].total) == (1, 4)
    assert (rep.agent.overall.correct, rep.agent.overall.total) == (2, 7)
    assert (rep.domain.overall.correct, rep.domain.overall.total) == (5, 7)
    assert rep.agent.failures == 1 and rep.domain.failures == 1
    conf = rep.interface
    assert conf.counts == {"CLI": {"CLI": 1, "GUI": 1}, "GUI": {"CLI": 2, "GUI": 1}}
    assert conf.no_agent == 2 and conf.total == 7
    # CalcAgent for a SheetAgent task, SheetAgent for a CalcAgent task, Friday for an OSAgent task
    assert conf.right_domain_wrong_interface == 3
    assert conf.right_domain_wrong_interface_share == pytest.approx(3 / 7)
    d = rep.as_dict()
    assert d["accuracy"] == pytest.approx(2 / 7) and d["domain_accuracy"] == pytest.approx(5 / 7)
    assert d["per_domain"]["calc"] == {"accuracy": 0.25, "domain_accuracy": 0.75, "n": 4}
    table = rep.table()
    assert "calc" in table and "75.0%" in table and "25.0%" in table
    assert "right domain, wrong interface: 3 of 7" in table and "no agent in the pool chosen for 2" in table


def test_gold_interface_given_or_taken_from_the_pool(pool) -> None:  # type: ignore[no-untyped-def]
    # An explicit interface wins over the pool's; a gold agent outside the pool needs one.
    rep = agent_accuracy(["CalcAgent"], [["FutureSheetBot"]], ["calc"], pool, ["CLI"])
    assert rep.interface.counts["CLI"]["GUI"] == 1 and rep.accuracy == 0.0
    with pytest.raises(DataError, match="none of the gold agents"):
        agent_accuracy(["CalcAgent"], [["FutureSheetBot"]], ["calc"], pool)
    with pytest.raises(DataError, match="interface 'TUI'"):
        agent_accuracy(["CalcAgent"], [["CalcAgent"]], ["calc"], pool, ["TUI"])
    with pytest.raises(DataError, match="empty"):
        agent_accuracy(["CalcAgent"], [[]], ["calc"], pool)
    with pytest.raises(DataError, match="2 predictions"):
        agent_accuracy(["CalcAgent", "SheetAgent"], [["CalcAgent"]], ["calc"], pool)


@st.composite
def _routing(draw, pool):  # type: ignore[no-untyped-def]
    """Tasks whose gold agents are agents of the gold domain sharing one interface, and any predictions."""
    by_dom_iface: dict[tuple[str, str], list[str]] = {}
    for a in pool:
        by_dom_iface.setdefault((a.domain, a.interface), []).append(a.name)
    keys = sorted(by_dom_iface)
    n = draw(st.integers(1, 25))
    golds, doms, preds = [], [], []
    for _ in range(n):
        dom, iface = draw(st.sampled_from(keys))
        names = by_dom_iface[(dom, iface)]
        golds.append(draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True)))
        doms.append(dom)
        preds.append(draw(st.one_of(st.sampled_from(pool.names), st.none(), st.just("Stranger"))))
    return preds, golds, doms


def test_agent_level_never_exceeds_domain_level(pool) -> None:  # type: ignore[no-untyped-def]
    @settings(max_examples=150, deadline=None)
    @given(_routing(pool))
    def check(case) -> None:  # type: ignore[no-untyped-def]
        preds, golds, doms = case
        rep = agent_accuracy(preds, golds, doms, pool)
        assert rep.agent.overall.correct <= rep.domain.overall.correct
        for d, s in rep.agent.per_domain.items():
            assert s.correct <= rep.domain.per_domain[d].correct and s.total == rep.domain.per_domain[d].total
        # the domain half is exactly the domain-level metric
        assert rep.domain.overall.correct == routing_accuracy(preds, doms, pool).overall.correct
        # right domain through the wrong interface is right by domain and wrong by agent
        conf = rep.interface
        assert conf.right_domain_wrong_interface <= rep.domain.overall.correct - rep.agent.overall.correct
        assert sum(sum(row.values()) for row in conf.counts.values()) + conf.no_agent == conf.total == len(preds)

    check()


def test_agent_level_equals_domain_level_when_every_agent_of_the_domain_is_gold(pool) -> None:  # type: ignore[no-untyped-def]
    by_dom = pool.by_domain()

    @settings(max_examples=100, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from(sorted(by_dom)), st.sampled_from(pool.names)), min_size=1, max_size=20))
    def check(cases) -> None:  # type: ignore[no-untyped-def]
        doms = [d for d, _ in cases]
        preds = [p for _, p in cases]
        ifaces = ["GUI"] * len(cases)  # domains with agents of both interfaces need an explicit one
        rep = agent_accuracy(preds, [by_dom[d] for d in doms], doms, pool, ifaces)
        assert rep.agent.overall.correct == rep.domain.overall.correct

    check()


# -- `agentlab eval routing` with gold agents ---------------------------------------------------
def _run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _jsonl(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_eval_routing_adds_agent_level_lines(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    preds = _jsonl(tmp_path / "pred.jsonl", [
        {"id": "a", "agent": "CalcAgent", "ranking": [["CalcAgent", 0.9]]},
        {"id": "b", "agent": "SheetAgent", "ranking": [["SheetAgent", 0.9]]},
        {"id": "c", "agent": "SpotifyAgent", "ranking": [["SpotifyAgent", 0.9]]},
    ])
    plain = _jsonl(tmp_path / "gold.jsonl", [{"id": "a", "domain": "calc"}, {"id": "b", "domain": "calc"},
                                             {"id": "c", "domain": "spotify"}])
    assert _run(["eval", "routing", "--pred", str(preds), "--gold", str(plain)]) == 0
    before = capsys.readouterr().out
    assert "agent-level" not in before and "CLI/GUI" not in before
    gold = _jsonl(tmp_path / "gold2.jsonl", [
        {"id": "a", "domain": "calc", "gold_agents": ["SheetAgent"], "interface": "CLI"},
        {"id": "b", "domain": "calc", "gold_agents": ["SheetAgent"]},
        {"id": "c", "domain": "spotify", "gold_agents": ["SpotifyAgent"], "interface": "GUI"},
    ])
    out_json = tmp_path / "s.json"
    assert _run(["eval", "routing", "--pred", str(preds), "--gold", str(gold), "--json", str(out_json)]) == 0
    after = capsys.readouterr().out
    assert after.startswith(before)  # the domain-level lines are unchanged; agent-level lines follow
    assert "agent-level: 3 task(s) with gold agents  agent accuracy 66.7%  (domain-level on the same tasks 100.0%)" in after
    assert "right domain, wrong interface: 1 of 3 task(s) (33.3%)" in after
    scores = json.loads(out_json.read_text())
    assert scores["routing"]["accuracy"] == 1.0
    assert scores["agent_routing"]["accuracy"] == pytest.approx(2 / 3)
    assert scores["agent_routing"]["interface"]["gold_vs_predicted"]["CLI"] == {"CLI": 1, "GUI": 1}


@pytest.mark.parametrize(("line", "message"), [
    ({"id": "a", "domain": "calc", "gold_agents": []}, "'gold_agents' must be a non-empty list"),
    ({"id": "a", "domain": "calc", "gold_agents": ["SheetAgent"], "interface": "cli"}, "'interface' must be"),
    ({"id": "a", "domain": "calc", "gold_agents": ["GoneAgent"]}, "none of the gold agents"),
])
def test_eval_routing_bad_gold_agents_is_one_line_error(tmp_path, capsys, line, message) -> None:  # type: ignore[no-untyped-def]
    preds = _jsonl(tmp_path / "pred.jsonl", [{"id": "a", "agent": "CalcAgent", "ranking": []}])
    gold = _jsonl(tmp_path / "gold.jsonl", [line])
    assert _run(["eval", "routing", "--pred", str(preds), "--gold", str(gold)]) != 0
    err = capsys.readouterr().err
    assert message in err and str(gold) in err and "Traceback" not in err
