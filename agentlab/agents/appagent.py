"""The AppAgent agent: learn an app's elements (exploration), then use them (deployment).

Follows the AppAgent paper's two phases over any :class:`~agentlab.envs.base.Env`:

* **exploration** (:mod:`agentlab.agents.explore`): act on the app towards a goal, compare
  the screen before and after each action with the LLM, and write what each element does
  into per-element documentation (:mod:`agentlab.agents.docs_store`); or write it from a
  recorded human demonstration (a trajectory) instead of acting;
* **deployment** (:meth:`AppAgent.deploy`): each step, show the LLM the labelled screen,
  the documentation of the elements on it, the task and a running summary; parse its
  Observation / Thought / Action / Summary reply and act, until it says FINISH.

The LLM is any :class:`~agentlab.llm.LLMBackend` (text in, text out): the screen reaches
it as the numbered element list, not as pixels. A weak model's unusable replies are
recorded in the trajectory with the reason, fed back once, and bounded by ``max_retries``
consecutive failures; the episode is bounded by ``max_steps``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.agents.docs_store import DocStore
from agentlab.agents.prompts import load_prompt, prompt_hashes
from agentlab.agents.response import ActReply, parse_act_reply
from agentlab.envs import actions as A
from agentlab.envs.base import Element, Env, Observation, StepResult
from agentlab.errors import ActionParseError, AgentlabError, DeviceDisconnectedError, InvalidActionError
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.trajectory import StepRecord, TrajectoryRecorder

log = logging.getLogger(__name__)


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


@dataclass
class EpisodeResult:
    status: str  #: done | failed | max_steps | disconnected
    steps: int  #: actions executed on the env
    summary: str = ""
    error: str | None = None
    path: Path | None = None  #: the trajectory folder, when recorded
    llm_calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class _NullRecorder:
    """Stands in when the caller does not want a trajectory."""

    path = None

    def record(self, *a: Any, **k: Any) -> StepRecord | None:
        return None

    def finish(self, *a: Any, **k: Any) -> None:
        return None


def action_example(space: str) -> str:
    """A short example call for the prompt's format line (the first action's docstring example)."""
    return A.docstring_example(A.action_classes(space)[0]) or "tap(2)"


def target_element(action: A.Action, obs: Observation) -> Element | None:
    """The element an action affects: its numbered element, or the text field for typing."""
    n = action.element_ref
    if n is not None:
        return obs.element(n)
    if isinstance(action, (A.Text, A.Type)):
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


class AppAgent:
    """Explore-then-deploy agent; one instance per app."""

    def __init__(self, llm: LLMBackend, config: AppAgentConfig) -> None:
        self.llm = llm
        self.config = config
        self.docs = DocStore(config.app, config.docs_dir)
        self.llm_calls = 0

    # ------------------------------------------------------------------ helpers
    def ask(self, prompt: str, attempt: int, platform: str, **fields: str) -> str:
        """One chat call: the system prompt + a rendered template; retries sample."""
        cfg = self.config
        system = load_prompt("appagent_system").render(platform=platform)
        user = load_prompt(prompt).render(**fields)
        params = SamplingParams(
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature if attempt == 0 else cfg.retry_temperature,
            top_p=1.0 if attempt == 0 else 0.95,
            seed=cfg.seed + self.llm_calls,
        )
        self.llm_calls += 1
        out = self.llm.chat([ChatMessage("system", system), ChatMessage("user", user)], params)
        reply = out[0] if out else ""
        log.debug("%s attempt %d reply: %r", prompt, attempt, reply)
        return reply

    def ui_text(self, obs: Observation, hide: set[str] | None = None) -> str:
        els = [e for e in obs.elements if not (hide and e.uid in hide)][: self.config.max_elements]
        lines = [e.label() for e in els] or ["(no labelled elements)"]
        if obs.text:
            lines.append(obs.text)
        return "\n".join(lines)

    @staticmethod
    def platform(env: Env) -> str:
        return "phone" if env.action_space == A.PHONE else "desktop computer"

    def meta_extra(self) -> dict[str, Any]:
        return {"config": self.config.model_dump(mode="json"), "prompts": prompt_hashes()}

    def recorder(self, episode_dir: str | Path | None, task: str | None, env: Env, phase: str) -> TrajectoryRecorder | _NullRecorder:
        if episode_dir is None:
            return _NullRecorder()
        return TrajectoryRecorder(
            episode_dir, task=task, env=type(env).__name__, agent=f"appagent-{phase}",
            model_id=getattr(self.llm, "model_id", ""), extra=self.meta_extra(),
        )

    @contextmanager
    def episode(self, rec: TrajectoryRecorder | _NullRecorder) -> Iterator[None]:
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

    # ------------------------------------------------------------------ phases
    def explore(self, env: Env, task: str, episode_dir: str | Path | None = None) -> EpisodeResult:
        """Autonomous exploration towards ``task``, writing element documentation."""
        from agentlab.agents.explore import run_exploration

        return run_exploration(self, env, task, episode_dir)

    def learn_from_demo(self, demo_dir: str | Path) -> dict[str, Any]:
        """Write element documentation from a recorded human demonstration (a trajectory)."""
        from agentlab.agents.explore import learn_from_demo

        return learn_from_demo(self, demo_dir)

    def deploy(self, env: Env, task: str, episode_dir: str | Path | None = None) -> EpisodeResult:
        """Carry out ``task`` step by step using the documentation."""
        cfg = self.config
        space = env.action_space
        rec = self.recorder(episode_dir, task, env, "deploy")
        summary, feedback = "nothing yet", ""
        steps = failures = 0
        status, error = "max_steps", None
        with self.episode(rec):
            obs = env.reset(task)
            while steps < cfg.max_steps:
                docs = self.docs.for_screen(obs.elements) if cfg.use_docs else ""
                reply = self.ask(
                    "appagent_deploy", failures, self.platform(env),
                    task=task, app=cfg.app, ui=self.ui_text(obs),
                    docs=f"\nWhat these elements do (learned earlier):\n{docs}\n" if docs else "",
                    actions=A.action_space_doc(space), example=action_example(space), last_summary=summary, feedback=feedback,
                )
                parsed: ActReply | None = None
                try:
                    parsed = parse_act_reply(reply, space)
                    if parsed.action.terminal:
                        rec.record(obs, parsed.action, action_text=parsed.action_text, thought=parsed.thought,
                                   reflection=parsed.summary or summary, done=True, info={"observation": parsed.observation})
                        status = "done"
                        summary = parsed.summary or summary
                        break
                    result: StepResult = env.step(parsed.action)
                except (ActionParseError, InvalidActionError) as exc:
                    failures += 1
                    error = f"step {steps + 1}, attempt {failures}: {exc.message}"
                    rec.record(obs, parsed.action if parsed else None, action_text=reply, error=error,
                               save_images=False, info={"attempt": failures})
                    feedback = f"\nYour previous reply could not be used ({exc.message}). Reply again, exactly in the format below.\n"
                    if failures > cfg.max_retries:
                        status = "failed"
                        error = f"{failures} unusable replies in a row; last: {exc.message}"
                        break
                    continue
                failures, feedback, error = 0, "", None
                steps += 1
                summary = parsed.summary or f"{summary}; {parsed.action.describe()}"
                rec.record(obs, parsed.action, action_text=parsed.action_text, thought=parsed.thought,
                           reflection=summary, info={"observation": parsed.observation, **result.info})
                obs = result.observation
            if status != "done":
                rec.record(obs, None, done=True, error=error, reflection=summary)
            rec.finish(status, error=error, steps=steps, llm_calls=self.llm_calls)
        return EpisodeResult(status, steps, summary, error, rec.path, self.llm_calls)
