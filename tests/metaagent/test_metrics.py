"""Routing metrics on hand-made predictions (real pool, real MiniLM BERTScore)."""

from __future__ import annotations

import pytest

from agentlab.errors import DataError
from agentlab.eval.metrics import agent_match, routing_accuracy, subtask_accuracy, topk_recall


def test_routing_accuracy_counts_domains_failures_and_strangers(pool) -> None:
    # CalcAgent and SheetAgent share the calc domain: either is correct for a calc task.
    pred = ["CalcAgent", "SheetAgent", "MailAgent", None, "NotAnAgent"]
    gold = ["calc", "calc", "chrome", "chrome", "calc"]
    rep = routing_accuracy(pred, gold, pool)
    assert (rep.overall.correct, rep.overall.total) == (2, 5)
    assert rep.per_domain["calc"].accuracy == pytest.approx(2 / 3)
    assert rep.per_domain["chrome"].accuracy == 0.0
    assert rep.failures == 1
    assert rep.macro_accuracy == pytest.approx((2 / 3 + 0) / 2)
    assert "overall" in rep.table() and "40.0%" in rep.table()
    with pytest.raises(DataError):
        routing_accuracy(pred[:2], gold, pool)


def test_agent_match_and_topk_recall(pool) -> None:
    plans = [["SheetAgent", "MailAgent"], ["SheetAgent", "CalcAgent"], []]
    gold = [["calc", "thunderbird"], ["calc", "thunderbird"], ["calc"]]
    am = agent_match(plans, gold, pool)
    assert (am.correct, am.total) == (1, 3)
    rankings = [["SheetAgent", "ChromeAgent", "MailAgent"], ["VLCAgent", "CalcAgent", "MailAgent"], ["CalcAgent"]]
    assert topk_recall(rankings, gold, pool, k=1) == pytest.approx((0.5 + 0 + 1) / 3)
    assert topk_recall(rankings, gold, pool, k=3) == pytest.approx(1.0)


def test_subtask_accuracy_needs_same_domain_and_similar_text(pool, scorer) -> None:
    predicted = [[("SheetAgent", "compute the sum of column B in a new sheet"), ("MailAgent", "play a video")]]
    gold = [[("calc", "compute the sum of column B in a new sheet"), ("MailAgent", "send the file to Bob by email")]]
    s = subtask_accuracy(predicted, gold, pool, scorer)
    assert (s.correct, s.total) == (1, 2)
    # Same text but the wrong domain does not count.
    s = subtask_accuracy([[("VLCAgent", "compute the sum of column B in a new sheet")]], [[("calc", "compute the sum of column B in a new sheet")]], pool, scorer)
    assert s.correct == 0
