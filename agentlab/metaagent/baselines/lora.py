"""FT-LoRA baseline: low-rank adapters in the frozen backbone's attention, trained to answer ``###Name###``.

The paper's FT-LoRA row (Table 4/5). Same prompt, data and answer format as the other LM
baselines (:mod:`.adapted_lm`); only ``r``-rank updates of the attention projections are
trained. By default the adapter is injected into a private copy of the backbone, because
the backbone object is shared by every router in the process (AgentToken must keep seeing
the untouched model); ``share_backbone=True`` skips the copy for processes that only train
LoRA (the training-cost benchmark).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any
from pathlib import Path

import torch
from pydantic import Field

from agentlab.metaagent.baselines.adapted_lm import AdapterConfig, AdaptedLMRouter


class LoRARouterConfig(AdapterConfig):
    r: int = Field(8, ge=1)
    alpha: int = Field(16, ge=1)
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "v_proj"])
    lr: float = Field(2e-3, gt=0)
    share_backbone: bool = Field(False, description="inject into the process-shared backbone (no copy)")


class LoRARouter(AdaptedLMRouter):
    """LoRA adapters (peft) on the frozen backbone."""

    name = "lora"
    config_cls = LoRARouterConfig
    cfg: LoRARouterConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.peft_model: Any = None  # a peft model once built

    def _build(self, fresh: bool) -> None:
        from peft import LoraConfig, get_peft_model

        if self.peft_model is not None and self.cfg.share_backbone:
            # The adapter already lives in the shared model; reset it instead of re-injecting.
            if fresh:
                for module in self.peft_model.modules():
                    if hasattr(module, "reset_lora_parameters"):
                        module.reset_lora_parameters("default", True)
            return
        base = self.backend.model if self.cfg.share_backbone else copy.deepcopy(self.backend.model)
        config = LoraConfig(
            r=self.cfg.r,
            lora_alpha=self.cfg.alpha,
            target_modules=list(self.cfg.target_modules),
            lora_dropout=0.0,
            bias="none",
            task_type="CAUSAL_LM",
        )
        with warnings.catch_warnings():  # peft reads transformers' deprecated alias; harmless, and not ours to fix
            warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
            self.peft_model = get_peft_model(base, config)
        self.peft_model.eval()

    def _model(self) -> torch.nn.Module:
        assert self.peft_model is not None
        return self.peft_model

    def _virtual(self) -> None:
        return None

    def _trainable(self) -> list[torch.nn.Parameter]:
        assert self.peft_model is not None
        return [p for n, p in self.peft_model.named_parameters() if "lora_" in n]

    def _save_weights(self, folder: Path) -> None:
        assert self.peft_model is not None
        self.peft_model.save_pretrained(str(folder))

    def _load_weights(self, folder: Path) -> None:
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        assert self.peft_model is not None
        state = load_file(str(folder / self.weights_file))
        result = set_peft_model_state_dict(self.peft_model, state)
        missing = [k for k in getattr(result, "missing_keys", []) if "lora_" in k]
        if missing or not state:
            raise KeyError(f"adapter file lacks {len(missing)} LoRA tensor(s), e.g. {missing[:1]}")
