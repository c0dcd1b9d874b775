"""A result row's ``verdict``: what each check expected and found, JSON-safe and short (issue #29)."""

from __future__ import annotations

import json

from agentlab.judge.evaluators import CheckOutcome, EvalResult


def test_the_record_names_each_check_with_what_it_expected_and_found() -> None:
    res = EvalResult(0.0, [CheckOutcome("exact_match", 0.0, "Totals", "Total"),
                           CheckOutcome("contains", 0.0, None, "x", error="report.xlsx: file not found")])
    rec = res.as_record()
    assert rec["score"] == 0.0 and rec["success"] is False
    assert rec["checks"][0] == {"metric": "exact_match", "score": 0.0, "expected": "Total", "found": "Totals", "error": None}
    assert rec["checks"][1]["error"] == "report.xlsx: file not found" and rec["checks"][1]["found"] is None
    json.dumps(rec)  # goes into results.jsonl as it is


def test_values_json_cannot_hold_become_text_and_long_ones_are_cut() -> None:
    res = EvalResult(1.0, [CheckOutcome("is_true", 1.0, {1, 2}, b"raw"), CheckOutcome("contains", 1.0, "a" * 5000, ["a"] * 3000)])
    first, second = res.as_record(limit=100)["checks"]
    assert first["found"] == "{1, 2}" and first["expected"] == "b'raw'"
    assert second["found"].startswith("a" * 100) and second["found"].endswith("…(5000 chars)") and len(second["found"]) < 130
    assert isinstance(second["expected"], str) and second["expected"].endswith("chars)")
    json.dumps(res.as_record())
