"""What AppAgent's two phases share: the run config, the episode result, asking the LLM, recording.

Exploration (:mod:`agentlab.agents.appagent.explore`) and deployment (:mod:`agentlab.agents.appagent.agent`)
both build on :class:`AppAgentCore`, so neither imports the other. Every question to the LLM
goes through :meth:`AppAgentCore.ask`, i.e. the dialogue layer's one retry loop
(:func:`~agentlab.dialogue.ask.ask_until_parsed`): the first attempt is greedy, retries sample
at ``retry_temperature``, and at most ``max_retries`` retries follow an unusable reply.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agentlab.agents.appagent.docs_store import DocStore
from agentlab.dialogue.ask import AskResult, Attempt, Check, RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template, template_hashes
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Type
from agentlab.envs.actions.phone import PHONE, Text
from agentlab.envs.base import Element, Env, Observation
from agentlab.envs.marks import draw_marks
from agentlab.errors import AgentlabError, DeviceDisconnectedError
from agentlab.llm.base import ChatMessage, LLMBackend
from agentlab.envs.trajectory import StepRecord, TrajectoryRecorder

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Every template AppAgent fills; their hashes go into each episode's header.
PROMPT_NAMES = (
    "appagent/system",
    "appagent/explore_act",
    "appagent/explore_reflect",
    "appagent/demo_doc",
    "appagent/deploy",
    "appagent/deploy_feedback",
    "appagent/docs_block",
    "appagent/old_doc",
    "appagent/deploy_typed",
)


class AppAgentConfig(BaseModel):
    """One run's settings (a papermill parameters cell or YAML can fill it)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt setting is an error, not ignored

    app: str = Field(description="documentation namespace: data/docs/<app>/")
    docs_dir: Path | None = Field(None, description="root of the documentation (default data/docs)")
    use_docs: bool = Field(True, description="deployment: show element documentation")
    max_steps: int = Field(10, ge=1, description="deployment: actions per episode (paper: 10)")
    max_rounds: int = Field(20, ge=1, description="exploration: actions per episode (paper: up to 40)")
    max_retries: int = Field(3, ge=0, description="consecutive unusable replies before the episode fails")
    max_new_tokens: int = Field(256, ge=8)
    temperature: float = Field(0.0, ge=0.0, description="first attempt (0 = greedy)")
    retry_temperature: float = Field(0.7, ge=0.0, description="retries sample, so a retry can differ")
    seed: int = 0
    max_elements: int = Field(50, ge=1, description="elements listed in a prompt")
    #: deployment's replies: ``raw`` (the env's own action space, a sectioned reply) or ``typed``
    #: (:mod:`agentlab.agents.gui_actions`: one call over the screen's marks, decoded under a grammar
    #: by a local model, asked as OpenAI tools of an endpoint)
    actions: Literal["raw", "typed"] = Field("raw", description="deployment: raw env actions or typed GUI actions")
    #: typed deployment on a desktop offers the app's learned skills (``data/skills/<app>.json``,
    #: :mod:`agentlab.agents.gui_skills`) beside the GUI operations
    skills: bool = Field(True, description="typed deployment: offer the app's learned skills")
    #: the app's skill prior (``data/gui_priors/<app>``, fitted on synthesized pairs whose skill
    #: calls replayed: ``agentlab skill-prior``): ``auto`` uses it when it exists, ``none`` never,
    #: anything else is a prior folder
    skill_prior: str = Field("auto", description="typed deployment: auto | none | a skill prior folder")
    #: its exponent in the product with the model's choice of skill: 2, set before any run (the
    #: toolkits' 5 was chosen on a development set; this is not tuned on any task)
    skill_prior_weight: float = Field(2.0, ge=0.0)
    #: an episode ends once every ask of the request had a skill run to its end (a phone app, a
    #: browser's settings, a mail folder keep what a skill did; a document is saved first, see
    #: ``save_on_end``); false: the model says when it is done (``DONE_AFTER_SKILLS`` still
    #: favours done() then)
    stop_after_skills: bool = Field(True, description="typed deployment: end once every ask had a skill")
    #: a desktop app with a finishing skill (its save, :attr:`~agentlab.agents.gui_skills.GuiSkill.finishes`)
    #: runs it once before an episode that changed something ends, unless the model just did; false:
    #: saving is left to the model (the ablation)
    #: a typed deployment with skills offers only the skills that can be called on the screen
    #: (and done/fail) until a skill stops or is refused or every ask had one; the GUI operations
    #: are the fallback when no skill fits (issue #40). False: both at every step (the ablation)
    skills_first: bool = Field(True, description="typed deployment: skills only while one fits, the GUI operations as fallback")
    save_on_end: bool = Field(True, description="typed desktop deployment: save with the app's finishing skill at the end")


@dataclass
class EpisodeResult:
    status: str  #: done | failed | max_steps | disconnected
    steps: int  #: actions executed on the env
    summary: str = ""
    error: str | None = None
    path: Path | None = None  #: the trajectory folder, when recorded
    llm_calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class NullRecorder:
    """Stands in when the caller does not want a trajectory."""

    path = None

    def record(self, *a: Any, **k: Any) -> StepRecord | None:
        return None

    def finish(self, *a: Any, **k: Any) -> None:
        return None


