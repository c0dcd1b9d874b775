"""LoRA adapters that act on a reply only, in a private copy of a frozen local backbone.

A specialist's adapter (trained by :mod:`agentlab.selfinstruct.calls.fit`) must change how *that
agent* answers without changing the model anyone else talks to: the router, the plan manager and
the other agents share one backbone object in a process. So adapters are injected into a private
copy of the backbone (:class:`ReplyLoRA`), never into the shared one, and an agent reaches them
through :class:`AdaptedBackend`, an ordinary :class:`~agentlab.llm.base.LLMBackend`.

*Reply-only*: the prompt is read with the adapter switched off (its key/value cache is exactly
the frozen model's), and the adapter is on for the tokens the model writes. Training then costs
one gradient-free pass over the prompt plus a small pass over the reply, instead of
back-propagating through a prompt of ~800 tokens: on this CPU, what makes an adapter per
specialist a matter of minutes. Decoding follows the same split (:meth:`ReplyLoRA.generate`),
with any logits processor (the toolkit's call grammar) applied at every step.

An adapter folder holds peft's ``adapter_model.safetensors`` and ``adapter_config.json`` and our
``adapter.json`` (:class:`AdapterCard`): the backbone's weight fingerprint it was trained on, the
data, the settings and the training time. An adapter for another backbone is refused in one line
(:func:`refusal`).
"""

from __future__ import annotations

import copy
import json
import logging
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from agentlab.fileio import atomic_write_json
from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams, WrappedBackend, truncate_at_stop
from agentlab.llm.kv_cache import returned_cache, rollbackable, with_cache

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.llm.local import LocalHFBackend

log = logging.getLogger(__name__)

CARD = "adapter.json"
WEIGHTS = "adapter_model.safetensors"


@dataclass(frozen=True)
class AdapterCard:
    """What an adapter folder says about itself (``adapter.json``)."""

    agent: str
    backbone: str
    fingerprint: str
    settings: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    train_seconds: float = 0.0
    kind: str = "reply-only LoRA"

    def write(self, folder: Path) -> None:
        atomic_write_json(folder / CARD, asdict(self))

    @classmethod
    def read(cls, folder: Path) -> AdapterCard:
        raw = json.loads((folder / CARD).read_text(encoding="utf-8"))
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})


def refusal(folder: Path, fingerprint: str) -> str | None:
    """Why the adapter in ``folder`` cannot serve the backbone with ``fingerprint`` (one line), or ``None``."""
    if not (folder / CARD).is_file() or not (folder / WEIGHTS).is_file():
        return f"no adapter in {folder} (it needs {CARD} and {WEIGHTS})"
    try:
        card = AdapterCard.read(folder)
    except (OSError, ValueError, TypeError) as exc:
        return f"{folder / CARD} is unreadable ({exc}); retrain the adapter"
    if card.fingerprint != fingerprint:
        return (f"the adapter in {folder} was trained on backbone {card.backbone} with fingerprint {card.fingerprint}, "
                f"this backbone's is {fingerprint}; retrain it for this backbone or run with adapter=none")
    return None


def lora_config(r: int, alpha: int, targets: tuple[str, ...]) -> Any:
    from peft import LoraConfig

    return LoraConfig(r=r, lora_alpha=alpha, target_modules=list(targets), lora_dropout=0.0, bias="none",
                      task_type="CAUSAL_LM")


