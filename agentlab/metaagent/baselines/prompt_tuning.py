"""Prompt-tuning baseline: trainable virtual tokens before the router prompt (peft ``PromptTuningConfig``).

The paper's FT-Pt row. ``num_virtual_tokens`` soft-prompt vectors are the only trainable
parameters; they are initialised from the embeddings of a short instruction (peft's TEXT
init, done with our tokenizer so nothing is looked up by name) and trained with the same
prompt, data and ``###Name###`` answer as the other LM baselines. Weights are stored in
peft's format (``adapter_model.safetensors`` with ``prompt_embeddings`` +
``adapter_config.json``). The backbone is never modified, so no copy is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from pydantic import Field

from agentlab.metaagent.baselines.adapted_lm import AdapterConfig, AdaptedLMRouter

DEFAULT_INIT = "Choose the one agent whose speciality matches this computer or phone task."


class PromptTuningRouterConfig(AdapterConfig):
    num_virtual_tokens: int = Field(16, ge=1)
    init_text: str | None = Field(DEFAULT_INIT, description="None: sample vocabulary embeddings")
    lr: float = Field(3e-2, gt=0)


class PromptTuningRouter(AdaptedLMRouter):
    """Soft prompt (peft ``PromptEmbedding``) on the frozen backbone."""

    name = "prompt"
    config_cls = PromptTuningRouterConfig
    cfg: PromptTuningRouterConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.peft_config: Any = None
        self.prompt_encoder: Any = None  # a peft PromptEmbedding once built

    @property
    def n_virtual(self) -> int:
        return self.cfg.num_virtual_tokens

    def _build(self, fresh: bool) -> None:
        from peft import PromptEmbedding, PromptTuningConfig

        model = self.backend.model
        n = self.cfg.num_virtual_tokens
        self.peft_config = PromptTuningConfig(
            task_type="CAUSAL_LM",
            num_virtual_tokens=n,
            token_dim=self.backend.hidden_size,
            num_transformer_submodules=1,
            num_attention_heads=int(model.config.num_attention_heads),
            num_layers=int(model.config.num_hidden_layers),
            prompt_tuning_init="RANDOM",
            inference_mode=not fresh,
        )
        emb = model.get_input_embeddings()
        self.prompt_encoder = PromptEmbedding(self.peft_config, emb).to(emb.weight.device)
        if fresh:
            if self.cfg.init_text:
                ids = self.backend.tokenizer(self.cfg.init_text, add_special_tokens=False)["input_ids"]
                ids = (ids * (n // max(len(ids), 1) + 1))[:n]
            else:
                ids = torch.randint(0, emb.num_embeddings, (n,)).tolist()
            with torch.no_grad():
                self.prompt_encoder.embedding.weight.copy_(emb.weight[torch.tensor(ids)].float())
        self.prompt_encoder.requires_grad_(False)

    def _model(self) -> torch.nn.Module:
        return self.backend.model

    def _virtual(self) -> torch.Tensor:
        assert self.prompt_encoder is not None
        return self.prompt_encoder.embedding.weight

    def _trainable(self) -> list[torch.nn.Parameter]:
        assert self.prompt_encoder is not None
        return [self.prompt_encoder.embedding.weight]

    def _save_weights(self, folder: Path) -> None:
        from safetensors.torch import save_file

        assert self.prompt_encoder is not None and self.peft_config is not None
        save_file({"prompt_embeddings": self._virtual().detach().contiguous()}, str(folder / self.weights_file))
        self.peft_config.save_pretrained(str(folder))

    def _load_weights(self, folder: Path) -> None:
        from safetensors.torch import load_file

        assert self.prompt_encoder is not None
        weight = load_file(str(folder / self.weights_file))["prompt_embeddings"]
        target = self.prompt_encoder.embedding.weight
        if tuple(weight.shape) != tuple(target.shape):
            raise ValueError(f"prompt embeddings have shape {tuple(weight.shape)}, expected {tuple(target.shape)}")
        with torch.no_grad():
            target.copy_(weight)
