"""A local Hugging Face causal LM: text generation plus the hooks AgentToken needs.

Any model directory, a ``.gguf`` file, or an embedded backbone (SmolLM2-135M-Instruct, the
default, or Gemma 3 270M; :mod:`agentlab.llm.embedded`) can be loaded. Besides
chat/completion this backend exposes the frozen output head ``W_V`` and the final hidden
state ``h`` that the head sees (after the final norm), so the MetaAgent can append agent
rows ``W_A`` to the head without touching the model.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agentlab.errors import ConfigError, ModelNotFoundError, TimeLimitExceeded
from agentlab.llm.base import (
    Capabilities,
    ChatMessage,
    LLMBackend,
    SamplingParams,
    refuse_images,
    truncate_at_stop,
)
from agentlab.llm.config import EMBEDDED_BACKBONE, EMBEDDED_MODELS, LLMConfig
from agentlab.llm.deadline import task_time_left
from agentlab.llm.embedded import converted_dir, embedded_model
from agentlab.llm.identity import model_fingerprint

log = logging.getLogger(__name__)


@dataclass
class Encoded:
    """Frozen-model features of a batch of prompts at their last position.

    ``h``: final hidden state the LM head sees, ``[n, d]`` (fp32).
    ``vocab_lse``: ``logsumexp(W_V · h)`` over the word vocabulary, ``[n]`` (fp32).
    ``layers``: optional extra per-layer states ``{layer: [n, d]}`` (last token or mean-pooled).
    """

    h: torch.Tensor
    vocab_lse: torch.Tensor
    layers: dict[int, torch.Tensor] | None = None


def _resolve_source(cfg: LLMConfig) -> tuple[Path, str | None, str]:
    """Return (folder, gguf_file or None, human-readable model id)."""
    if cfg.model in EMBEDDED_MODELS:
        return converted_dir(cfg.model), None, embedded_model(cfg.model).model_id
    path = Path(cfg.model).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ModelNotFoundError(
                f"backbone GGUF file not found: {path}; point llm.model at an existing .gguf file"
            )
        return path.parent, path.name, path.stem
    if cfg.gguf_file:
        if not (path / cfg.gguf_file).is_file():
            raise ModelNotFoundError(f"backbone GGUF file not found: {path / cfg.gguf_file}")
        return path, cfg.gguf_file, Path(cfg.gguf_file).stem
    if not path.is_dir() or not (path / "config.json").is_file():
        raise ModelNotFoundError(
            f"backbone model not found: {path} is not a Hugging Face model directory "
            "(no config.json); download it once elsewhere and point llm.model at the folder, "
            f"or use an embedded backbone ('{EMBEDDED_BACKBONE}', the default, or {', '.join(repr(m) for m in EMBEDDED_MODELS[1:])})"
        )
    return path, None, path.name


def plain_transcript(messages: list[ChatMessage]) -> str:
    """``Role: content`` paragraphs ending with ``Assistant:``: the conversation as plain text, for a
    base model that has no chat template (its continuation is the assistant's reply)."""
    turns = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join([*turns, "Assistant:"])


def pick_device(device: str) -> str:
    """``llm.device`` as torch takes it (``auto``: CUDA when present, else CPU)."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"llm.device={device} but no CUDA device is available here")
    return device


def is_vision_model(folder: Path) -> bool:
    """Whether a model folder's ``config.json`` describes a vision-language model (it has a
    ``vision_config``, as LLaVA, Idefics3/SmolVLM, Qwen2-VL and Gemma 3 configs do)."""
    try:
        cfg = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(cfg, dict) and "vision_config" in cfg


class LocalHFBackend(LLMBackend):
    """A frozen local causal LM (eval mode, no gradients)."""

    def __init__(self, config: LLMConfig | None = None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.config = config or LLMConfig()
        folder, gguf_file, name = _resolve_source(self.config)
        dtype = getattr(torch, self.config.dtype)
        try:
            kwargs = {"gguf_file": gguf_file} if gguf_file else {}
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder), **kwargs)
            self.model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype, **kwargs)
        except OSError as exc:
            raise ModelNotFoundError(f"cannot load backbone from {folder}: {exc}") from None
        except ValueError:
            if is_vision_model(folder):
                raise ConfigError(f"{folder} holds a vision-language model, not a text-only causal LM; "
                                  "set llm.kind: vision to chat with it (images included)") from None
            raise
        self.device = torch.device(pick_device(self.config.device))
        self.model.to(self.device).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"
        self.model_id = name
        self.fingerprint = model_fingerprint(folder, gguf_file)
        self.source = folder
        #: tokens read and written so far (agents record the difference per episode)
        self.tokens_in = 0
        self.tokens_out = 0
        #: replies cut because they repeated themselves (:mod:`agentlab.llm.loops`)
        self.loop_cuts = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            token_counting=True,
            context_length=self.context_length,
            chat_template=bool(getattr(self.tokenizer, "chat_template", None)),
            hidden_states=True,
            images=False,
            plan_grammar=True,
        )

    # ------------------------------------------------------------------ head access
    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def vocab_size(self) -> int:
        return int(self.output_head().shape[0])

    def output_head(self) -> torch.Tensor:
        """The frozen word-token head ``W_V`` ``[|V|, d]`` (tied to the input embeddings in SmolLM2)."""
        weight: torch.Tensor = self.model.get_output_embeddings().weight
        return weight

    @torch.no_grad()
    def encode(
        self,
        prompts: list[str],
        *,
        batch_size: int = 16,
        layers: tuple[int, ...] = (),
        pool: str = "last",
    ) -> Encoded:
        """Features the AgentToken head needs, computed once per prompt.

        The LM head's input is captured with a forward hook, so ``h`` is exactly what the
        head multiplies (after the final norm) for any architecture. Only the last
        position's logits are computed (``logits_to_keep=1``); prompts are left-padded so the
        last position is the prompt's last token.
        """
        head = self.model.get_output_embeddings()
        hs: list[torch.Tensor] = []
        lses: list[torch.Tensor] = []
        extra: dict[int, list[torch.Tensor]] = {l: [] for l in layers}
        captured: dict[str, torch.Tensor] = {}

        def hook(_mod: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> None:
            captured["h"] = args[0]

        handle = head.register_forward_pre_hook(hook)
        try:
            for start in range(0, len(prompts), batch_size):
                chunk = prompts[start : start + batch_size]
                enc = self.tokenizer(chunk, return_tensors="pt", padding=True).to(self.device)
                # Positions count from each prompt's first real token, so a prompt's features
                # do not depend on how much left padding its batch needed.
                positions = (enc["attention_mask"].cumsum(-1) - 1).clamp(min=0)
                out = self.model(
                    **enc,
                    position_ids=positions,
                    logits_to_keep=1,
                    output_hidden_states=bool(layers),
                    use_cache=False,
                )
                h = captured["h"][:, -1, :].float()
                logits = out.logits[:, -1, :].float()
                hs.append(h.cpu())
                lses.append(torch.logsumexp(logits, dim=-1).cpu())
                if layers:
                    mask = enc["attention_mask"].unsqueeze(-1).float()
                    for l in layers:
                        state = out.hidden_states[l].float()
                        if pool == "mean":
                            v = (state * mask).sum(1) / mask.sum(1)
                        else:
                            v = state[:, -1, :]
                        extra[l].append(v.cpu())
        finally:
            handle.remove()
        return Encoded(
            h=torch.cat(hs) if hs else torch.empty(0, self.hidden_size),
            vocab_lse=torch.cat(lses) if lses else torch.empty(0),
            layers={l: torch.cat(v) for l, v in extra.items()} if layers else None,
        )

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text)["input_ids"])

    @property
    def context_length(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 2048))

    # ------------------------------------------------------------------ generation
    def chat_prompt(self, messages: list[ChatMessage]) -> str:
        """The chat template as text; a text-only model refuses images rather than dropping them
        (a vision model is ``llm.kind: vision``, :mod:`agentlab.llm.vision`). A model without a
        template (a base model such as the embedded Gemma 3 270M, whose GGUF carries none) gets
        :func:`plain_transcript`, which a completion model continues naturally."""
        refuse_images(self, messages)
        if not getattr(self.tokenizer, "chat_template", None):
            return plain_transcript(messages)
        text = self.tokenizer.apply_chat_template(
            [m.as_dict() for m in messages], tokenize=False, add_generation_prompt=True
        )
        assert isinstance(text, str)  # tokenize=False returns the rendered text
        return text

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        return self.complete(self.chat_prompt(messages), params)

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        return self.complete_batch([prompt], params)[0]

    @torch.no_grad()
    def complete_batch(
        self, prompts: list[str], params: SamplingParams | None = None
    ) -> list[list[str]]:
        params = params or SamplingParams()
        if params.seed is not None:
            torch.manual_seed(params.seed)
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_new_tokens,
            "num_return_sequences": params.n,
            "pad_token_id": self.tokenizer.pad_token_id,
            "do_sample": not params.greedy,
        }
        if not params.greedy:
            gen_kwargs.update(temperature=params.temperature, top_p=params.top_p)
        else:
            gen_kwargs.update(temperature=None, top_p=None, top_k=None)
        if params.grammar is not None:  # replies well-formed by construction (plans, tool calls)
            from transformers import LogitsProcessorList

            gen_kwargs["logits_processor"] = LogitsProcessorList([params.grammar.logits_processor(self.tokenizer)])
        prompt_len = enc["input_ids"].shape[1]
        if params.loop_guard:  # a reply that repeats itself ends there, not at the token cap
            from transformers import StoppingCriteriaList

            from agentlab.llm.loops import stopping_criteria

            gen_kwargs["stopping_criteria"] = StoppingCriteriaList([stopping_criteria(prompt_len)])
        left = task_time_left()  # a reply is cut at the task's deadline, and then not used
        if left <= 0:
            raise TimeLimitExceeded(f"the task's wall-time limit ran out before a reply of {self.model_id}")
        if math.isfinite(left):
            gen_kwargs["max_time"] = left
        out = self.model.generate(**enc, **gen_kwargs)
        if task_time_left() <= 0:
            raise TimeLimitExceeded(f"the task's wall-time limit ran out during a reply of {self.model_id}")
        new = out[:, prompt_len:]
        # usage as an OpenAI server reports it: real prompt tokens (padding excluded) once per
        # returned sequence, and generated tokens up to the end-of-sequence/padding
        pad = self.tokenizer.pad_token_id
        self.tokens_in += int(enc["attention_mask"].sum().item()) * params.n
        self.tokens_out += int((new != pad).sum().item()) if pad is not None else int(new.numel())
        if params.loop_guard:
            new = self._cut_loops(new)
        texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        texts = [truncate_at_stop(t, params.stop) for t in texts]
        return [texts[i * params.n : (i + 1) * params.n] for i in range(len(prompts))]

    def _cut_loops(self, new: torch.Tensor) -> torch.Tensor:
        """Each sequence cut after the first copy of a block it ended by repeating (the rest padded),
        counted in :attr:`loop_cuts`."""
        from agentlab.llm.loops import DEFAULT_RULE

        pad = self.tokenizer.pad_token_id
        ends = {t for t in (pad, self.tokenizer.eos_token_id) if t is not None}
        out = new.clone()
        for i, row in enumerate(new.tolist()):
            n = len(row)
            while n and row[n - 1] in ends:
                n -= 1  # the padding after an ended sequence is not a loop
            cut = DEFAULT_RULE.loop_start(row[:n])
            if cut is not None:
                self.loop_cuts += 1
                out[i, cut:] = pad if pad is not None else self.tokenizer.eos_token_id
        return out

    def describe(self) -> dict[str, str]:
        return {"model_id": self.model_id, "fingerprint": self.fingerprint, "source": str(self.source)}

    def __repr__(self) -> str:
        return f"LocalHFBackend({json.dumps(self.describe())})"