class ReplyLoRA:
    """A private copy of a local backbone carrying named LoRA adapters that act on replies only."""

    def __init__(self, backend: LocalHFBackend, model: Any) -> None:
        self.backend = backend
        self.model = model  # a peft model over a deep copy of backend.model
        self.loaded: dict[str, str] = {}  # adapter name -> the folder it came from

    @classmethod
    def fresh(cls, backend: LocalHFBackend, r: int = 8, alpha: int = 16,
              targets: tuple[str, ...] = ("q_proj", "v_proj"), seed: int = 0) -> ReplyLoRA:
        """A new, trainable adapter ``default`` on a copy of the backbone (for training)."""
        from peft import get_peft_model

        torch.manual_seed(seed)
        with warnings.catch_warnings():  # peft reads transformers' deprecated alias; harmless
            warnings.filterwarnings("ignore", category=FutureWarning)
            model = get_peft_model(copy.deepcopy(backend.model), lora_config(r, alpha, targets))
        return cls(backend, model)

    @classmethod
    def empty(cls, backend: LocalHFBackend) -> ReplyLoRA:
        """A copy of the backbone with no adapter yet (:meth:`load` adds them)."""
        return cls(backend, None)

    def load(self, name: str, folder: Path) -> None:
        """Load the adapter in ``folder`` under ``name`` (again only when it came from elsewhere)."""
        from peft import PeftModel

        if self.loaded.get(name) == str(folder):
            return
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning)
            if self.model is None:
                self.model = PeftModel.from_pretrained(copy.deepcopy(self.backend.model), str(folder), adapter_name=name)
            else:
                if name in self.loaded:
                    self.model.delete_adapter(name)
                self.model.load_adapter(str(folder), adapter_name=name)
        self.model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.loaded[name] = str(folder)

    def trainable(self) -> list[torch.nn.Parameter]:
        return [p for n, p in self.model.named_parameters() if "lora_" in n]

    # -- the reply-only split -------------------------------------------------------
    @torch.no_grad()
    def prefill(self, prompt_ids: list[int]) -> tuple[Any, int]:
        """The frozen model's cache over all prompt tokens but the last (adapter off), and its length."""
        if len(prompt_ids) < 2:
            return None, 0
        ids = torch.tensor([prompt_ids[:-1]], device=self.backend.device)
        with self.model.disable_adapter():
            out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)  # only the cache is wanted
        return rollbackable(returned_cache(out)), len(prompt_ids) - 1  # replies are cropped off again

    def reply_logits(self, tokens: list[int], cache: Any) -> torch.Tensor:
        """Logits ``[len(tokens), vocab]`` after each of ``tokens`` (the prompt's last token, then the
        reply so far) on top of ``cache``, with the active adapter on; the cache grows by ``tokens``."""
        ids = torch.tensor([tokens], device=self.backend.device)
        kwargs = with_cache(self.model, cache) if cache is not None else {}
        out = self.model(input_ids=ids, use_cache=True, **kwargs)
        logits: torch.Tensor = out.logits[0]
        return logits

    def loss(self, prompt_ids: list[int], target_ids: list[int], cache: Any = None, cached: int = 0) -> torch.Tensor:
        """Mean cross-entropy of ``target_ids`` after ``prompt_ids`` (``cache``: a prefill of the
        prompt to reuse; it is cropped back afterwards)."""
        if cache is None:
            cache, cached = self.prefill(prompt_ids)
        try:
            logits = self.reply_logits([prompt_ids[-1], *target_ids[:-1]], cache)
            return torch.nn.functional.cross_entropy(logits.float(), torch.tensor(target_ids, device=logits.device))
        finally:
            _crop(cache, cached)

    @torch.no_grad()
    def generate(self, name: str, prompt_ids: list[int], params: SamplingParams) -> list[list[int]]:
        """``params.n`` replies to ``prompt_ids`` with adapter ``name`` on the reply (greedy at
        temperature 0, else temperature and top-p sampling; the grammar, when given, at every step)."""
        self.model.set_adapter(name)
        self.model.eval()
        eos = self.backend.tokenizer.eos_token_id
        outs = []
        cache, cached = self.prefill(prompt_ids)
        for _ in range(params.n):
            processor = params.grammar.logits_processor(self.backend.tokenizer) if params.grammar is not None else None
            seq = torch.tensor([prompt_ids], device=self.backend.device)
            step = [prompt_ids[-1]]
            new: list[int] = []
            for _ in range(params.max_new_tokens):
                scores = self.reply_logits(step, cache)[-1:].float()
                if processor is not None:
                    scores = processor(seq, scores)
                tok = _choose(scores[0], params)
                if tok == eos:
                    break
                new.append(tok)
                seq = torch.cat([seq, torch.tensor([[tok]], device=seq.device)], dim=1)
                step = [tok]
            _crop(cache, cached)
            outs.append(new)
        return outs


