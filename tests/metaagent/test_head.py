"""The augmented head on the real SmolLM2: masking exactness and cached-vs-naive training equality."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agentlab.metaagent.cache import HiddenCache
from agentlab.metaagent.features import Query, TextFeatureExtractor
from agentlab.metaagent.head import AgentHead, name_mean_init

TASKS = [
    Query("Sum column B of sales.xlsx into B101"),
    Query("Play the next song on Spotify"),
    Query("Reply to the last email from Alice", state="Thunderbird inbox is open"),
]


@pytest.fixture(scope="module")
def fx(backend) -> TextFeatureExtractor:
    return TextFeatureExtractor(backend)


def _naive_forward(backend, fx: TextFeatureExtractor, q: Query) -> tuple[torch.Tensor, torch.Tensor]:
    """Full forward of the frozen model over the whole prompt (no prefix cache): (h, logits)."""
    ids = torch.tensor([fx.query_ids(q)])
    with torch.no_grad():
        out = backend.model(input_ids=ids, output_hidden_states=True)
    return out.hidden_states[-1][0, -1].float(), out.logits[0, -1].float()


def test_masking_agent_rows_gives_the_original_lm(backend, fx) -> None:
    feats = fx.features(TASKS[:2])
    head = AgentHead(5, feats.h.shape[1], logit_bias=3.0, init=torch.randn(5, feats.h.shape[1]))
    word = fx.vocab_logits(feats.h)
    full = head.full_logits(feats.h, word, mask_agents=True)
    v = word.shape[1]
    # Bit-exact: the word part is the model's own head applied to h; agent rows get probability 0.
    with torch.no_grad():
        own = backend.model.get_output_embeddings()(feats.h).float()
    assert torch.equal(full[:, :v], own)
    probs = torch.softmax(full, -1)
    assert torch.equal(probs[:, v:], torch.zeros_like(probs[:, v:]))
    assert torch.equal(probs[:, :v], torch.softmax(own, -1))
    # And h from the prefix-cached forward is the naive full forward's h (float noise only).
    for i, q in enumerate(TASKS[:2]):
        h_naive, logits_naive = _naive_forward(backend, fx, q)
        assert torch.allclose(feats.h[i], h_naive, atol=1e-4)
        assert torch.allclose(full[i, :v], logits_naive, atol=1e-3)
        assert int(full[i].argmax()) == int(logits_naive.argmax())


def test_cached_loss_and_gradients_equal_naive_loop(backend, fx, tmp_path: Path) -> None:
    labels = torch.tensor([0, 2, 1])
    d = backend.hidden_size
    init = name_mean_init(["SheetAgent", "MailAgent", "SpotifyAgent"], fx.tokenizer, fx.word_head()[0].detach())
    bias = 1.5

    # Naive: full forward per prompt, full-vocabulary cross-entropy, autograd to W_A.
    naive = AgentHead(3, d, logit_bias=bias, init=init)
    losses = []
    for q, y in zip(TASKS, labels):
        h, logits = _naive_forward(backend, fx, q)
        full = torch.cat([logits, naive.agent_logits(h[None])[0]])
        losses.append(torch.nn.functional.cross_entropy(full[None], torch.tensor([logits.shape[0] + int(y)])))
    naive_loss = torch.stack(losses).mean()
    naive_loss.backward()

    # Cached: features written to disk by one cache, read back by a fresh one (no recompute).
    HiddenCache(fx, root=tmp_path).get(TASKS, progress=False)
    reread = HiddenCache(fx, root=tmp_path)
    feats = reread.get(TASKS, progress=False)
    assert reread.computed == 0
    cached = AgentHead(3, d, logit_bias=bias, init=init)
    loss = cached.loss(feats.h, feats.vocab_lse, labels)
    loss.backward()

    assert torch.allclose(loss, naive_loss, rtol=1e-4, atol=1e-4)
    assert torch.allclose(cached.weight.grad, naive.weight.grad, rtol=1e-3, atol=1e-5)
    assert cached.weight.grad.abs().sum() > 0


def test_unreadable_cache_shard_is_recomputed(fx, tmp_path: Path) -> None:
    cache = HiddenCache(fx, root=tmp_path)
    cache.get(TASKS[:1], progress=False)
    for shard in cache.folder.glob("shard-*.safetensors"):
        shard.write_bytes(b"not a safetensors file")
    again = HiddenCache(fx, root=tmp_path)
    again.get(TASKS[:1], progress=False)
    assert again.computed == 1


def test_balanced_training_weights_each_agent_equally() -> None:
    from agentlab.metaagent.train import TrainConfig, train_head

    torch.manual_seed(0)
    h, lse = torch.randn(12, 8), torch.randn(12)
    labels = torch.tensor([0] * 10 + [1] * 2)
    head = AgentHead(2, 8, init=torch.randn(2, 8))
    w = torch.tensor([1 / 10] * 10 + [1 / 2] * 2)
    per = -head.log_probs(h, lse).gather(1, labels.view(-1, 1)).squeeze(1)
    expected = (per[:10].mean() + per[10:].mean()) / 2
    assert torch.allclose(head.loss(h, lse, labels, w), expected)
    assert torch.allclose(head.loss(h, lse, labels, torch.ones(12)), head.loss(h, lse, labels))
    a, b = AgentHead(2, 8), AgentHead(2, 8)
    train_head(a, h, lse, labels, TrainConfig(epochs=3, balance=True), progress=False)
    train_head(b, h, lse, labels, TrainConfig(epochs=3), progress=False)
    assert not torch.equal(a.weight, b.weight)
    c = AgentHead(2, 8)
    train_head(c, h, lse, labels, TrainConfig(epochs=3, balance=True), progress=False)
    assert torch.equal(a.weight, c.weight)  # deterministic for a seed
