"""The embedded backbone loads from the cache and generates; config and error paths."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from agentlab.errors import ConfigError, ModelNotFoundError
from agentlab.llm import ChatMessage, LLMConfig, SamplingParams, load_backend


def test_embedded_model_loads_from_cache_and_generates(backend) -> None:
    from agentlab.llm.embedded import converted_smollm2_dir

    folder = converted_smollm2_dir()
    assert (folder / "model.safetensors").is_file()  # cached conversion, not the GGUF
    assert backend.source == folder
    assert backend.vocab_size == 49152 and backend.hidden_size == 576
    out = backend.chat([ChatMessage("user", "What is the capital of France?")], SamplingParams(max_new_tokens=16))
    assert len(out) == 1 and "Paris" in out[0]


def test_cached_load_is_fast() -> None:
    from agentlab.llm.local import LocalHFBackend

    t0 = time.perf_counter()
    LocalHFBackend(LLMConfig())
    assert time.perf_counter() - t0 < 30  # the GGUF dequantisation path alone takes ~20 s


def test_sampling_returns_n_and_stops(backend) -> None:
    outs = backend.complete("1. Open a file\n2.", SamplingParams(max_new_tokens=20, temperature=0.9, n=3, seed=1, stop=("\n",)))
    assert len(outs) == 3 and all("\n" not in o for o in outs)


def test_encode_matches_the_models_own_logits(backend) -> None:
    text = "Sum the values in column B of budget.xlsx"
    enc = backend.encode([text, "a much longer prompt that forces left padding of the first one"])
    ids = backend.tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        logits = backend.model(**ids).logits[0, -1]
    assert torch.allclose(backend.output_head() @ enc.h[0], logits, atol=1e-3)
    assert torch.allclose(enc.vocab_lse[0], torch.logsumexp(logits, -1), atol=1e-3)


def test_missing_model_dir_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError) as info:
        load_backend(LLMConfig(model=str(tmp_path / "no-such-model")))
    msg = str(info.value)
    assert "no-such-model" in msg and "config.json" in msg and "\n" not in msg


def test_missing_gguf_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"GGUF file not found: .*x\.gguf"):
        load_backend(LLMConfig(model=str(tmp_path / "x.gguf")))


def test_config_from_yaml_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "llm.yaml"
    cfg.write_text("llm:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n")
    monkeypatch.setenv("AGENTLAB_LLM_CONFIG", str(cfg))
    assert LLMConfig.from_env().kind == "openai"
    cfg.write_text("kind: banana\n")
    with pytest.raises(ConfigError, match=r"llm.yaml:1: kind: "):  # file:line: field
        LLMConfig.from_env()
    monkeypatch.delenv("AGENTLAB_LLM_CONFIG")
    monkeypatch.setenv("AGENTLAB_LLM_MODEL", "/some/dir")
    assert LLMConfig.from_env().model == "/some/dir"


def test_openai_backend_needs_base_url() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        load_backend(LLMConfig(kind="openai", model="m"))


def test_local_backend_counts_usage_like_a_server(backend) -> None:
    """tokens_in grows by the prompt's real tokens (padding excluded), tokens_out by what was generated."""
    prompt = "Name three colours:"
    before_in, before_out = backend.tokens_in, backend.tokens_out
    [reply] = backend.complete(prompt, SamplingParams(max_new_tokens=8))
    assert backend.tokens_in - before_in == backend.count_tokens(prompt)
    assert 1 <= backend.tokens_out - before_out <= 8
    # a batch with a shorter prompt: its left padding is not counted
    before_in = backend.tokens_in
    backend.complete_batch([prompt, "Hi"], SamplingParams(max_new_tokens=2))
    assert backend.tokens_in - before_in == backend.count_tokens(prompt) + backend.count_tokens("Hi")