def _crop(cache: Any, length: int) -> None:
    """Cut ``cache`` back to its first ``length`` positions (a negative count is what every
    transformers 5.x reads as "remove that many"; a positive one changed meaning in 5.x)."""
    if cache is None:
        return
    if (extra := int(cache.get_seq_length()) - length) > 0:
        cache.crop(-extra)
    for layer in getattr(cache, "layers", ()):  # what is left is the prompt's: no graph may hang on it
        if getattr(layer, "keys", None) is not None:
            layer.keys, layer.values = layer.keys.detach(), layer.values.detach()


def _choose(scores: torch.Tensor, params: SamplingParams) -> int:
    if params.greedy:
        return int(scores.argmax())
    probs = torch.softmax(scores / params.temperature, dim=-1)
    if params.top_p < 1.0:
        sorted_p, order = probs.sort(descending=True)
        keep = sorted_p.cumsum(0) - sorted_p < params.top_p
        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
    return int(torch.multinomial(probs / probs.sum(), 1))


class AdaptedBackend(LLMBackend):
    """A local backbone answering with one named reply-only adapter; everything else (tokenizer,
    chat template, context, capabilities) is the backbone's, and the backbone object is untouched."""

    def __init__(self, base: LocalHFBackend, host: ReplyLoRA, name: str) -> None:
        self.base, self.host, self.adapter = base, host, name
        self.model_id = f"{base.model_id}+{name}"
        self.fingerprint = base.fingerprint
        self.tokens_in = 0
        self.tokens_out = 0

    @property
    def capabilities(self) -> Capabilities:
        return self.base.capabilities

    def count_tokens(self, text: str) -> int:
        return self.base.count_tokens(text)

    def chat_prompt(self, messages: list[ChatMessage]) -> str:
        return self.base.chat_prompt(messages)

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        return self.complete(self.chat_prompt(messages), params)

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        return self.complete_batch([prompt], params)[0]

    def complete_batch(self, prompts: list[str], params: SamplingParams | None = None) -> list[list[str]]:
        params = params or SamplingParams()
        if params.seed is not None:
            torch.manual_seed(params.seed)
        tok = self.base.tokenizer
        out = []
        for prompt in prompts:
            ids = list(tok(prompt)["input_ids"])
            replies = self.host.generate(self.adapter, ids, params)
            self.tokens_in += len(ids) * params.n
            self.tokens_out += sum(len(r) for r in replies)
            out.append([truncate_at_stop(tok.decode(r, skip_special_tokens=True), params.stop) for r in replies])
        return out

    def describe(self) -> dict[str, str]:
        return {**self.base.describe(), "adapter": self.adapter, "adapter_folder": self.host.loaded.get(self.adapter, "")}


#: one private copy per shared backbone object (adapters of several agents share it by name)
_HOSTS: dict[int, ReplyLoRA] = {}


def local_of(backend: LLMBackend) -> LocalHFBackend | None:
    """The local backbone under ``backend``'s wrappers (a reply cap, a meter), if there is one."""
    from agentlab.llm.local import LocalHFBackend

    while isinstance(backend, WrappedBackend):
        backend = backend.inner
    return backend if isinstance(backend, LocalHFBackend) else None


def with_adapter(backend: LLMBackend, folder: Path, name: str) -> tuple[LLMBackend | None, str | None]:
    """``backend`` answering with the adapter in ``folder`` (its wrappers, e.g. a reply cap, kept),
    or ``(None, why)`` when it cannot: no local backbone underneath, or an adapter for another one."""
    base = local_of(backend)
    if base is None:
        return None, f"{backend.model_id} is not a local model; adapters need one (the adapter in {folder} is not used)"
    why = refusal(folder, base.fingerprint)
    if why is not None:
        return None, why
    host = _HOSTS.get(id(base))
    if host is None or host.backend is not base:
        host = _HOSTS[id(base)] = ReplyLoRA.empty(base)
    host.load(name, folder)
    adapted: LLMBackend = AdaptedBackend(base, host, name)
    chain = []
    b = backend
    while isinstance(b, WrappedBackend):
        chain.append(b)
        b = b.inner
    for wrapper in reversed(chain):  # rebuild the wrappers around the adapted backbone
        outer = copy.copy(wrapper)
        outer.inner, outer.model_id = adapted, adapted.model_id
        adapted = outer
    return adapted, None