def target_element(action: Action, obs: Observation) -> Element | None:
    """The element an action affects: its numbered element, or the text field for typing."""
    n = action.element_ref
    if n is not None:
        return obs.element(n)
    if isinstance(action, (Text, Type)):
        return next((e for e in obs.elements if "focused" in e.state), None) or next(
            (e for e in obs.elements if "editable" in e.state), None
        )
    return None


def screen_changed(before: Observation, after: Observation) -> bool:
    """Did the action visibly do anything? (UI structure/text, else pixels.)"""
    a, b = before.info.get("signature"), after.info.get("signature")
    if a is not None and b is not None:
        return a != b
    if before.screenshot is not None and after.screenshot is not None:
        return before.screenshot.tobytes() != after.screenshot.tobytes()
    return before.summary() != after.summary()


def block(name: str, **values: str) -> str:
    """An optional prompt block (``appagent/docs_block``, ``appagent/old_doc``) set off by a blank line."""
    return "\n" + load_template(name).render(**values)


class AppAgentCore:
    """One app's agent state (LLM, config, documentation) and the calls both phases make."""

    def __init__(self, llm: LLMBackend, config: AppAgentConfig) -> None:
        self.llm = llm
        self.config = config
        self.docs = DocStore(config.app, config.docs_dir)
        #: greedy first, retries sample; counts the calls
        self.sampling = RetrySampling(config.max_new_tokens, config.temperature, config.retry_temperature, config.seed)

    @property
    def llm_calls(self) -> int:
        return self.sampling.calls

    def messages(self, prompt: str, platform: str, *, images: tuple[Image.Image, ...] = (),
                 **fields: str) -> list[ChatMessage]:
        """The system prompt and one rendered template as the user turn (carrying ``images``)."""
        system = load_template("appagent/system").render(platform=platform).strip() + "\n"
        user = load_template(prompt).render(**fields).strip() + "\n"
        return [ChatMessage("system", system), ChatMessage("user", user, images=images)]

    def screen_images(self, obs: Observation) -> tuple[Image.Image, ...]:
        """The labelled screenshot (the listed elements' numbers drawn on it, as the AppAgent paper
        shows its model) when the model takes images; nothing for a text model, which reads the list."""
        if obs.screenshot is None or not self.llm.capabilities.images:
            return ()
        return (draw_marks(obs.screenshot, obs.elements[: self.config.max_elements]),)

    def ask(
        self,
        prompt: str,
        platform: str,
        parse: Callable[[str], T],
        fields: Mapping[str, str],
        *,
        checks: Sequence[Check[T]] = (),
        correction: str | None = None,
        on_attempt: Callable[[Attempt[T]], None] | None = None,
        images: tuple[Image.Image, ...] = (),
        constraint: Mapping[str, Any] | None = None,
    ) -> AskResult[T]:
        """Ask with template ``prompt`` until ``parse`` and ``checks`` accept the reply (``max_retries`` retries).

        With ``correction`` (a template with ``{problems}``), a retry fills the prompt's
        ``{feedback}`` with it; without, a retry asks the same question again (sampled).
        ``constraint``: :class:`~agentlab.llm.base.SamplingParams` fields every attempt gets (a
        decoding ``grammar``, OpenAI ``tools``).
        """

        def build(feedback: str) -> list[ChatMessage]:
            extra = {"feedback": f"\n{feedback}\n" if feedback else ""} if correction else {}
            return self.messages(prompt, platform, images=images, **fields, **extra)

        return ask_until_parsed(
            self.llm,
            build,
            parse,
            checks=checks,
            max_attempts=self.config.max_retries + 1,
            params=(lambda i: dataclasses.replace(self.sampling(i), **constraint)) if constraint else self.sampling,
            correction=load_template(correction) if correction else None,
            on_attempt=on_attempt,
            label=prompt,
        )

    # ------------------------------------------------------------------ screens
    def ui_text(self, obs: Observation, hide: set[str] | None = None) -> str:
        els = [e for e in obs.elements if not (hide and e.uid in hide)][: self.config.max_elements]
        lines = [e.label() for e in els] or ["(no labelled elements)"]
        if obs.text:
            lines.append(obs.text)
        return "\n".join(lines)

    @staticmethod
    def platform(env: Env) -> str:
        return "phone" if env.actions is PHONE else "desktop computer"

    # ------------------------------------------------------------------ recording
    def meta_extra(self) -> dict[str, Any]:
        return {"config": self.config.model_dump(mode="json"), "prompts": template_hashes(PROMPT_NAMES)}

    def recorder(self, episode_dir: str | Path | None, task: str | None, env: Env, phase: str) -> TrajectoryRecorder | NullRecorder:
        if episode_dir is None:
            return NullRecorder()
        return TrajectoryRecorder(
            episode_dir, task=task, env=type(env).__name__, agent=f"appagent-{phase}",
            model_id=getattr(self.llm, "model_id", ""), extra=self.meta_extra(),
        )

    @contextmanager
    def episode(self, rec: TrajectoryRecorder | NullRecorder) -> Iterator[None]:
        """End the episode cleanly on errors: the trajectory so far stays on disk."""
        try:
            yield
        except DeviceDisconnectedError as exc:
            rec.record(None, None, error=str(exc), done=True)
            rec.finish("disconnected", error=str(exc))
            raise
        except AgentlabError as exc:
            rec.record(None, None, error=str(exc), done=True)
            rec.finish("failed", error=str(exc))
            raise
        except KeyboardInterrupt:
            rec.finish("interrupted", error="interrupted by the user")
            raise
