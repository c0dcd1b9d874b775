"""Fit one reply-only LoRA adapter per tool specialist on its synthesized (request -> calls) pairs.

Each example is exactly what the ToolAgent sees and writes at an episode's first turn: the prompt
(:meth:`~agentlab.agents.tools.ToolAgent.first_messages` through the backbone's chat template)
and the reply, tokenized *piece by piece as the call grammar produces it* (tool name, ``(``, each
argument's literal, ``, ``, ``)\\n``, then the end-of-sequence token), so the adapter raises the
probability of token sequences that constrained decoding can actually emit. The loss is on the
reply only, with the adapter acting on the reply only (:mod:`agentlab.llm.adapters`): one
gradient-free pass over each prompt, kept in memory across epochs, plus a small pass over the
reply.

The adapter is saved as safetensors with ``adapter.json`` recording the backbone's weight
fingerprint, the data (file, sha256, pairs used), the settings, the loss and the training time.
"""

from __future__ import annotations

import ast
import hashlib
import logging
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from tqdm import tqdm

from agentlab.fileio import read_jsonl
from agentlab.llm.adapters import AdapterCard, ReplyLoRA
from agentlab.toolkits.base import END_CALLS

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.agents.tools import ToolAgent
    from agentlab.llm.local import LocalHFBackend

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FitSettings:
    """How an adapter is trained (recorded in its card)."""

    r: int = 8
    alpha: int = 16
    targets: tuple[str, ...] = ("q_proj", "v_proj")
    lr: float = 1e-3
    epochs: int = 3
    #: pairs used per agent (spread evenly over the generator families), 0: all
    max_pairs: int = 80
    #: examples per optimiser step (gradients accumulated)
    accumulate: int = 4
    seed: int = 0
    #: share of the chosen pairs that ask for two operations (``two:`` families, :mod:`.compose`),
    #: when the file has them: the adapter must see enough of them to write more than one call
    two_share: float = 0.4


def reply_tokens(reply: str, tokenizer: Any) -> list[int]:
    """``reply`` (call lines) as the call grammar emits it, token by token, ending with EOS."""
    def enc(s: str) -> list[int]:
        return list(tokenizer.encode(s, add_special_tokens=False))

    out: list[int] = []
    for line in (ln for ln in reply.splitlines() if ln.strip()):
        node = ast.parse(line.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError(f"not a call: {line!r}")
        out += enc(node.func.id) + enc("(")
        for i, arg in enumerate(node.args):
            if i:
                out += enc(", ")
            src = ast.get_source_segment(line.strip(), arg)
            assert src is not None
            out += enc(src)
        out += enc(")\n")
        if node.func.id in END_CALLS:
            break
    return [*out, int(tokenizer.eos_token_id)]


def choose(pairs: Sequence[dict[str, Any]], k: int, seed: int, two_share: float = 0.0) -> list[dict[str, Any]]:
    """Up to ``k`` pairs spread evenly over their families (all when ``k`` is 0); the pairs asking
    for two operations (families ``two:…``) are one group that gets ``two_share`` of ``k``."""
    if not k or k >= len(pairs):
        return list(pairs)
    rng = random.Random(seed)
    two = [p for p in pairs if str(p["family"]).startswith("two:")]
    if two and two_share > 0:
        rng.shuffle(two)
        k_two = min(len(two), round(k * two_share))
        single = [p for p in pairs if not str(p["family"]).startswith("two:")]
        return [*choose(single, k - k_two, seed), *two[:k_two]]
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pairs:
        by_family[p["family"]].append(p)
    for items in by_family.values():
        rng.shuffle(items)
    out: list[dict[str, Any]] = []
    while len(out) < k:
        for fam in sorted(by_family):
            if by_family[fam] and len(out) < k:
                out.append(by_family[fam].pop())
    return out


def examples(agent: ToolAgent, backend: LocalHFBackend, pairs: Sequence[dict[str, Any]]) -> list[tuple[list[int], list[int]]]:
    """(prompt tokens, reply tokens) of each pair, the prompt as the agent's first turn renders it."""
    out = []
    for p in pairs:
        prompt = backend.chat_prompt(agent.first_messages(p["request"], p["observation"], list(p["shown"])))
        out.append((list(backend.tokenizer(prompt)["input_ids"]), reply_tokens(p["reply"], backend.tokenizer)))
    return out


def fit(agent: ToolAgent, backend: LocalHFBackend, pairs_file: Path, out: Path, settings: FitSettings | None = None,
        *, progress: bool = True) -> AdapterCard:
    """Train ``agent``'s adapter on the pairs in ``pairs_file`` and save it in ``out``."""
    s = settings or FitSettings()
    rows = read_jsonl(pairs_file)
    chosen = choose(rows, s.max_pairs, s.seed, s.two_share)
    if not chosen:
        raise ValueError(f"{pairs_file}: no pairs to train on")
    t0 = time.perf_counter()
    data = examples(agent, backend, chosen)
    lora = ReplyLoRA.fresh(backend, r=s.r, alpha=s.alpha, targets=s.targets, seed=s.seed)
    params = lora.trainable()
    opt = torch.optim.AdamW(params, lr=s.lr, weight_decay=0.0)
    caches = [lora.prefill(p) for p, _ in tqdm(data, desc=f"prefill {agent.document.name}", disable=not progress)]
    rng = random.Random(s.seed)
    order = list(range(len(data)))
    history: list[float] = []
    lora.model.train()
    for epoch in range(s.epochs):
        rng.shuffle(order)
        total, opt_steps = 0.0, 0
        for n, i in enumerate(tqdm(order, desc=f"epoch {epoch + 1} {agent.document.name}", disable=not progress), start=1):
            loss = lora.loss(data[i][0], data[i][1], *caches[i])
            (loss / s.accumulate).backward()
            total += float(loss.detach())
            if n % s.accumulate == 0 or n == len(order):
                opt.step()
                opt.zero_grad()
                opt_steps += 1
        history.append(round(total / len(order), 4))
        log.info("%s: epoch %d mean loss %.4f", agent.document.name, epoch + 1, history[-1])
    lora.model.eval()
    seconds = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    lora.model.save_pretrained(str(out))
    _blank_base_path(out)
    (out / "README.md").unlink(missing_ok=True)  # peft's model-card template: the card below says it all
    card = AdapterCard(
        agent=agent.document.name, backbone=backend.model_id, fingerprint=backend.fingerprint,
        settings={**asdict(s), "targets": list(s.targets)},
        data={"pairs_file": pairs_file.as_posix(), "sha256": hashlib.sha256(pairs_file.read_bytes()).hexdigest(),
              "pairs_in_file": len(rows), "pairs_used": len(chosen),
              "prompt_tokens_mean": round(sum(len(p) for p, _ in data) / len(data), 1),
              "reply_tokens_mean": round(sum(len(t) for _, t in data) / len(data), 1)},
        metrics={"loss_by_epoch": history, "trainable_params": sum(p.numel() for p in params)},
        train_seconds=round(seconds, 1))
    card.write(out)
    del caches
    return card


def _blank_base_path(folder: Path) -> None:
    """peft records the backbone's local folder (a path on this machine); the card says which backbone."""
    import json

    cfg = folder / "adapter_config.json"
    if cfg.is_file():
        raw = json.loads(cfg.read_text(encoding="utf-8"))
        raw["base_model_name_or_path"] = None
        cfg.write_text(json.dumps(raw, indent=2, sort_keys=True) + "\n", encoding="utf-8")
