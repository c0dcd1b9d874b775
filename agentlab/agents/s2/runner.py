"""Runner ``s2``: Agent S2's episode loop behind the :class:`~agentlab.agents.base.Agent` protocol.

The manager plans subgoals from the task and the screen; the worker carries the first one out
turn by turn (each action grounded by an expert of the mixture) until it says ``done()`` or
``fail(...)``; then the manager plans again: after every completed subgoal with proactive
planning (``replan``, the default), otherwise only after a failure, the rest of the first plan
being followed as it was. The episode ends when the manager has nothing left (done), when
``max_steps`` actions were taken, when ``max_subgoals`` subgoals were attempted or when the
manager gives no usable plan (failed).

Every step record carries ``info["roles"]``: the manager's plan on the step it was made or
changed (``plan``, ``replanned``), the worker's thought and action, and the grounding expert
with its target and score; ``thought`` is the worker's, ``reflection`` the progress so far.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from agentlab.agents.base import AgentResult, Status, runner_config
from agentlab.agents.context import RunContext
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import MODEL_ROLES, PROMPT_NAMES, S2Config
from agentlab.agents.s2.grounding import Mixture
from agentlab.agents.s2.manager import Manager, Plan
from agentlab.agents.s2.screen import Screen
from agentlab.agents.s2.worker import Turn, Worker, WorkerReply
from agentlab.dialogue.ask import AskResult, Attempt
from agentlab.dialogue.templates import template_hashes
from agentlab.envs.base import Env
from agentlab.errors import AgentlabError
from agentlab.pool.document import AgentDocument

log = logging.getLogger(__name__)

Role = dict[str, Any]


def _plan_role(plan: Plan, replanned: bool) -> Role:
    text = "\n".join(f"{i}. {s}" for i, s in enumerate(plan.subgoals, 1)) or "DONE: nothing is left to do"
    return {"role": "manager", "text": text, "plan": list(plan.subgoals), "replanned": replanned}


def _worker_role(reply: WorkerReply, subgoal: str) -> Role:
    text = (f"{reply.thought}\n" if reply.thought else "") + f"Action: {reply.call_text}"
    return {"role": "worker", "text": text, "thought": reply.thought, "action": reply.call_text,
            "subgoal": subgoal}


class AgentS2:
    """Agent S2 on a desktop; ``runner_options`` are :class:`~agentlab.agents.s2.config.S2Config` fields."""

    env_kind: ClassVar[str] = "desktop"

    def __init__(self, document: AgentDocument, options: Mapping[str, Any] | None = None) -> None:
        self.config = runner_config(S2Config, document, options)
        self.document = document

    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        return _Episode(self, env, task_instruction, ctx).run()


class _Episode:
    """One run's state: the plan, the subgoals done, the roles waiting for the next record."""

    def __init__(self, agent: AgentS2, env: Env, task: str, ctx: RunContext) -> None:
        self.cfg = agent.config
        self.env, self.task, self.rec, self.max_steps = env, task, ctx.recorder, ctx.max_steps
        self.asker = RoleAsker(ctx.llm, agent.config, system="s2/system", correction="s2/feedback",
                               model_roles=MODEL_ROLES, image_side=ctx.image_side)
        self.manager = Manager(self.asker, task)
        self.worker = Worker(self.asker, Mixture(agent.config, env, self.asker), task)
        self.steps = 0
        self.done: list[str] = []
        self.attempted = 0
        self.left: tuple[str, ...] = ()  #: planned subgoals after the current one
        self.pending: list[Role] = []  #: role messages for the next record written
        self.screen: Screen | None = None

    # ------------------------------------------------------------------ helpers
    def summary(self, subgoal: str = "") -> str:
        done = "; ".join(self.done) or "nothing yet"
        return f"done: {done}" + (f" | now: {subgoal}" if subgoal else "")

    def take_roles(self, *more: Role) -> list[Role]:
        roles, self.pending = [*self.pending, *more], []
        return roles

    def plan(self, failed: str = "") -> Plan | None:
        assert self.screen is not None
        replanned = self.manager.calls > 0
        asked: AskResult[Plan] = self.manager.plan(self.screen, done=self.done, failed=failed, previous=self.left)
        for a in asked.attempts:
            if not a.ok:
                self.rec.record(self.screen.obs, None, action_text=a.reply, save_images=False,
                                error=f"manager attempt {a.index + 1}: {a.problem}",
                                info={"attempt": a.index + 1, "roles": [{"role": "manager", "text": a.reply,
                                                                         "problem": a.problem}]})
        if asked.value is not None:
            self.pending.append(_plan_role(asked.value, replanned))
        return asked.value

    # ------------------------------------------------------------------ the loop
    def run(self) -> AgentResult:
        self.rec.meta.extra.update(s2_config=self.cfg.model_dump(mode="json"), prompts=template_hashes(PROMPT_NAMES))
        status: Status = "max_steps"
        error: str | None = None
        try:
            self.screen = Screen(self.env.reset(self.task))
            plan = self.plan()
            while True:
                if plan is None:
                    status, error = "failed", "the manager gave no usable plan"
                    break
                if not plan.subgoals:
                    status = "done"
                    break
                if self.attempted >= self.cfg.max_subgoals:
                    self.left = plan.subgoals  # planned, never attempted
                    status, error = "failed", f"{self.attempted} subgoals attempted (max_subgoals) and the task is not done"
                    break
                subgoal, self.left = plan.subgoals[0], plan.subgoals[1:]
                self.attempted += 1
                outcome, reason = self.subgoal(subgoal)
                if outcome == "steps":
                    break
                if outcome == "done":
                    self.done.append(subgoal)
                    if self.cfg.replan:
                        plan = self.plan()
                    else:
                        plan = Plan(self.left, "(the first plan, followed without replanning)")
                else:
                    plan = self.plan(failed=f"{subgoal}: {reason}")
            self.rec.record(self.screen.obs, None, done=True, error=error, reflection=self.summary(),
                            info={"roles": self.take_roles()})
        except AgentlabError as exc:
            self.rec.record(None, None, error=str(exc), done=True)
            self.finish("failed", str(exc))
            raise
        return self.finish(status, error)

    def subgoal(self, subgoal: str) -> tuple[str, str]:
        """Work on one subgoal: ("done", ""), ("failed", why) or ("steps", "") when actions ran out."""
        assert self.screen is not None
        history: list[str] = []
        while self.steps < self.max_steps:
            screen = self.screen

            def record_failure(a: Attempt[WorkerReply]) -> None:
                if not a.ok:
                    roles = self.take_roles({"role": "worker", "text": a.reply, "problem": a.problem,
                                             "subgoal": subgoal})
                    self.rec.record(screen.obs, None, action_text=a.reply, save_images=False,
                                    error=f"step {self.steps + 1}, attempt {a.index + 1}: {a.problem}",
                                    info={"attempt": a.index + 1, "roles": roles})

            turn: Turn = self.worker.turn(screen, subgoal, done=self.done, history=history, on_attempt=record_failure)
            reply = turn.reply
            if reply is None:
                return "failed", f"{len(turn.asked.attempts)} unusable replies; last: {turn.asked.attempts[-1].problem}"
            roles = self.take_roles(_worker_role(reply, subgoal))
            if reply.terminal:
                why = reply.fail_reason
                self.rec.record(screen.obs, None, action_text=reply.action_text, thought=reply.thought,
                                reflection=self.summary(subgoal), info={"roles": roles, "subgoal": subgoal,
                                                                        "subgoal_status": "failed" if why else "done"})
                return ("failed", why) if why else ("done", "")
            grounded, outcome = turn.grounded, turn.outcome
            assert grounded is not None and outcome is not None
            if grounded.expert is not None:
                roles.append(grounded.role())
            self.steps += 1
            history.append(reply.call_text)
            action = grounded.actions[-1] if grounded.actions else None
            self.rec.record(screen.obs, action, action_text=reply.action_text, thought=reply.thought,
                            reflection=self.summary(subgoal),
                            info={"roles": roles, "subgoal": subgoal, "expert": grounded.expert, **outcome.info})
            self.screen = Screen(outcome.observation)
        return "steps", ""

    def finish(self, status: Status, error: str | None) -> AgentResult:
        subtasks = self.attempted + len(self.left) if status != "done" else self.attempted
        self.rec.finish(status, error=error, steps=self.steps, subtasks=subtasks, subtasks_done=len(self.done))
        return AgentResult(status=status, steps=self.steps, error=error, subtasks=subtasks, subtasks_done=len(self.done))
