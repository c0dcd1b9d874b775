"""One config object per self-instruct run, and the threshold record the filter used.

``SelfInstructConfig`` is what the CLI, a YAML file or a papermill parameters cell fills in.
``Thresholds`` is the contract other tools read from ``data/demos/thresholds.json``
(``scorer``, ``num_layers``, ``tau1``, ``tau2``, ``leakage_tau`` and optional ``per_domain``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentlab.config import error_line, load_config, read_json_object
from agentlab.errors import ConfigError, DataError
from agentlab.llm.config import LLMConfig
from agentlab.paths import data_dir


class Band(BaseModel):
    """A BERTScore band ``[tau1, tau2]``; ``tau1 > tau2`` is refused with one line."""

    model_config = ConfigDict(extra="forbid")

    tau1: float
    tau2: float

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.tau1 > self.tau2:
            raise ValueError(f"tau1={self.tau1} is greater than tau2={self.tau2}; the band would be empty")
        return self


class Thresholds(Band):
    """What the filter used: the scorer, the global band, the leakage bound, per-domain bands.

    ``coverage`` and ``target_size`` record how the band was calibrated (central quantile band
    of same-domain pairwise scores, chosen for a target set size) and ``fitted`` which domains'
    bands were widened for the target size; they are informative only.
    """

    scorer: str
    num_layers: int
    leakage_tau: float
    per_domain: dict[str, Band] = Field(default_factory=dict)
    coverage: float | None = None
    target_size: int | None = None
    #: domains whose band was widened for the target set size, with the replay that chose it
    #: (:mod:`agentlab.selfinstruct.bandfit`)
    fitted: dict[str, str] | None = None

    def band(self, domain: str) -> Band:
        """The band for ``domain`` (its own when calibrated per domain, else the global one)."""
        return self.per_domain.get(domain, Band(tau1=self.tau1, tau2=self.tau2))

    @classmethod
    def load(cls, path: str | Path) -> Thresholds:
        path = Path(path)
        if not path.exists():
            raise DataError("thresholds file not found; run `agentlab selfinstruct --calibrate-only`", where=path)
        raw = read_json_object(path, what="thresholds file", error=DataError)
        try:
            return cls(**raw)
        except ValidationError as exc:
            raise ConfigError(error_line(exc.errors()[0]), where=path) from None

    def save(self, path: str | Path) -> None:
        from agentlab.fileio import atomic_write_json

        atomic_write_json(path, self.model_dump(exclude_none=True))


def default_out_dir() -> Path:
    return data_dir() / "demos"


class SelfInstructConfig(BaseModel):
    """Everything one run needs. Defaults reproduce the shipped dataset.

    ``per_agent`` counts all demonstrations of an agent (hand-written seeds included), so 100
    means "grow 12 seeds to 100". Generation stops for an agent when it reaches ``per_agent``,
    after ``max_rounds`` rounds, or after ``patience`` consecutive rounds that produced no
    usable candidate (the generator is broken for that agent).
    """

    model_config = ConfigDict(extra="forbid")

    agents: list[str] | None = None
    per_agent: int = Field(100, ge=1)
    max_rounds: int = Field(12, ge=0)
    patience: int = Field(3, ge=1)
    generator: LLMConfig = Field(default_factory=LLMConfig)
    prompt_style: str = "completion"  # completion | chat
    #: template under data/prompts/ (``None``: ``selfinstruct/<prompt_style>``); the style still
    #: decides how it is sent (continued list or chat) and parsed
    prompt_template: str | None = None
    #: per agent and round: prompts (each with its own sampled shots) x sequences sampled per prompt
    prompts_per_round: int = Field(2, ge=1)
    sequences_per_prompt: int = Field(4, ge=1)
    #: agents whose prompts share one batched generate call (throughput on CPU)
    agents_per_batch: int = Field(4, ge=1)
    #: torch CPU threads for generation (None = torch's default); 1 is steadier on a busy machine
    torch_threads: int | None = None
    max_new_tokens: int = Field(96, ge=8)
    temperature: float = 0.9
    top_p: float = 0.95
    shots: int = Field(5, ge=1)
    min_words: int = Field(4, ge=1)
    max_chars: int = Field(220, ge=20)
    seed: int = 0
    out_dir: Path = Field(default_factory=default_out_dir)
    #: Thresholds file to use; ``None`` = calibrate from the pool (and write it to out_dir).
    thresholds: Path | None = None
    coverage: float = Field(0.99, gt=0.0, le=1.0)
    per_domain: bool = True
    #: Leakage bound; ``None`` = calibrated: the ``leakage_quantile`` of the hand-written demos'
    #: nearest-benchmark-task scores (see :func:`agentlab.selfinstruct.calibrate.calibrate`).
    leakage_tau: float | None = None
    leakage_quantile: float = Field(0.99, gt=0.0, le=1.0)
    leakage: bool = True
    #: drop lines that are not concrete requests for this agent before Algorithm 1
    #: (:mod:`agentlab.selfinstruct.quality`)
    quality: bool = True
    #: ``copies_seed``: difflib ratio at or above which a line copies a current demonstration
    copy_ratio: float = Field(0.8, gt=0.0, le=1.0)
    #: also withdraw already accepted rows that fail the quality check (recorded in the journal)
    purge_quality: bool = False
    fresh: bool = False
    #: continue an existing journal under changed settings (prompt, generator, quality check,
    #: widened bands) instead of refusing; a narrowed band is still refused
    revise: bool = False
    #: widen the band of domains whose agents are short of ``per_agent``, chosen by replaying
    #: their recorded candidates (:mod:`agentlab.selfinstruct.bandfit`); implies ``revise``
    fit_bands: bool = False
    #: BERTScore model folder; ``None`` = the embedded all-MiniLM-L6-v2
    scorer_model: Path | None = None
    scorer_layers: int = Field(6, ge=1)
    report_samples: int = Field(5, ge=0)
    #: Minutes after which no new round starts (the run stays resumable); ``None`` = no limit.
    time_budget_min: float | None = None

    @field_validator("prompt_style")
    @classmethod
    def _style(cls, v: str) -> str:
        if v not in ("completion", "chat"):
            raise ValueError("prompt_style must be 'completion' or 'chat'")
        return v

    @property
    def template_name(self) -> str:
        return self.prompt_template or f"selfinstruct/{self.prompt_style}"

    @classmethod
    def from_yaml(cls, path: str | Path) -> SelfInstructConfig:
        cfg = load_config(cls, path, what="self-instruct config file")
        cfg.generator.from_source(str(path), "generator")  # named when its API key variable is unset
        return cfg


def parse_generator(spec: str | None) -> LLMConfig:
    """``--generator``: a YAML path, ``openai:<base_url>:<model>``, ``embedded``, or a model path.

    ``openai:http://127.0.0.1:8000/v1:my-model`` splits at the *last* colon, so URLs with ports
    work. Anything else that is not an existing YAML file is taken as a local model (folder or
    ``.gguf``), which the backend validates with its own one-line error.
    """
    if spec is None or spec in ("", "embedded"):
        return LLMConfig()
    if spec.startswith("openai:"):
        rest = spec[len("openai:") :]
        base_url, sep, model = rest.rpartition(":")
        if not sep or not base_url or not model or "://" not in base_url:
            raise ConfigError(
                f"--generator '{spec}': expected openai:<base_url>:<model>, e.g. openai:http://127.0.0.1:8000/v1:my-model"
            )
        return LLMConfig(kind="openai", base_url=base_url, model=model).from_source("--generator")
    path = Path(spec)
    if path.suffix in (".yaml", ".yml"):
        return LLMConfig.from_yaml(path)
    return LLMConfig(kind="local", model=spec)


def sample_config(out_dir: str | Path, agents: list[str] | None = None, rounds: int = 1) -> SelfInstructConfig:
    """The small regeneration ``make run`` does (notebook 02): one agent, one round, the shipped
    thresholds, written to ``out_dir`` (never over the shipped data)."""
    shipped = default_out_dir() / "thresholds.json"
    return SelfInstructConfig(
        agents=agents or ["SpotifyAgent"],
        max_rounds=rounds,
        out_dir=Path(out_dir),
        thresholds=shipped if shipped.is_file() else None,
        fresh=True,
        torch_threads=1,
    )
