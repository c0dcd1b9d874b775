"""Agent S2's run settings: one pydantic model, filled from a document's ``runner_options``.

A misspelt option is an error (``extra="forbid"``), reported by
:func:`~agentlab.agents.base.runner_config` as a :class:`~agentlab.errors.ConfigError` naming the document, so an ablation that names an expert
wrongly fails before anything runs instead of silently running the full agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: every template Agent S2 fills; their hashes go into the trajectory header
PROMPT_NAMES = ("s2/system", "s2/manager", "s2/worker", "s2/worker_typed", "s2/feedback", "s2/ground_point")
#: the role a system prompt speaks to -> the model role it asks (``roles:`` in an LLM config file)
MODEL_ROLES = {"manager": "manager", "worker": "worker", "grounding expert": "grounder"}

Expert = Literal["visual", "textual", "structural"]
EXPERTS: tuple[Expert, ...] = ("visual", "textual", "structural")


class S2Config(BaseModel):
    """One Agent S2 run (a papermill parameters cell or YAML can fill it as well)."""

    model_config = ConfigDict(extra="forbid")

    max_new_tokens: int = Field(256, ge=8)
    max_retries: int = Field(3, ge=0, description="retries after an unusable reply (per question)")
    temperature: float = Field(0.0, ge=0.0, description="first attempt (0 = greedy)")
    retry_temperature: float = Field(0.7, ge=0.0, description="retries sample, so a retry can differ")
    seed: int = 0
    max_elements: int = Field(200, ge=1, description="accessibility elements listed in a prompt")
    #: proactive hierarchical planning: the manager replans after every completed subgoal;
    #: False = plan once and replan only after a failed subgoal (the paper's ablation)
    replan: bool = True
    #: the grounding experts the worker may use (ablations drop one); their actions leave the prompt
    experts: list[Expert] = Field(default_factory=lambda: list(EXPERTS))
    max_subgoals: int = Field(8, ge=1, description="longest plan kept, and subgoals attempted per episode")
    #: OCR lines in the worker's text observation (the textual expert reads the screen either way)
    ocr: bool = True
    #: the visual expert's text path: the weakest element match (0-1) it will act on
    min_match: float = Field(0.3, ge=0.0, le=1.0)
    #: the structural expert saves the document after writing cells (the task's file then shows them)
    save_cells: bool = True
    #: where a relative ``set_cells(..., file=...)`` path is looked up (None: the current folder)
    files_dir: Path | None = None
    #: who places the visual expert's point: the ``grounder`` role's model (a grounding model of its
    #: own), the acting ``worker`` model, or ``elements`` (accessibility matching, no model); a model
    #: that takes no images always falls back to the elements (the paper's grounding ablation)
    grounding: Literal["grounder", "worker", "elements"] = "grounder"
    #: the point's convention: ``pixels`` of the screenshot as sent, or the ``relative`` 0-1000 grid
    point_coords: Literal["pixels", "relative"] = "pixels"
    #: the worker's replies: ``semantic`` (the paper's: one action described in words, placed by a
    #: grounding expert) or ``typed`` (one typed GUI call over the screen's numbered marks, decoded
    #: under its grammar by a local model, OpenAI tools for an endpoint: the desktop specialists'
    #: space, :mod:`agentlab.agents.gui_actions`; no grounding expert is asked)
    actions: Literal["semantic", "typed"] = "semantic"

    @field_validator("experts")
    @classmethod
    def _distinct(cls, v: list[Expert]) -> list[Expert]:
        return list(dict.fromkeys(v))

