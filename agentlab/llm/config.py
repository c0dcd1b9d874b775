"""Which model backend a run uses: one config object, from YAML, env vars or a notebook cell.

Resolution order for :func:`LLMConfig.resolve`: explicit fields, then
``AGENTLAB_LLM_CONFIG`` (a YAML file), then ``AGENTLAB_LLM_*`` variables, then the
embedded SmolLM2-135M-Instruct.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from agentlab.errors import ConfigError

EMBEDDED_BACKBONE = "embedded:smollm2-135m-instruct"


class LLMConfig(BaseModel):
    """Backend selection.

    - ``kind="local"``: ``model`` is a Hugging Face model directory, a ``.gguf`` file, or
      ``embedded:smollm2-135m-instruct`` (default).
    - ``kind="openai"``: any OpenAI-compatible server; ``base_url`` + ``model``; the API key
      is read from the environment variable named by ``api_key_env`` (never stored).
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["local", "openai"] = "local"
    model: str = EMBEDDED_BACKBONE
    gguf_file: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    device: str = "cpu"
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    timeout_s: float = 120.0
    use_completions_endpoint: bool = False
    #: openai: the endpoint accepts image content parts (a vision model); servers do not say.
    images: bool = False
    #: openai: the served model's context in tokens, when known (prompts are checked against it).
    context_length: int | None = None

    @classmethod
    def from_yaml(cls, path: str | Path) -> "LLMConfig":
        path = Path(path)
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except FileNotFoundError:
            raise ConfigError("LLM config file not found", where=path) from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"not valid YAML ({exc})", where=path) from None
        if "llm" in raw and isinstance(raw["llm"], dict):
            raw = raw["llm"]
        try:
            return cls(**raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise ConfigError(f"{loc}: {err['msg']}", where=path) from None

    @classmethod
    def from_env(cls) -> "LLMConfig":
        """Config from ``AGENTLAB_LLM_CONFIG`` or ``AGENTLAB_LLM_{KIND,MODEL,BASE_URL,...}``."""
        if path := os.environ.get("AGENTLAB_LLM_CONFIG"):
            return cls.from_yaml(path)
        fields: dict[str, str] = {}
        for key in ("kind", "model", "gguf_file", "base_url", "api_key_env", "device", "dtype"):
            val = os.environ.get(f"AGENTLAB_LLM_{key.upper()}")
            if val:
                fields[key] = val
        try:
            return cls(**fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ConfigError(f"AGENTLAB_LLM_{str(err['loc'][0]).upper()}: {err['msg']}") from None

    def api_key(self) -> str:
        return os.environ.get(self.api_key_env, "not-needed")
