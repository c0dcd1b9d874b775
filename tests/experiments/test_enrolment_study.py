"""Routing before and after new agents join (real SmolLM2 backbone, a small pool)."""

from __future__ import annotations

import pytest

from agentlab.errors import CheckpointError
from agentlab.experiments.enrolment import EnrolmentConfig, run
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.data import load_training_set
from agentlab.metaagent.train import TrainConfig

OLD = ["SheetAgent", "SpotifyAgent", "MailAgent"]
NEW = "PCAgent"
TARGETS = {
    "t1": "Find the total in the expenses workbook and write it into the second paragraph of the report document.",
    "t2": "Take the names listed in the memo file and enter them into the staff spreadsheet, then update the letter.",
}
OPTS = {"use_cache": False, "max_word_tokens": 2}


@pytest.fixture(scope="module")
def base_tokens(pool, tmp_path_factory):
    sub = pool.subset(OLD)
    router = AgentTokenRouter(sub, train=TrainConfig(epochs=30), progress=False, **OPTS)
    router.fit(load_training_set(sub, source="seed", per_agent=6))
    path = tmp_path_factory.mktemp("ck") / "base"
    router.save(path)
    return path


def test_enrolment_keeps_old_tokens_and_reports_before_and_after(pool, base_tokens):
    sub = pool.subset([*OLD, NEW])
    res = run(sub, EnrolmentConfig(new_agents=[NEW], tokens=base_tokens, source="all", per_agent=6, max_eval_tasks=12),
              router_options=OPTS, target_texts=TARGETS)
    assert res.existing_unchanged  # only the new row trained
    assert res.agents_before == 3 and set(res.added) == {NEW} and res.added[NEW]["demonstrations"] == 6
    assert res.target_before == 0.0  # nobody could pick an agent that was not there
    assert res.target_tasks == 2 and set(res.target_routes) == {"t1", "t2"}
    assert all(a in sub for a in res.target_routes.values())
    assert res.before.overall.total == res.after.overall.total == 12
    assert 0.0 <= res.taken_by_new <= 1.0
    frame = res.frame()
    assert list(frame.index) == ["before", "after"] and frame.loc["after", "agents"] == 4
    assert frame.loc["after", "target tasks to new agents %"] == round(100 * res.target_after, 1)


def test_a_checkpoint_that_already_has_the_new_agent_is_refused(pool, base_tokens):
    with pytest.raises(CheckpointError, match="not in the pool: MailAgent"):
        run(pool.subset(OLD), EnrolmentConfig(new_agents=["MailAgent"], tokens=base_tokens), router_options=OPTS,
            target_texts=TARGETS)
