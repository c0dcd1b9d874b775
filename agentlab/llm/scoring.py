"""Scoring candidate continuations of a prompt, all candidates in one forward pass.

General language-model machinery: given a prompt and several candidate continuations, the
summed log-likelihood of each. The LM routers (ICL, LoRA, prompt tuning) use it to rank the
pool by the likelihood of each answer ``###Name###`` after the prompt. Scoring 30 (or 1,000)
candidates naively costs one forward pass per candidate. Here the prompt is followed by *all* candidate answers
packed into one sequence; a 4-D attention mask lets every candidate see the prompt and
itself only, and position ids restart for each candidate, so each candidate's tokens get
exactly the logits they would get in their own sequence (checked against the naive loop in
the tests). Only the positions whose next token is scored are projected on the
vocabulary (``logits_to_keep``).

Layout of one row (``P`` = padded prompt length, virtual tokens for prompt tuning)::

    [virtual | pad .. pad | prompt tokens | cand_1 | cand_2 | ... | right pad]

Pads are invisible and position ids are explicit, so a prompt's features do not depend on
how much padding its batch needed; the virtual tokens sit in the same columns for every
row, so prompt tuning can write them into ``inputs_embeds`` with one slice.

A row may also sit on a shared key/value cache (the ICL documents prefix): then every
query additionally sees the ``past_len`` cached positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from agentlab.llm.kv_cache import with_cache

if TYPE_CHECKING:
    from transformers import PreTrainedModel


@dataclass
class Packed:
    """Inputs of one packed forward pass and where to read each candidate's log-probs."""

    input_ids: torch.Tensor  # [B, T] (virtual slots hold pad ids; see ``virtual_slice``)
    attention_mask: torch.Tensor  # [B, 1, T, past_len + T] bool, True = may attend
    position_ids: torch.Tensor  # [B, T]
    keep: torch.Tensor  # [K] positions whose logits are needed (shared by all rows)
    # For row b, candidate c, token t: index into ``keep`` of the predicting position and the
    # target id; flattened with ``owner`` = (row, cand) so sums are one scatter.
    pred_index: torch.Tensor  # [N] index into keep
    target: torch.Tensor  # [N] token id
    row: torch.Tensor  # [N]
    cand: torch.Tensor  # [N]
    n_cands: int
    valid: torch.Tensor  # [B, C] bool: does row b have candidate c
    virtual_slice: slice | None = None  # columns holding virtual tokens (same for all rows)


def pack(
    prompts: list[list[int]],
    cands: list[list[list[int]]],
    *,
    pad_id: int,
    n_virtual: int = 0,
    past_len: int = 0,
) -> Packed:
    """Pack prompts (left-padded to a common end) and their candidate continuations.

    ``cands[b]`` lists the candidates of row ``b`` (token ids, each non-empty). Rows may have
    different numbers and lengths of candidates; shorter blocks are right-padded.
    """
    if len(prompts) != len(cands):
        raise ValueError("one candidate list per prompt")
    if any(not c for row in cands for c in row):
        raise ValueError("empty candidate")
    if any(not p for p in prompts):
        raise ValueError("empty prompt")
    b_size = len(prompts)
    p_len = max(len(p) for p in prompts) + n_virtual
    block = [sum(len(c) for c in row) for row in cands]
    t_len = p_len + max(block)
    n_cands = max(len(row) for row in cands)

    ids = torch.full((b_size, t_len), pad_id, dtype=torch.long)
    pos = torch.zeros((b_size, t_len), dtype=torch.long)
    # owner: -2 pad, -1 prompt/virtual, c >= 0 candidate c
    owner = torch.full((b_size, t_len), -2, dtype=torch.long)
    valid = torch.zeros((b_size, n_cands), dtype=torch.bool)
    # The predicting position of a candidate's t-th token: its (t-1)-th token, or the last
    # prompt position for t = 0. Block layout is identical across rows only when the
    # candidates are identical, so positions are recorded per row and ``keep`` is their union.
    need: list[tuple[int, int, int, int]] = []  # (row, col of predicting pos, target, cand)
    for b, (prompt, row_cands) in enumerate(zip(prompts, cands)):
        start = p_len - len(prompt)
        ids[b, start:p_len] = torch.tensor(prompt, dtype=torch.long)
        owner[b, :n_virtual] = -1
        owner[b, start:p_len] = -1
        pos[b, :n_virtual] = torch.arange(n_virtual) + past_len
        pos[b, start:p_len] = torch.arange(len(prompt)) + n_virtual + past_len
        offset = n_virtual + len(prompt) + past_len
        col = p_len
        for c, cand in enumerate(row_cands):
            valid[b, c] = True
            n = len(cand)
            ids[b, col : col + n] = torch.tensor(cand, dtype=torch.long)
            owner[b, col : col + n] = c
            pos[b, col : col + n] = torch.arange(n) + offset
            for t, tok in enumerate(cand):
                need.append((b, p_len - 1 if t == 0 else col + t - 1, tok, c))
            col += n

    # Mask: causal, and a candidate token sees the prompt and its own candidate only.
    causal = torch.ones(t_len, t_len, dtype=torch.bool).tril()
    q_own, k_own = owner.unsqueeze(2), owner.unsqueeze(1)  # [B,T,1], [B,1,T]
    visible = (k_own == -1) | ((k_own >= 0) & (k_own == q_own))
    mask = causal.unsqueeze(0) & visible & (q_own != -2)
    # Pad queries attend to nothing, which makes SDPA produce NaN rows; let them see
    # themselves (their outputs are never read).
    eye = torch.eye(t_len, dtype=torch.bool).unsqueeze(0)
    mask = mask | (eye & (q_own == -2))
    if past_len:
        # Every position sees the whole cached prefix (pads too: keeps them finite).
        prefix = torch.ones(b_size, t_len, past_len, dtype=torch.bool)
        mask = torch.cat([prefix, mask], dim=2)

    cols = sorted({n[1] for n in need})
    col_to_k = {c: i for i, c in enumerate(cols)}
    return Packed(
        input_ids=ids,
        attention_mask=mask.unsqueeze(1),
        position_ids=pos,
        keep=torch.tensor(cols, dtype=torch.long),
        pred_index=torch.tensor([col_to_k[n[1]] for n in need], dtype=torch.long),
        target=torch.tensor([n[2] for n in need], dtype=torch.long),
        row=torch.tensor([n[0] for n in need], dtype=torch.long),
        cand=torch.tensor([n[3] for n in need], dtype=torch.long),
        n_cands=n_cands,
        valid=valid,
        virtual_slice=slice(0, n_virtual) if n_virtual else None,
    )


