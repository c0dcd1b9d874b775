"""The AgentToken ablation study: variants fitted on the same data, scored on both task sets."""

from __future__ import annotations

import pytest

from agentlab.eval.benchmarks import load_project_set
from agentlab.experiments import router_ablation as ra
from agentlab.experiments.routing_data import single_app_tasks
from agentlab.metaagent.data import load_training_set
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())

AGENTS = ["SheetAgent", "CalcAgent", "ClockAgent"]


@needs_lists
def test_ablation_rows_score_both_sets_and_documents_add_examples(pool):
    small = pool.subset(AGENTS)
    base = load_training_set(small, source="seed", per_agent=3)
    domains = {a.domain for a in small}
    sets = {"bench": single_app_tasks(small)[:5], "project": [t for t in load_project_set() if t.domain in domains][:6]}
    variants = [
        ra.Variant("emb", "embedding"),
        ra.Variant("emb + docs", "embedding", documents=True),
        ra.Variant("at", "agenttoken", {"train": {"epochs": 3, "margin": 1.0}, "max_word_tokens": 1}),
    ]
    results = ra.run(small, base, sets, variants)
    assert [r.variant.label for r in results] == ["emb", "emb + docs", "at"]
    assert results[0].train_examples == 9 < results[1].train_examples
    for r in results:
        assert r.scores["bench"].agent is None  # the benchmarks name no gold agent
        proj = r.scores["project"]
        assert proj.agent is not None and proj.agent.accuracy <= proj.domain.accuracy
    table = ra.table(results, list(sets))
    assert table[0].startswith("| variant | train examples | bench domain % | project domain % | project agent %")
    assert len(table) == 2 + 3
    assert list(ra.to_frame(results, list(sets)).index) == ["emb", "emb + docs", "at"]
