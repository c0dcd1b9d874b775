"""Packed candidate scoring equals scoring each candidate in its own sequence."""

from __future__ import annotations

import pytest
import torch

from agentlab.llm.scoring import candidate_logprobs, forward_packed, pack


def _naive(model, prefix_embeds, prompt, cand):
    emb = model.get_input_embeddings()
    ids = torch.tensor([prompt + cand])
    x = emb(ids)
    if prefix_embeds is not None:
        x = torch.cat([prefix_embeds.unsqueeze(0), x], dim=1)
    with torch.no_grad():
        lp = torch.log_softmax(model(inputs_embeds=x).logits[0].float(), -1)
    off = (0 if prefix_embeds is None else prefix_embeds.shape[0]) + len(prompt)
    return sum(lp[off - 1 + t, tok].item() for t, tok in enumerate(cand))


@pytest.mark.parametrize("n_virtual", [0, 3])
def test_packed_matches_naive(backend, n_virtual):
    tok, model = backend.tokenizer, backend.model
    enc = lambda s: tok(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    prompts = [enc("Which agent should freeze the top row of my sheet? Answer:"), enc("Play the video. Answer:")]
    names = [enc(f"###{n}###") for n in ("CalcAgent", "VLCAgent", "Friday")]
    virtual = None if n_virtual == 0 else torch.randn(n_virtual, backend.hidden_size) * 0.02
    packed = pack(prompts, [names, names[:2]], pad_id=tok.pad_token_id, n_virtual=n_virtual)
    with torch.no_grad():
        got = candidate_logprobs(forward_packed(model, packed, virtual=virtual), packed)
    assert got.shape == (2, 3)
    assert torch.isinf(got[1, 2])
    for b, p in enumerate(prompts):
        for c, cand in enumerate(names if b == 0 else names[:2]):
            assert got[b, c].item() == pytest.approx(_naive(model, virtual, p, cand), abs=2e-3)


def test_packed_on_shared_cache(backend):
    from transformers import DynamicCache

    tok, model = backend.tokenizer, backend.model
    enc = lambda s: tok(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    prefix = enc("Agents: CalcAgent edits spreadsheets. VLCAgent plays media.\n")
    suffix = enc("Task: play a movie. Agent:")
    names = [enc(f"###{n}###") for n in ("CalcAgent", "VLCAgent")]
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=torch.tensor([prefix]), past_key_values=cache, use_cache=True)
        packed = pack([suffix], [names], pad_id=tok.pad_token_id, past_len=len(prefix))
        got = candidate_logprobs(forward_packed(model, packed, past_key_values=cache), packed)
    for c, cand in enumerate(names):
        assert got[0, c].item() == pytest.approx(_naive(model, None, prefix + suffix, cand), abs=2e-3)


def test_buffered_cache_matches_dynamic(backend):
    """The in-place cache gives the same logits as transformers' DynamicCache, across crops."""
    from transformers import DynamicCache

    from agentlab.llm.prefix_cache import crop_to, make_cache

    model = backend.model
    ids = backend.tokenizer("Agents: CalcAgent edits sheets. VLCAgent plays media. Task:", return_tensors="pt")["input_ids"]
    a, b = make_cache(model, capacity=8), DynamicCache(config=model.config)  # capacity 8 forces growth
    with torch.no_grad():
        for cache in (a, b):
            model(input_ids=ids, past_key_values=cache, use_cache=True)
        n = ids.shape[1]
        for step in ([[42, 43]], [[7]]):
            x = torch.tensor(step)
            la = model(input_ids=x, past_key_values=a, use_cache=True).logits
            lb = model(input_ids=x, past_key_values=b, use_cache=True).logits
            assert torch.allclose(la, lb, atol=1e-4)
            crop_to(a, n)
            crop_to(b, n)
            assert a.get_seq_length() == b.get_seq_length() == n
