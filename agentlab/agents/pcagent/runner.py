"""Runner ``pcagent``: PC-Agent's manager, progress, decision and reflection agents on a desktop.

One episode (:class:`PCAgent.run`):

1. perceive the screen (elements + OCR lines, :mod:`~agentlab.agents.pcagent.perception`);
2. the manager splits the instruction into subtasks (``manager=False``: the instruction is
   the one subtask and there is no hub; a plan the model cannot give after its retries
   falls back to that too, and the trajectory says so);
3. for each subtask in order: the hub fills its ``{placeholders}``; then, until the decision
   agent says ``subtask_done(...)``: decide and act, reflect on the before/after screens
   (``reflection=False``: skipped), update the progress summary; ``subtask_done`` puts its
   outputs into the hub;
4. the episode is ``done`` when every subtask finished, ``max_steps`` when the actions ran
   out first, ``failed`` when the decision agent gave no usable reply within its retries.

Every step record carries ``info["roles"]``: the role messages of that step in the order they
happened (``manager`` with ``plan``; ``hub`` with ``values``; ``decision``; ``reflection`` with
``verdict``; ``progress``), with ``thought`` the decision agent's and ``reflection`` the
running progress, as AppAgent's deploy loop records its summary.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from agentlab.agents.base import AgentResult, Status, runner_config
from agentlab.agents.context import RunContext
from agentlab.agents.asker import RoleAsker
from agentlab.agents.pcagent.config import PROMPT_NAMES, PCAgentConfig
from agentlab.agents.pcagent.decision import Carried, Decision, DecisionAgent
from agentlab.agents.pcagent.intention import IntentionAgent
from agentlab.agents.pcagent.manager import CommunicationHub, ManagerAgent, Subtask
from agentlab.agents.pcagent.perception import Perception, perceive
from agentlab.agents.pcagent.progress import ProgressAgent
from agentlab.agents.pcagent.reflection import ReflectionAgent
from agentlab.dialogue.ask import Attempt
from agentlab.dialogue.templates import template_hashes
from agentlab.envs.base import Env, Observation
from agentlab.errors import AgentlabError
from agentlab.pool.document import AgentDocument

log = logging.getLogger(__name__)

Role = dict[str, Any]


class PCAgent:
    """PC-Agent behind the :class:`~agentlab.agents.base.Agent` protocol; ``runner_options`` are
    :class:`~agentlab.agents.pcagent.config.PCAgentConfig` fields."""

    env_kind: ClassVar[str] = "desktop"

    def __init__(self, document: AgentDocument, options: Mapping[str, Any] | None = None) -> None:
        self.config = runner_config(PCAgentConfig, document, options)
        self.document = document

    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        episode = _Episode(ctx, self.config, env, task_instruction)
        try:
            return episode.run()
        except AgentlabError as exc:  # the trajectory so far stays on disk, with the reason
            ctx.recorder.record(None, None, error=str(exc), done=True, info={"roles": episode.take_pending()})
            raise


class _Episode:
    """The state of one run: the roles, the plan, the hub, and the roles not yet recorded."""

    def __init__(self, ctx: RunContext, config: PCAgentConfig, env: Env, instruction: str) -> None:
        self.config, self.env, self.instruction, self.rec, self.max_steps = config, env, instruction, ctx.recorder, ctx.max_steps
        self.asker = RoleAsker(ctx.llm, config, system="pcagent/system", correction="pcagent/correction")
        self.manager = ManagerAgent(self.asker)
        self.decision = DecisionAgent(self.asker, IntentionAgent(self.asker) if config.intention and config.ocr else None)
        self.reflection = ReflectionAgent(self.asker)
        self.progress_agent = ProgressAgent(self.asker)
        self.hub = CommunicationHub()
        self.pending: list[Role] = []  #: role messages that go into the next step record
        self.steps = 0

    def take_pending(self) -> list[Role]:
        out, self.pending = self.pending, []
        return out

    def perceive(self, obs: Observation) -> Perception:
        cfg = self.config
        return perceive(obs, max_elements=cfg.max_elements, ocr=cfg.ocr, max_ocr_lines=cfg.max_ocr_lines)

    def make_plan(self, perception: Perception) -> list[Subtask]:
        if not self.config.manager:
            return [Subtask(self.instruction)]
        plan, reply, problem = self.manager.plan(self.instruction, perception.listing())
        if plan is None:
            plan = [Subtask(self.instruction)]
            text = f"no usable plan ({problem}); carrying the instruction out as one subtask"
        else:
            text = reply.strip()
        self.pending.append({"role": "manager", "text": text, "plan": [s.line() for s in plan], "replanned": False})
        return plan

    def run(self) -> AgentResult:
        cfg = self.config
        perception = self.perceive(self.env.reset(self.instruction))
        plan = self.make_plan(perception)
        done = 0
        status: Status = "max_steps"
        error: str | None = None
        progress = ""
        for index, subtask in enumerate(plan, 1):
            text = self._instantiate(subtask, index)
            progress = "nothing done yet"
            feedback = "none yet (no action taken in this subtask)"
            finished = False
            while self.steps < self.max_steps:
                asked, carried = self.decision.decide(
                    self.env, instruction=self.instruction, subtask=text, outputs=subtask.outputs,
                    perception=perception, progress=progress, reflection=feedback,
                    on_attempt=lambda a: self._record_rejected(a, perception, index),
                )
                d = asked.value
                if d is None:
                    status = "failed"
                    error = f"{len(asked.attempts)} unusable replies in a row; last: {asked.attempts[-1].problem}"
                    break
                if d.finished:
                    self._finish_subtask(d, perception, index, progress, last=index == len(plan))
                    done += 1
                    finished = True
                    break
                perception, progress, feedback = self._acted(d, carried, perception, text, index, progress)
            if not finished:
                break
        if done == len(plan):
            status = "done"
        else:
            self.rec.record(perception.observation, None, done=True, error=error, reflection=progress,
                            info={"roles": self.take_pending(), "subtask": done + 1})
        self.rec.finish(status, error=error, steps=self.steps,
                        subtasks=len(plan), subtasks_done=done, hub=dict(self.hub.values),
                        config=cfg.model_dump(mode="json"), prompts=template_hashes(PROMPT_NAMES))
        return AgentResult(status=status, steps=self.steps, error=error,
                           subtasks=len(plan), subtasks_done=done)

    def _instantiate(self, subtask: Subtask, index: int) -> str:
        """The subtask's text with the hub's values filled in (a hub message when it had placeholders)."""
        if not self.config.manager:
            return subtask.text
        text, used, missing = self.hub.fill(subtask)
        if used or missing:
            said = ", ".join(f"{{{k}}} = {v!r}" for k, v in used.items()) or "nothing"
            gap = f"; no value yet for {', '.join('{' + m + '}' for m in missing)}" if missing else ""
            self.pending.append({"role": "hub", "text": f"subtask {index}: filled {said}{gap}",
                                 "values": dict(used), "subtask": index})
        return text

    def _acted(self, d: Decision, carried: Carried, before: Perception, subtask: str, index: int,
               progress: str) -> tuple[Perception, str, str]:
        """After an action: reflect, update the progress, record the step; the new screen, progress and verdict."""
        assert carried.result is not None and carried.action is not None
        self.steps += 1
        after = self.perceive(carried.result.observation)
        roles: list[Role] = [*self.take_pending(), _decision_role(d, carried.action.to_call(), carried.target)]
        if carried.target is not None and "intention" in carried.target:  # active perception asked where the text is
            said = carried.target["intention"]
            roles.append({"role": "intention", "text": said.get("reply", ""), "located": said.get("located", False),
                          **{k: said[k] for k in ("start", "end") if k in said}})
        if self.config.reflection:
            r = self.reflection.reflect(subtask=subtask, action=carried.action.describe(), thought=d.thought,
                                        before=before, after=after)
            roles.append({"role": "reflection", "text": r.text, "verdict": r.verdict, "asked": r.asked})
            feedback = r.feedback()
        else:
            feedback = "(no reflection agent in this run)"
        progress, _ = self.progress_agent.update(subtask=subtask, previous=progress,
                                                 action=carried.action.describe(), reflection=feedback)
        roles.append({"role": "progress", "text": progress})
        info = {**carried.result.info, "roles": roles, "subtask": index}
        if carried.target is not None:
            info["ocr_target"] = carried.target
        self.rec.record(before.observation, carried.action, action_text=d.action_text, thought=d.thought,
                        reflection=progress, info=info)
        return after, progress, feedback

    def _finish_subtask(self, d: Decision, perception: Perception, index: int, progress: str, *, last: bool) -> None:
        """Record the decision agent's ``subtask_done`` and hand its outputs to the hub."""
        call = "subtask_done(" + ", ".join(f"{k}={v!r}" for k, v in d.outputs.items()) + ")"
        roles = [*self.take_pending(), _decision_role(d, call, None)]
        if d.outputs and self.config.manager:
            self.hub.update(d.outputs)
            said = ", ".join(f"{k} = {v!r}" for k, v in d.outputs.items())
            roles.append({"role": "hub", "text": f"subtask {index} produced {said}", "values": dict(d.outputs),
                          "subtask": index})
        self.rec.record(perception.observation, None, action_text=d.action_text, thought=d.thought,
                        reflection=progress, done=last,
                        info={"roles": roles, "subtask": index, "subtask_done": True, "outputs": dict(d.outputs)})

    def _record_rejected(self, attempt: Attempt[Decision], perception: Perception, index: int) -> None:
        """An unusable decision reply is a record of its own (no images: the screen is the next record's)."""
        if attempt.ok:
            return
        roles = [*self.take_pending(), {"role": "decision", "text": f"unusable reply: {attempt.problem}"}]
        action = attempt.value.action if attempt.value is not None else None
        self.rec.record(perception.observation, action, action_text=attempt.reply,
                        error=f"step {self.steps + 1}, attempt {attempt.index + 1}: {attempt.problem}",
                        save_images=False, info={"roles": roles, "subtask": index, "attempt": attempt.index + 1})


def _decision_role(d: Decision, action: str, target: dict[str, Any] | None) -> Role:
    role: Role = {"role": "decision", "text": d.thought or "(no thought given)", "action": action}
    if target is not None:
        role["target"] = target
    return role
