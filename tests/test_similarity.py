"""BERTScore and sentence embeddings on the embedded MiniLM."""

from __future__ import annotations

import numpy as np


def test_paraphrase_scores_higher_than_unrelated(scorer) -> None:
    m = scorer.matrix(
        ["Add up the numbers in column B of the sales spreadsheet"],
        ["Sum column B in sales.xlsx", "Play my workout playlist on Spotify"],
    )
    assert m.shape == (1, 2)
    assert m[0, 0] > m[0, 1] + 0.2


def test_matrix_equals_pairwise_scores(scorer) -> None:
    cands = ["Open the settings", "Mute the video"]
    refs = ["Open system settings", "Turn the volume off", "Write an email"]
    m = scorer.matrix(cands, refs)
    for i, c in enumerate(cands):
        for j, r in enumerate(refs):
            assert abs(m[i, j] - scorer.pairs([c], [r])[0]) < 1e-4
    assert scorer.describe()["num_layers"] == 6


def test_sentence_encoder_is_normalised_and_semantic() -> None:
    from agentlab.llm.similarity import default_encoder

    enc = default_encoder()
    v = enc.encode(["set an alarm for 7 am", "wake me up at seven", "export the slides to pdf"])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_missing_scorer_model_is_clear(tmp_path) -> None:
    import pytest

    from agentlab.errors import ModelNotFoundError
    from agentlab.llm.similarity import BertScorer

    with pytest.raises(ModelNotFoundError, match="BERTScore model not found"):
        BertScorer(model_path=tmp_path)


def test_a_long_list_is_encoded_once_across_processes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A router's demonstrations are encoded once: the next encoder (another process, another
    worker) reads the cached embeddings, identical; another list or a torn file encodes again."""
    import numpy as np

    from agentlab.llm.similarity import CACHE_MIN_TEXTS, SentenceEncoder

    monkeypatch.setenv("AGENTLAB_CACHE", str(tmp_path))
    texts = [f"request number {i}" for i in range(CACHE_MIN_TEXTS)]
    first = SentenceEncoder()
    a = first.encode(texts)
    second = SentenceEncoder()
    calls: list[int] = []
    real = second._light.encode
    monkeypatch.setattr(second._light, "encode", lambda *a, **k: calls.append(1) or real(*a, **k))
    b = second.encode(texts)
    assert calls == [] and np.array_equal(a, b)
    second.encode(texts[:-1] + ["something else"])
    assert calls == [1]
    for f in (tmp_path / "embeddings").glob("*.npy"):
        f.write_bytes(b"torn")
    assert np.array_equal(second.encode(texts), a) and calls == [1, 1]
