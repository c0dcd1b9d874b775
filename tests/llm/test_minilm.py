"""The torch-only MiniLM encoder: the same bits as sentence-transformers, without its import cost."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agentlab.llm.embedded import minilm_path
from agentlab.llm.minilm import MiniLMEncoder, supports


def _project_texts() -> list[str]:
    """What the encoder embeds in practice: agent demonstrations, tool summaries, blind requests, edge cases."""
    from agentlab.pool import AgentPool
    from agentlab.toolkits import TOOLKITS, load_toolkit

    pool = AgentPool.from_dir()
    texts = [d.text for name in pool.names for d in pool.get(name).demonstrations]
    for kit in TOOLKITS:
        texts += [f"{t.name.replace('_', ' ')}: {t.summary}" for t in load_toolkit(kit).tools.values()]
    requests = Path(__file__).resolve().parents[2] / "data" / "requests" / "two_app_blind.jsonl"
    texts += [json.loads(line)["request"] for line in requests.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts += ["", "a", "word " * 400, "Ünïcödé café 東京 😀 — “quoted”", "B2:B5 stays B2:B5", "  spaced\tout\n"]
    return list(dict.fromkeys(texts))


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_path()), device="cpu")


@pytest.mark.parametrize("batch_size", [64, 7])
def test_bit_identical_to_sentence_transformers(reference, batch_size: int) -> None:
    texts = _project_texts()
    assert len(texts) > 200
    ours = MiniLMEncoder(minilm_path()).encode(texts, batch_size=batch_size)
    theirs = np.asarray(reference.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                         show_progress_bar=False), dtype=np.float32)
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert np.array_equal(ours, theirs)  # bit for bit: no route, retrieval or score moves


def test_one_text_at_a_time_and_truncation(reference) -> None:
    enc = MiniLMEncoder(minilm_path())
    for text in ["Open the settings.", "word " * 400]:
        assert np.array_equal(enc.encode([text]), reference.encode([text], normalize_embeddings=True, show_progress_bar=False))
    assert len(enc.tokenizer.encode("word " * 400).ids) == 256  # the model's max_seq_length, not tokenizer.json's 128
    assert enc.encode([]).shape == (0, 384)


def test_sentence_encoder_uses_it_for_the_embedded_model_and_not_for_other_poolings(tmp_path: Path) -> None:
    from agentlab.llm.similarity import SentenceEncoder

    assert supports(minilm_path())
    assert SentenceEncoder()._light is not None
    other = tmp_path / "cls-pooled"
    shutil.copytree(minilm_path(), other)
    pooling = other / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text(encoding="utf-8"))
    pooling.write_text(json.dumps({**cfg, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}), encoding="utf-8")
    assert not supports(other)
    enc = SentenceEncoder(other)
    assert enc._light is None and enc._model is not None  # sentence-transformers computes what we do not
    assert enc.encode(["hello"]).shape == (1, 384)
    assert not supports(tmp_path / "missing")
    bare = tmp_path / "no-st-config"
    shutil.copytree(minilm_path(), bare)
    (bare / "sentence_bert_config.json").unlink()
    assert supports(bare) and MiniLMEncoder(bare).max_length == 512  # the model's own limit then


def test_a_worker_preload_imports_neither_transformers_nor_sentence_transformers() -> None:
    """The point of the module: a Ray worker (or a serial run's first episode) is ready after torch."""
    code = ("import sys; from agentlab.run.worker import preload; preload(); "
            "print(sorted(m for m in ('transformers', 'sentence_transformers', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"
