"""AgentTokenRouter on the real SmolLM2: ranking, greedy decoding with fallback, checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from agentlab.errors import CheckpointError, ConfigError
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.checkpoint import paths_for
from agentlab.metaagent.data import load_training_set
from agentlab.metaagent.train import TrainConfig

AGENTS = ["SheetAgent", "SpotifyAgent", "MailAgent"]
TASKS = ["Add a SUM formula under column C of budget.xlsx", "Play my Discover Weekly playlist", "Email the report to Bob"]


@pytest.fixture(scope="module")
def small(pool):
    sub = pool.subset(AGENTS)
    train = load_training_set(sub, source="seed", per_agent=4)
    router = AgentTokenRouter(sub, train=TrainConfig(epochs=30), use_cache=False, progress=False, max_word_tokens=2)
    metrics = router.fit(train)
    return sub, router, metrics


def test_fit_and_rank_sums_to_one(small) -> None:
    sub, router, metrics = small
    assert metrics["train_acc"] == 1.0 and metrics["seconds"] > 0
    rankings = router.rank(TASKS)
    for r in rankings:
        assert sorted(n for n, _ in r) == sorted(AGENTS)
        assert abs(sum(p for _, p in r) - 1.0) < 1e-5
        assert [p for _, p in r] == sorted((p for _, p in r), reverse=True)
    assert [r[0][0] for r in rankings] == AGENTS


def test_route_stops_on_agent_token_or_falls_back_loudly(small) -> None:
    sub, router, _ = small
    res = router.route(TASKS[:1])[0]
    assert res.agent in AGENTS and abs(sum(p for _, p in res.ranking) - 1) < 1e-5
    saved = router.head.logit_bias
    try:
        router.head.logit_bias = -1e4  # agent tokens can never win: decode words, then fall back
        res = router.route(TASKS[:1])[0]
        assert res.agent == router.rank(TASKS[:1])[0][0][0]
        assert "fell back" in res.error and res.raw is not None
        router.head.logit_bias = 1e4  # agent token wins at the first position
        res = router.route(TASKS[:1])[0]
        assert res.error is None and res.raw is None
    finally:
        router.head.logit_bias = saved


def test_checkpoint_round_trip(small, tmp_path: Path) -> None:
    sub, router, _ = small
    router.save(tmp_path / "ck")
    again = AgentTokenRouter.load(tmp_path / "ck", sub, use_cache=False, progress=False)
    assert again.agents == AGENTS
    assert torch.equal(again.head.weight, router.head.weight)
    assert again.rank(TASKS[:1]) == router.rank(TASKS[:1])


def _edit(sidecar: Path, **changes) -> None:
    meta = json.loads(sidecar.read_text())
    for k, v in changes.items():
        meta[k] = v
    sidecar.write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda w, j: _edit(j, backbone={"id": "OtherLM", "fingerprint": "0123", "identity": "weights/1"}), "backbone OtherLM"),
        (lambda w, j: _edit(j, backbone={"id": "OtherLM", "fingerprint": "0123"}), "older agentlab"),
        (lambda w, j: _edit(j, template={"name": "metaagent/router_agenttoken", "sha256": "f" * 64}), "changed since training"),
        (lambda w, j: _edit(j, agents=["SheetAgent", "Ghost", "MailAgent"]), "not in the pool: Ghost"),
        (lambda w, j: w.write_bytes(w.read_bytes()[:-7] + b"garbage"), "checksum"),
        (lambda w, j: j.write_text("{not json"), "corrupt sidecar"),
        (lambda w, j: j.unlink(), "sidecar tokens.json is missing"),
    ],
)
def test_bad_checkpoints_fail_with_one_line(small, tmp_path: Path, damage, message: str) -> None:
    sub, router, _ = small
    router.save(tmp_path / "ck")
    w, j = paths_for(tmp_path / "ck")
    damage(w, j)
    with pytest.raises(CheckpointError) as err:
        AgentTokenRouter.load(tmp_path / "ck", sub, use_cache=False, progress=False)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert "tokens." in str(err.value)  # names the file


def test_unknown_router_kind_and_untrained_router(pool) -> None:
    from agentlab.metaagent.router import router_class

    assert router_class("agenttoken") is AgentTokenRouter
    with pytest.raises(ConfigError, match="unknown router"):
        router_class("oracle")
    with pytest.raises(ConfigError, match="no tokens"):
        AgentTokenRouter(pool, use_cache=False).rank(["x"])


def test_manager_mode_uses_top_k_documents(small) -> None:
    from agentlab.llm.base import LLMBackend
    from agentlab.metaagent.manager import HashManager

    class Recorder(LLMBackend):
        model_id = "recorder"
        prompts: list[str] = []

        def chat(self, messages, params=None):  # type: ignore[override]
            self.prompts.append(messages[0].content)
            return ["###SheetAgent: total the column###\n###MailAgent: email the sheet###"]

        def complete(self, prompt, params=None):  # type: ignore[override]
            raise AssertionError

    sub, router, _ = small
    task = "Total column C of budget.xlsx and email it to Bob"
    res = router.plan([task], HashManager(Recorder(), constrained=False), k=2)[0]
    top2 = [n for n, _ in router.rank([task])[0][:2]]
    assert [s.agent for s in res.plan] == ["SheetAgent", "MailAgent"] and res.agent == "SheetAgent"
    assert res.ranking == router.rank([task])[0]
    prompt = Recorder.prompts[-1]
    assert all(f"Agent: {n} " in prompt for n in top2)
    assert sum(f"Agent: {n} " in prompt for n in AGENTS) == 2


def test_task_longer_than_context_is_one_line_error(small) -> None:
    from agentlab.errors import DataError

    sub, router, _ = small
    with pytest.raises(DataError, match="does not fit the 8192-token context") as err:
        router.rank(["open the file " * 3000])
    assert "\n" not in str(err.value)


def test_shipped_checkpoint_loads_with_its_template(pool) -> None:
    from agentlab.dialogue.templates import load_template
    from agentlab.metaagent.checkpoint import load_checkpoint
    from agentlab.paths import data_dir

    ckpt = load_checkpoint(data_dir() / "tokens")
    assert ckpt.template_name == "metaagent/router_agenttoken"
    assert load_template(ckpt.template_name).sha256 == ckpt.template_sha256
    router = AgentTokenRouter.load(data_dir() / "tokens", pool, progress=False)
    assert router.agents == ckpt.agents


def test_changed_template_names_it_and_says_retrain(small, tmp_path: Path) -> None:
    sub, router, _ = small
    router.save(tmp_path / "ck")
    _, j = paths_for(tmp_path / "ck")
    _edit(j, template={"name": "metaagent/router_agenttoken", "sha256": "e" * 64})
    with pytest.raises(CheckpointError) as err:
        AgentTokenRouter.load(tmp_path / "ck", sub, use_cache=False, progress=False)
    msg = str(err.value)
    assert "'metaagent/router_agenttoken'" in msg and "router_agenttoken.txt" in msg
    assert "e" * 64 in msg and router.extractor.template.sha256 in msg
    assert "agentlab train" in msg and "restore the template file" in msg
