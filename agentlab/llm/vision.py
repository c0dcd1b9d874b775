"""A local Hugging Face vision-language model: chat that can look at screenshots.

Selected with ``llm.kind: vision`` and ``llm.model`` naming a model folder whose config is a
vision-language model (SmolVLM/Idefics3, LLaVA, Qwen2-VL, ...). Why a kind of its own rather
than guessing from the folder under ``kind: local``: the local text backend also serves
AgentToken and the adapter baselines (hidden states, output head), which a VLM's processor
path does not offer; saying ``vision`` keeps what a run gets explicit, and a VLM folder given
as ``kind: local`` is refused with a line pointing here.

The model is loaded through ``AutoProcessor`` + ``AutoModelForImageTextToText``; a message's
images go into the processor's chat template as image entries (before the message's text, the
order these models are trained on), so the processor resizes them and inserts the image tokens
its model expects. The backend declares ``capabilities.images``; it does not offer hidden
states.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from agentlab.errors import ConfigError, ModelNotFoundError
from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams, truncate_at_stop
from agentlab.llm.config import LLMConfig
from agentlab.llm.identity import model_fingerprint
from agentlab.llm.local import is_vision_model, pick_device
from agentlab.llm.plan_grammar import refuse_grammar

log = logging.getLogger(__name__)


def processor_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Messages in the form a processor's chat template takes: content parts, each image an
    ``{"type": "image", "image": <PIL image>}`` entry ahead of the text."""
    out: list[dict[str, Any]] = []
    for m in messages:
        parts: list[dict[str, Any]] = [{"type": "image", "image": img} for img in m.images]
        parts.append({"type": "text", "text": m.content})
        out.append({"role": m.role, "content": parts})
    return out


def _model_folder(config: LLMConfig) -> Path:
    folder = Path(config.model).expanduser()
    if not folder.is_dir() or not (folder / "config.json").is_file():
        raise ModelNotFoundError(
            f"vision model not found: {folder} is not a Hugging Face model directory (no config.json); "
            "download one (e.g. HuggingFaceTB/SmolVLM-256M-Instruct) elsewhere and point llm.model at the folder"
        )
    if not is_vision_model(folder):
        raise ConfigError(f"llm.kind=vision but {folder} holds no vision-language model (its config.json "
                          "has no vision_config); use llm.kind: local for a text-only model")
    return folder


class VisionHFBackend(LLMBackend):
    """A frozen local vision-language model (eval mode, no gradients)."""

    def __init__(self, config: LLMConfig) -> None:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.config = config
        folder = _model_folder(config)
        try:
            self.processor = AutoProcessor.from_pretrained(str(folder))
            self.model = AutoModelForImageTextToText.from_pretrained(str(folder), dtype=getattr(torch, config.dtype))
        except OSError as exc:
            raise ModelNotFoundError(f"cannot load vision model from {folder}: {exc}") from None
        except ValueError as exc:
            raise ConfigError(f"cannot load {folder} as an image-text-to-text model: {str(exc)[:200]}") from None
        if not getattr(self.processor, "chat_template", None):
            raise ConfigError(f"{folder} has no chat template for its processor (chat_template.jinja or "
                              "processor_config.json); a vision model needs one to place images in a prompt")
        self.tokenizer = self.processor.tokenizer
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"
        self.device = torch.device(pick_device(config.device))
        self.model.to(self.device).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.model_id = folder.name
        self.fingerprint = model_fingerprint(folder)
        self.source = folder
        #: tokens read (image tokens included) and written so far
        self.tokens_in = 0
        self.tokens_out = 0

    @property
    def context_length(self) -> int:
        cfg = self.model.config
        text_cfg = getattr(cfg, "text_config", None) or cfg
        return int(getattr(text_cfg, "max_position_embeddings", 2048))

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(token_counting=True, context_length=self.context_length,
                            chat_template=True, images=True)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text)["input_ids"])

    def chat_prompt(self, messages: list[ChatMessage]) -> str:
        """The rendered prompt as text (each image shown as the template's placeholder)."""
        text = self.processor.apply_chat_template(
            processor_messages(messages), tokenize=False, add_generation_prompt=True
        )
        assert isinstance(text, str)
        return text

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        inputs = self.processor.apply_chat_template(
            processor_messages(messages), add_generation_prompt=True, tokenize=True,
            return_dict=True, return_tensors="pt",
        )
        return self._generate(dict(inputs), params)

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        return self._generate(dict(self.tokenizer(prompt, return_tensors="pt")), params)

    @torch.no_grad()
    def _generate(self, inputs: dict[str, Any], params: SamplingParams | None) -> list[str]:
        params = params or SamplingParams()
        refuse_grammar(self, params.grammar)
        if params.seed is not None:
            torch.manual_seed(params.seed)
        dtype = next(self.model.parameters()).dtype
        batch = {k: (v.to(self.device, dtype=dtype) if k == "pixel_values" else v.to(self.device))
                 for k, v in inputs.items() if isinstance(v, torch.Tensor)}
        # greedy decoding gives one answer however often it is asked: generate it once
        sequences = 1 if params.greedy else params.n
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_new_tokens,
            "num_return_sequences": sequences,
            "pad_token_id": self.tokenizer.pad_token_id,
            "do_sample": not params.greedy,
        }
        if params.greedy:
            gen_kwargs.update(temperature=None, top_p=None, top_k=None)
        else:
            gen_kwargs.update(temperature=params.temperature, top_p=params.top_p)
        out = self.model.generate(**batch, **gen_kwargs)
        new = out[:, batch["input_ids"].shape[1]:]
        pad = self.tokenizer.pad_token_id
        self.tokens_in += int(batch["attention_mask"].sum().item()) * sequences
        self.tokens_out += int((new != pad).sum().item()) if pad is not None else int(new.numel())
        texts = [truncate_at_stop(t, params.stop) for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
        return texts * params.n if params.greedy else texts

    def describe(self) -> dict[str, str]:
        return {"model_id": self.model_id, "fingerprint": self.fingerprint, "source": str(self.source)}
