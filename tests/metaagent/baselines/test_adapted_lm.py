"""LoRA and prompt-tuning routers on the real backbone with tiny data."""

from __future__ import annotations

import json
import math

import pytest
import torch

from agentlab.errors import CheckpointError, ConfigError
from agentlab.metaagent import load_training_set
from agentlab.metaagent.baselines.lora import LoRARouter
from agentlab.metaagent.baselines.prompt_tuning import PromptTuningRouter

pytestmark = pytest.mark.slow  # trains two adapters on the real backbone (~1 min CPU)

KINDS = {"lora": LoRARouter, "prompt": PromptTuningRouter}
TASKS = ["Sum column B of budget.xlsx into a new sheet", "Set an alarm for 6:30 tomorrow"]


@pytest.fixture(scope="module")
def small_pool(pool):
    return pool.subset(["SheetAgent", "VLCAgent", "MapsAgent", "ClockAgent"])


@pytest.fixture(scope="module")
def train(small_pool):
    return load_training_set(small_pool, source="seed", per_agent=2)


@pytest.fixture(scope="module")
def trained(small_pool, train, backend):
    """One trained router of each kind (one step on 8 examples), with gold scores before/after."""
    out = {}
    small = {"prompt": {"num_virtual_tokens": 4}, "lora": {"r": 4}}
    for kind, cls in KINDS.items():
        router = cls(small_pool, epochs=1, batch_size=8, use_cache=False, progress=False, **small[kind])
        router.prepare()
        before = router.scores(train.texts, names=train.agents)
        metrics = router.fit(train)
        after = router.scores(train.texts, names=train.agents)
        out[kind] = (router, metrics, before, after)
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_fit_and_rank(trained, train, small_pool, kind):
    router, metrics, before, after = trained[kind]
    assert metrics["examples"] == len(train) and metrics["trainable_params"] > 0
    assert router.trainable_parameters() == metrics["trainable_params"]  # the declared count is the trained one
    assert math.isfinite(metrics["loss"]) and metrics["seconds"] > 0
    gold = torch.tensor(train.labels)
    idx = torch.arange(len(gold))
    # Training raised the likelihood of the gold answers.
    assert after[idx, gold].mean() > before[idx, gold].mean()
    for r in router.rank(TASKS):
        assert sorted(n for n, _ in r) == sorted(small_pool.names)
        probs = [p for _, p in r]
        assert probs == sorted(probs, reverse=True)
        assert math.isclose(sum(probs), 1.0, abs_tol=1e-6)


@pytest.mark.parametrize("kind", list(KINDS))
def test_save_load_identical_rankings(trained, small_pool, tmp_path, kind):
    router = trained[kind][0]
    router.save(tmp_path / kind)
    again = KINDS[kind].load(tmp_path / kind, small_pool)
    a, b = router.rank(TASKS), again.rank(TASKS)
    for x, y in zip(a, b):
        assert [n for n, _ in x] == [n for n, _ in y]
        assert [p for _, p in x] == pytest.approx([p for _, p in y], abs=1e-6)
    # peft-format files are there
    assert (tmp_path / kind / "adapter_model.safetensors").is_file()
    assert (tmp_path / kind / "adapter_config.json").is_file()


def test_lora_leaves_shared_backbone_untouched(trained, backend):
    ids = backend.tokenizer("Set an alarm", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        now = backend.model(input_ids=ids).logits
    head_rows = backend.output_head()
    assert not any("lora" in n for n, _ in backend.model.named_modules())
    assert torch.isfinite(now).all() and head_rows.requires_grad is False


def test_cached_adapter_is_reused(small_pool, train, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTLAB_CACHE", str(tmp_path))
    train = train.subset([0, 2, 4, 6])  # one example per agent: one cheap step
    first = PromptTuningRouter(small_pool, epochs=1, batch_size=8, num_virtual_tokens=2, progress=False)
    m1 = first.fit(train)
    assert "cached" not in m1
    assert first.cache_path(train).is_relative_to(tmp_path)
    second = PromptTuningRouter(small_pool, epochs=1, batch_size=8, num_virtual_tokens=2, progress=False)
    m2 = second.fit(train)
    assert m2["cached"] == 1.0
    assert second.rank(TASKS[:1])[0][0] == first.rank(TASKS[:1])[0][0]
    # Different data -> different key -> trains again.
    other = load_training_set(small_pool, source="seed", per_agent=3)
    assert second.cache_key(other) != second.cache_key(train)


def test_bad_checkpoints(trained, small_pool, tmp_path):
    router = trained["prompt"][0]
    folder = tmp_path / "pt"
    router.save(folder)
    (folder / "adapter_model.safetensors").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="adapter_model|weights"):
        PromptTuningRouter.load(folder, small_pool)
    router.save(folder)
    rec = json.loads((folder / "router.json").read_text())
    rec["template"]["sha256"] = "0" * 64
    (folder / "router.json").write_text(json.dumps(rec))
    with pytest.raises(CheckpointError, match="template"):
        PromptTuningRouter.load(folder, small_pool)
    with pytest.raises(CheckpointError, match="'prompt' router, not 'lora'"):
        LoRARouter.load(folder, small_pool)
    with pytest.raises(ConfigError, match="r"):
        LoRARouter(small_pool, r=0)
    with pytest.raises(CheckpointError, match="not trained"):
        LoRARouter(small_pool).rank(TASKS)
