"""The two store-policy benchmarks end to end: the two-application manager study and the generalist fallback."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"policy_bench_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def _summary(out: str) -> dict[str, str]:
    last = [ln for ln in out.splitlines() if ln.strip()][-1]
    return dict(kv.split("=", 1) for kv in last.split())


def test_two_app_plans_refuses_an_unknown_variant(tmp_path: Path, capsys) -> None:
    assert _script("two_app_plans").main(["--variants", "nope", "--results", str(tmp_path / "r.md")]) == 1
    assert "unknown variant 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


def test_the_frozen_requests_name_two_served_applications(pool) -> None:
    from agentlab.experiments.two_app_plans import load_requests

    reqs = load_requests(BENCH.parent / "data" / "benchmarks" / "two_app_requests.jsonl", pool)
    assert len(reqs) >= 40 and len({r.id for r in reqs}) == len(reqs)
    for r in reqs:
        assert {pool.get(a).domain for a in r.gold_agents} == set(r.domains)


@pytest.mark.slow
def test_two_app_plans_smoke_resumes(tmp_path: Path, capsys) -> None:
    mod = _script("two_app_plans")
    args = ["--quick", "--limit", "1", "--variants", "constrained", "--preds", str(tmp_path / "p"), "--results", str(tmp_path / "r.md")]
    assert mod.main(args) == 0
    s = _summary(capsys.readouterr().out)
    assert s["requests"] == "1" and 0.0 <= float(s["constrained_agentmatch"]) <= 1.0 and s["constrained_failed"] == "0"
    first = (tmp_path / "p" / "constrained.jsonl").read_text()
    assert mod.main(args) == 0  # resumed: nothing planned again
    assert (tmp_path / "p" / "constrained.jsonl").read_text() == first
    assert "Command: `python benchmarks/two_app_plans.py --quick" in (tmp_path / "r.md").read_text()


@needs_lists
@pytest.mark.slow
def test_generalist_fallback_smoke(tmp_path: Path, capsys) -> None:
    assert _script("generalist_fallback").main(["--quick", "--results", str(tmp_path / "g.md")]) == 0
    s = _summary(capsys.readouterr().out)
    assert s["signal"] in ("specialist", "generalist_mass")
    # the policy only ever moves tasks between a specialist and a generalist: before has no generalist
    assert 0.0 <= float(s["targets_to_generalist_policy"]) <= 1.0
    assert "| after+policy | 32 |" in (tmp_path / "g.md").read_text()
    # clause detection rows: a fitted threshold, and the same detector swept at larger held-out budgets
    assert 0.0 < float(s["clause_threshold"]) < 1.0 and s["clause_router"] == "embedding"
    text = (tmp_path / "g.md").read_text()
    assert "| after+clauses | 32 |" in text and "| after+policy+clauses | 32 |" in text
    assert "The clause detector alone (`after+clauses`) at larger held-out budgets" in text
    # named applications: every pc-* task names both of its applications, and the record for notebook 04
    assert "| after+mentions | 32 |" in text and "| after+policy+clauses+mentions | 32 |" in text
    assert float(s["targets_to_generalist_mentions"]) >= 0.8
    from agentlab.experiments.generalist_fallback import load_record

    rec = load_record(tmp_path / "g.json")
    assert [r["name"] for r in rec["rows"]][:3] == ["before", "after", "after+policy"]
    assert set(rec["plain_flagged"]) == {"clauses", "named applications", "either"}


@pytest.mark.slow
def test_two_app_plans_clause_steps_plan_without_the_model(tmp_path: Path, capsys) -> None:
    """The clause-steps variant writes each plan from the request's parts (two steps, the parts'
    own words), and the detection table says how often the parts matched the gold pair."""
    mod = _script("two_app_plans")
    args = ["--limit", "3", "--variants", "clause-steps", "--preds", str(tmp_path / "p"), "--provenance", "fresh.",
            "--results", str(tmp_path / "r.md")]
    assert mod.main(args) == 0
    s = _summary(capsys.readouterr().out)
    assert 0.0 <= float(s["clause_pair_embedding"]) <= 1.0 and s["clause-steps_failed"] == "0"
    import json

    recs = [json.loads(line) for line in (tmp_path / "p" / "clause-steps.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(len(r["plan"]) == 2 for r in recs if r["plan"])
    text = (tmp_path / "r.md").read_text()
    assert "| embedding |" in text and "Provenance of the stored plans: fresh." in text
