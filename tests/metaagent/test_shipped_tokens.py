"""Each embedded backbone has its own shipped token checkpoint; commands find the one for the
configured backbone, and a checkpoint refused for another backbone names the one that fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.errors import CheckpointError
from agentlab.llm.config import EMBEDDED_BACKBONE, EMBEDDED_GEMMA, LLMConfig
from agentlab.metaagent.shipped import shipped_for, shipped_tokens
from agentlab.paths import data_dir

pytestmark = pytest.mark.xdist_group("gemma")


def test_the_configured_backbone_picks_its_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    assert shipped_tokens(LLMConfig(model=EMBEDDED_BACKBONE)) == data_dir() / "tokens"
    assert shipped_tokens(LLMConfig(model=EMBEDDED_GEMMA)) == data_dir() / "tokens" / "gemma3-270m"
    monkeypatch.setenv("AGENTLAB_LLM_MODEL", EMBEDDED_GEMMA)
    assert shipped_tokens() == data_dir() / "tokens" / "gemma3-270m"


def test_shipped_checkpoints_record_different_backbones() -> None:
    import json

    small = json.loads((data_dir() / "tokens" / "tokens.json").read_text())["backbone"]
    gemma = json.loads((data_dir() / "tokens" / "gemma3-270m" / "tokens.json").read_text())["backbone"]
    assert small["id"] == "SmolLM2-135M-Instruct" and gemma["id"] == "Gemma-3-270M"
    assert shipped_for(gemma["fingerprint"]) == data_dir() / "tokens" / "gemma3-270m"
    assert shipped_for(small["fingerprint"]) == data_dir() / "tokens"
    assert shipped_for("0000000000000000") is None


@pytest.mark.slow
def test_gemma_checkpoint_loads_and_routes_and_the_other_is_refused_with_a_hint(pool) -> None:  # type: ignore[no-untyped-def]
    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.router import build_router

    gemma = LLMConfig(model=EMBEDDED_GEMMA)
    router = build_router("agenttoken", pool, llm=gemma, progress=False)  # no --tokens: the Gemma checkpoint
    assert isinstance(router, AgentTokenRouter) and router.extractor.model_id == "Gemma-3-270M"
    assert len(router.agents) == len(pool)
    # two of the demonstrations it was trained on (train accuracy 1.0) come back to their agents
    demos = {"CalcAgent": pool.get("CalcAgent").demonstrations[0].text, "ClockAgent": pool.get("ClockAgent").demonstrations[0].text}
    routed = router.route(list(demos.values()))
    assert [r.agent for r in routed] == list(demos)
    assert all(abs(sum(p for _, p in r.ranking) - 1) < 1e-3 for r in routed)

    with pytest.raises(CheckpointError) as info:
        AgentTokenRouter.load(data_dir() / "tokens", pool, gemma)
    msg = str(info.value)
    assert "SmolLM2-135M-Instruct" in msg and "Gemma-3-270M" in msg and "\n" not in msg
    assert f"--tokens {Path('data/tokens/gemma3-270m')}" in msg or f"--tokens {data_dir() / 'tokens' / 'gemma3-270m'}" in msg
