"""The chat-step loop of the code and tool agents: one loop, the step is the variation point
(smolagents' ``MultiStepAgent`` shape).

Each step asks for a usable reply through the dialogue layer's retry loop
(:func:`~agentlab.dialogue.ask.ask_until_parsed`; every rejected attempt is a record of its own,
with the messages it was sent), then hands the accepted value to the agent's :meth:`ChatSteps.act`,
which carries it out, records it, and either ends the episode or says what the model is told next.
The episode ends on the agent's verdict, when every attempt at a usable reply failed, or after
``ctx.max_steps`` acted-on replies; one that did not end on a recorded final step gets one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agentlab.agents.base import AgentResult, Status
from agentlab.agents.context import RunContext
from agentlab.dialogue.ask import Attempt, ask_until_parsed
from agentlab.dialogue.templates import PromptTemplate
from agentlab.envs.base import Env, Observation
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams

T = TypeVar("T")


@dataclass
class Episode:
    """One episode's conversation and where it stands: what the loop and an agent's step share."""

    env: Env
    task: str
    ctx: RunContext
    llm: LLMBackend
    messages: list[ChatMessage]
    #: what the records show as the observation (the tool agent's records carry none)
    obs: Observation | None = None
    steps: int = 0
    sent: int = 0  #: messages already written to the trajectory
    status: Status = "max_steps"
    error: str | None = None  #: the last problem met (the result's error)
    t_step: float = 0.0  #: when this step's first ask began
    t_mark: float = 0.0  #: when the model time not yet charged to a record began
    #: the last step's action when it failed (see :meth:`failed_again`)
    last_failure: str | None = None

    def failed_again(self, action: str, ok: bool) -> bool:
        """Whether this step's action failed and is, word for word, the previous step's failing
        one. A small model that repeats a failing program or call keeps repeating it to the step
        cap (a minute a step for the code agent on two cores); the agents stop the episode there
        and the row says why (issue #38: no degenerate replies burning the clock)."""
        again = not ok and bool(action) and action == self.last_failure
        self.last_failure = None if ok else action
        return again

    def accept(self, attempt: Attempt[Any], reply: str) -> list[dict[str, Any]]:
        """Take ``reply`` (the attempt's, or one the step chose in its place) into the conversation
        as one more step; the messages this adds to the trajectory."""
        new = [*(m.as_dict() for m in attempt.messages[self.sent:]), {"role": "assistant", "content": reply}]
        self.messages = [*attempt.messages, ChatMessage("assistant", reply)]
        self.sent = len(self.messages)
        self.steps += 1
        return new


E = TypeVar("E", bound=Episode)


class ChatSteps(Generic[E, T]):
    """The loop; a subclass says how a step is asked (:meth:`step_params`) and carried out (:meth:`act`)."""

    def step_params(self, ep: E) -> Callable[[int], SamplingParams]:
        """The sampling of this step's attempt ``i`` (called once per step, before asking)."""
        raise NotImplementedError

    def act(self, ep: E, last: Attempt[T], value: T) -> str | None:
        """Carry out the accepted reply ``value`` (``ep.accept`` it first), record it, set the
        episode's status and error; the next user message, or None when the episode ends."""
        raise NotImplementedError

    def rejected_info(self, ep: E) -> dict[str, Any]:
        """What a rejected attempt's record carries beyond its attempt number and messages."""
        return {}

    def chat_loop(self, ep: E, parse: Callable[[str], T], *, max_attempts: int, correction: PromptTemplate,
                  label: str, correction_fields: Mapping[str, object] | None = None) -> AgentResult:
        """Step until the agent ends the episode, a reply stays unusable, or ``ctx.max_steps``."""
        rec = ep.ctx.recorder

        def on_attempt(a: Attempt[T]) -> None:
            if not a.ok:  # a rejected reply is a record of its own
                rec.record(ep.obs, None, action_text=a.reply, error=f"step {ep.steps + 1}, attempt {a.index + 1}: {a.problem}",
                           info={"attempt": a.index + 1, "messages": [m.as_dict() for m in a.messages[ep.sent:]],
                                 **self.rejected_info(ep)})
                ep.sent = len(a.messages)
                ep.t_mark = time.perf_counter()

        while ep.steps < ep.ctx.max_steps:
            params = self.step_params(ep)
            ep.t_step = ep.t_mark = time.perf_counter()
            asked = ask_until_parsed(ep.llm, ep.messages, parse, max_attempts=max_attempts, params=params,
                                     correction=correction, correction_fields=correction_fields,
                                     on_attempt=on_attempt, label=label)
            last = asked.attempts[-1]
            if asked.value is None:
                ep.status, ep.error = "failed", f"{len(asked.attempts)} unusable replies in a row; last: {last.problem}"
                break
            follow = self.act(ep, last, asked.value)
            if follow is None:
                break
            ep.messages.append(ChatMessage("user", follow))
        if ep.status != "done" and not (rec.steps and rec.steps[-1].done):
            rec.record(ep.obs, None, done=True, error=ep.error)
        return AgentResult(status=ep.status, steps=ep.steps, error=ep.error)
