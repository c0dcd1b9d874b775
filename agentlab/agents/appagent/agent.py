"""The AppAgent agent: learn an app's elements (exploration), then use them (deployment).

Follows the AppAgent paper's two phases over any :class:`~agentlab.envs.base.Env`:

* **exploration** (:mod:`agentlab.agents.appagent.explore`): act on the app towards a goal, compare
  the screen before and after each action with the LLM, and write what each element does
  into per-element documentation (:mod:`agentlab.agents.appagent.docs_store`); or write it from a
  recorded human demonstration (a trajectory) instead of acting;
* **deployment** (:meth:`AppAgent.deploy`): each step, show the LLM the labelled screen,
  the documentation of the elements on it, the task and a running summary; parse its
  Observation / Thought / Action / Summary reply and act, until it says FINISH. With
  ``actions="typed"`` (a runner option) the reply is one typed GUI call over
  the screen's marks instead, decoded under a grammar (:mod:`agentlab.agents.appagent.typed`).

The LLM is any :class:`~agentlab.llm.LLMBackend`: the screen reaches it as the numbered
element list and, when the model takes images, as the screenshot with those numbers drawn on it. A weak model's unusable replies are
recorded in the trajectory with the reason, fed back (``appagent/deploy_feedback``), and
bounded by ``max_retries`` consecutive failures; the episode is bounded by ``max_steps``.
What both phases share (config, asking, recording) is :mod:`agentlab.agents.appagent.core`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from agentlab.agents.appagent.core import AppAgentCore, EpisodeResult, NullRecorder, block
from agentlab.agents.appagent.explore import learn_from_demo, run_exploration
from agentlab.agents.appagent.typed import deploy_typed
from agentlab.agents.response import ActReply, parse_act_reply
from agentlab.dialogue.ask import Attempt
from agentlab.envs.base import Env, StepResult
from agentlab.envs.trajectory import TrajectoryRecorder

log = logging.getLogger(__name__)


class _Carry:
    """The last check on a deployment reply: carry its action out (FINISH needs nothing).

    An action the env refuses (unknown element, untypeable text) is a problem fed back to
    the model like a parse error; nothing was sent to the device then.
    """

    def __init__(self, env: Env) -> None:
        self.env = env
        self.result: StepResult | None = None

    def __call__(self, parsed: ActReply) -> None:
        self.result = None if parsed.action.terminal else self.env.step(parsed.action)


class AppAgent(AppAgentCore):
    """Explore-then-deploy agent; one instance per app."""

    def explore(self, env: Env, task: str, episode_dir: str | Path | None = None) -> EpisodeResult:
        """Autonomous exploration towards ``task``, writing element documentation."""
        return run_exploration(self, env, task, episode_dir)

    def learn_from_demo(self, demo_dir: str | Path) -> dict[str, Any]:
        """Write element documentation from a recorded human demonstration (a trajectory)."""
        return learn_from_demo(self, demo_dir)

    def deploy(self, env: Env, task: str, episode_dir: str | Path | None = None, *,
               recorder: TrajectoryRecorder | None = None) -> EpisodeResult:
        """Carry out ``task`` step by step using the documentation; records into ``recorder``
        (the episode's) when given, else into a new trajectory in ``episode_dir`` (if any)."""
        cfg = self.config
        space = env.actions
        rec: TrajectoryRecorder | NullRecorder
        if recorder is not None:
            rec = recorder
            rec.meta.extra.update(self.meta_extra())
        else:
            rec = self.recorder(episode_dir, task, env, "deploy")
        if cfg.actions == "typed":
            return deploy_typed(self, env, task, rec)
        summary = "nothing yet"
        steps = 0
        status, error = "max_steps", None
        with self.episode(rec):
            obs = env.reset(task)
            while steps < cfg.max_steps:
                docs = self.docs.for_screen(obs.elements) if cfg.use_docs else ""
                carry = _Carry(env)

                def record_failure(a: Attempt[ActReply]) -> None:
                    if not a.ok:
                        rec.record(obs, a.value.action if a.value else None, action_text=a.reply,
                                   error=f"step {steps + 1}, attempt {a.index + 1}: {a.problem}",
                                   save_images=False, info={"attempt": a.index + 1})

                asked = self.ask(
                    "appagent/deploy", self.platform(env), lambda reply: parse_act_reply(reply, space),
                    dict(task=task, app=cfg.app, ui=self.ui_text(obs),
                         docs=block("appagent/docs_block", docs=docs) if docs else "",
                         actions=space.doc(), example=space.example(), last_summary=summary),
                    checks=[carry], correction="appagent/deploy_feedback", on_attempt=record_failure,
                    images=self.screen_images(obs),
                )
                parsed = asked.value
                if parsed is None:
                    status = "failed"
                    error = f"{len(asked.attempts)} unusable replies in a row; last: {asked.attempts[-1].problem}"
                    break
                failed = asked.attempts[:-1]
                # as before: a FINISH right after unusable replies keeps the last one's message
                error = f"step {steps + 1}, attempt {len(failed)}: {failed[-1].problem}" if failed else None
                if parsed.action.terminal:
                    rec.record(obs, parsed.action, action_text=parsed.action_text, thought=parsed.thought,
                               reflection=parsed.summary or summary, done=True, info={"observation": parsed.observation})
                    status = "done"
                    summary = parsed.summary or summary
                    break
                assert carry.result is not None
                error = None
                steps += 1
                summary = parsed.summary or f"{summary}; {parsed.action.describe()}"
                rec.record(obs, parsed.action, action_text=parsed.action_text, thought=parsed.thought,
                           reflection=summary, info={"observation": parsed.observation, **carry.result.info})
                obs = carry.result.observation
            if status != "done":
                rec.record(obs, None, done=True, error=error, reflection=summary)
            rec.finish(status, error=error, steps=steps, llm_calls=self.llm_calls)
        return EpisodeResult(status, steps, summary, error, rec.path, self.llm_calls)
