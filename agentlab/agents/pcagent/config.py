"""One PC-Agent run's settings: a document's ``runner_options`` plus the run's, checked strictly.

A pydantic model with ``extra="forbid"`` so a misspelt option is a :class:`ConfigError` naming
the document, not a silently ignored key. ``manager``, ``reflection`` and ``ocr`` switch the
paper's ablations (no manager agent, no reflection agent, no active text perception).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: every template PC-Agent fills; their hashes go into the trajectory header
PROMPT_NAMES = ("pcagent/system", "pcagent/manager", "pcagent/decision", "pcagent/decision_typed",
                "pcagent/reflection", "pcagent/progress", "pcagent/correction", "pcagent/intention")
#: PC-Agent's roles, each of which may have a model of its own
MODEL_ROLES = ("manager", "decision", "reflection", "progress", "intention")


class PCAgentConfig(BaseModel):
    """What a PC-Agent run may be told (``runner_options`` keys)."""

    model_config = ConfigDict(extra="forbid")

    max_new_tokens: int = Field(256, ge=8, description="per model reply")
    max_retries: int = Field(2, ge=0, description="re-asks after an unusable reply, per question")
    temperature: float = Field(0.0, ge=0.0, description="first attempt (0 = greedy)")
    retry_temperature: float = Field(0.7, ge=0.0, description="retries sample, so a retry can differ")
    seed: int = 0
    max_elements: int = Field(200, ge=1, description="accessibility elements listed (a desktop lists many)")
    max_ocr_lines: int = Field(60, ge=0, description="OCR text lines listed after the elements")
    max_subtasks: int = Field(8, ge=1, description="the manager's plan is cut to this many")
    manager: bool = Field(True, description="False: the whole instruction is one subtask, no hub (ablation)")
    reflection: bool = Field(True, description="False: no reflection agent (ablation)")
    ocr: bool = Field(True, description="False: elements only, no OCR text boxes (ablation)")
    #: the active perception module's intention understanding agent: a ``select_text("...")`` whose
    #: words OCR does not find verbatim on screen is located by asking a model for the span's first
    #: and last words (:mod:`agentlab.agents.pcagent.intention`); False: OCR's nearest line only
    intention: bool = Field(True, description="False: no intention understanding agent for text selection (ablation)")
    #: the decision agent's replies: ``raw`` (Thought and one call of the env's action space, the
    #: paper's) or ``typed`` (one typed GUI call over the screen's marks, decoded under its grammar by a
    #: local model, OpenAI tools for an endpoint: :mod:`agentlab.agents.gui_actions`, the desktop
    #: specialists' space). A subtask that must report values is still asked in the raw form
    actions: Literal["raw", "typed"] = Field("raw", description="decision replies: raw actions or typed GUI calls")

