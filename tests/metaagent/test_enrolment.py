"""Incremental enrolment on the real 30-agent pool: only the new row trains, old agents keep their accuracy."""

from __future__ import annotations

import pytest
import torch

from agentlab.eval.metrics import routing_accuracy
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.data import load_training_set

NEW = "VLCAgent"  # the only agent of its domain: a new row that steals predictions would show


@pytest.mark.slow
def test_adding_an_agent_keeps_existing_accuracy(pool) -> None:
    full = load_training_set(pool, source="seed", per_agent=8)  # 240 prompts keep a cold run short
    # Hold out the last 4 of each agent's 8 seed demonstrations for evaluation.
    train_idx, test_idx = [], []
    for k in range(len(full.agents)):
        idx = [i for i, y in enumerate(full.labels) if y == k]
        train_idx += idx[:-4]
        test_idx += idx[-4:]
    train, test = full.subset(train_idx), full.subset(test_idx)
    old_agents = [a for a in pool.names if a != NEW]

    router = AgentTokenRouter(pool.subset(old_agents), progress=False)
    router.fit(train.restrict(old_agents))
    before_rows = router.head.weight.detach().clone()

    old_test = test.restrict(old_agents)
    before = routing_accuracy([r[0][0] for r in router.rank(old_test.texts)], old_test.domains, pool).accuracy

    router.pool = pool
    router.add_agent(NEW, train)
    assert router.agents == old_agents + [NEW]
    assert torch.equal(router.head.weight[:-1], before_rows)  # existing tokens untouched

    after = routing_accuracy([r[0][0] for r in router.rank(old_test.texts)], old_test.domains, pool).accuracy
    assert after >= before - 0.01, f"existing agents dropped from {before:.3f} to {after:.3f}"
    # The new token does learn its agent: its own training demonstrations now route to it.
    own = [r[0][0] for r in router.rank(train.only(NEW).texts)]
    assert own.count(NEW) >= 0.75 * len(own), own
    held_out = [r[0][0] for r in router.rank(test.only(NEW).texts)]
    print(f"existing agents: {before:.3f} -> {after:.3f}; new agent: train {own.count(NEW)}/{len(own)}, held-out {held_out.count(NEW)}/4")