def candidate_logprobs(logits: torch.Tensor, packed: Packed) -> torch.Tensor:
    """Sum of token log-probs per (row, candidate) from logits at ``packed.keep``.

    ``logits``: ``[B, K, V]``. Returns ``[B, C]`` with ``-inf`` where a row lacks a candidate.
    """
    logp = torch.log_softmax(logits.float(), dim=-1)
    tok = logp[packed.row, packed.pred_index, packed.target]  # [N]
    out = torch.zeros(packed.valid.shape, dtype=tok.dtype, device=tok.device)
    out = out.index_put((packed.row, packed.cand), tok, accumulate=True)
    return out.masked_fill(~packed.valid.to(out.device), float("-inf"))


def forward_packed(
    model: PreTrainedModel,
    packed: Packed,
    *,
    virtual: torch.Tensor | None = None,
    past_key_values: object | None = None,
) -> torch.Tensor:
    """Logits ``[B, K, V]`` at ``packed.keep`` for a Hugging Face causal LM.

    ``virtual`` (``[n_virtual, d]``) fills the virtual-token columns of the input
    embeddings (prompt tuning). ``past_key_values`` is a cache holding a shared prefix; it
    grows by this batch's tokens, so the caller crops it back afterwards.
    """
    device = next(model.parameters()).device
    kwargs: dict[str, object] = {
        "attention_mask": packed.attention_mask.to(device),
        "position_ids": packed.position_ids.to(device),
        "logits_to_keep": packed.keep.to(device),
        "use_cache": past_key_values is not None,
    }
    if past_key_values is not None:
        kwargs.update(with_cache(model, past_key_values))
    ids = packed.input_ids.to(device)
    if virtual is None:
        out = model(input_ids=ids, **kwargs)
    else:
        emb = model.get_input_embeddings()(ids)
        sl = packed.virtual_slice
        if sl is None or sl.stop - sl.start != virtual.shape[0]:
            raise ValueError("packed batch has no room for the virtual tokens")
        emb = torch.cat(
            [virtual.to(emb.dtype).unsqueeze(0).expand(emb.shape[0], -1, -1), emb[:, sl.stop :]], dim=1
        )
        out = model(inputs_embeds=emb, **kwargs)
    return out.logits


def split_common_prefix(cands: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Move the token prefix every candidate shares (the opening ``###``) out of the candidates.

    ``P(prefix + c_i | prompt) = P(prefix | prompt) · P(c_i | prompt + prefix)`` and the first
    factor is the same for every candidate, so the ranking over the pool is unchanged while
    each candidate costs fewer tokens. At least one token of each candidate is kept.
    """
    if not cands:
        return [], []
    n = min(len(c) for c in cands) - 1
    k = 0
    while k < n and all(c[k] == cands[0][k] for c in cands):
        k += 1
    return list(cands[0][:k]), [list(c[k:]) for c in cands]
