"""Ask a model until its reply can be used: the one retry loop every agent and the manager share.

Modelled on Agent-S's ``call_llm_formatted``: a reply is parsed, then checked by validators
that each say what is wrong (a message, a list of problems, or ``None``); while problems
remain and the budget allows, the model is asked again with a correction rendered from a
template that quotes those problems. Two ways of asking again, chosen by what ``prompt`` is:

* a fixed conversation (a list of messages): the conversation is continued with the
  model's answer and the correction as the next user turn (the hash manager);
* a prompt builder (``feedback -> messages``): the prompt is filled again with the
  correction as its feedback text ('' on the first attempt), so each attempt is one fresh
  exchange (AppAgent).

Sampling parameters are chosen per attempt (AppAgent: greedy first, sampled retries). Every
attempt -- the messages sent, the raw reply, its problems and whatever the parser made of
it -- is kept in the returned :class:`AskResult`, and optionally handed to ``on_attempt`` as
it happens, so callers can record attempts in trajectories or quote them in errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from agentlab.dialogue.templates import PromptTemplate
from agentlab.errors import ActionParseError, AgentlabError, InvalidActionError
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams

log = logging.getLogger(__name__)

T = TypeVar("T")

#: A validator: what is wrong with a parsed reply (a message, several, or None when it is fine).
Check = Callable[[T], "str | Sequence[str] | None"]
#: Builds the messages of one attempt from the feedback text ('' on the first attempt).
PromptBuilder = Callable[[str], list[ChatMessage]]


@dataclass
class Attempt(Generic[T]):
    """One question and answer: what was sent, what came back, and what was wrong with it."""

    index: int  #: 0 for the first attempt
    messages: list[ChatMessage]
    params: SamplingParams
    reply: str
    problems: list[str] = field(default_factory=list)
    #: the parser's result; set even when a later check rejected it (None when parsing failed)
    value: T | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def problem(self) -> str:
        """The problems as one line."""
        return "; ".join(self.problems)


@dataclass
class AskResult(Generic[T]):
    """The usable value (``None`` when the budget ran out) and every attempt, in order."""

    value: T | None
    attempts: list[Attempt[T]]

    @property
    def ok(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].ok

    @property
    def reply(self) -> str:
        """The last raw reply."""
        return self.attempts[-1].reply if self.attempts else ""

    @property
    def problems(self) -> list[list[str]]:
        """The problems of every attempt (an empty list for the one that succeeded)."""
        return [a.problems for a in self.attempts]


@dataclass
class RetrySampling:
    """The sampling schedule every agent's questions share, and the running count of model calls.

    The first attempt of a question uses ``temperature`` (0 = greedy); a retry samples at
    ``retry_temperature`` with top-p 0.95, so a retry can differ from the reply it replaces;
    each call gets ``seed + calls`` so a run is reproducible. Pass it as ``params`` to
    :func:`ask_until_parsed`; :attr:`calls` is the episode's ``llm_calls``.
    """

    max_new_tokens: int
    temperature: float = 0.0
    retry_temperature: float = 0.7
    seed: int = 0
    calls: int = 0

    def __call__(self, attempt: int) -> SamplingParams:
        params = SamplingParams(
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature if attempt == 0 else self.retry_temperature,
            top_p=1.0 if attempt == 0 else 0.95,
            seed=self.seed + self.calls,
        )
        self.calls += 1
        return params


def _as_problems(found: str | Sequence[str] | None) -> list[str]:
    if found is None:
        return []
    if isinstance(found, str):
        return [found] if found else []
    return [p for p in found if p]


def ask_until_parsed(
    llm: LLMBackend,
    prompt: list[ChatMessage] | PromptBuilder,
    parse: Callable[[str], T],
    *,
    max_attempts: int,
    params: SamplingParams | Callable[[int], SamplingParams],
    checks: Sequence[Check[T]] = (),
    correction: PromptTemplate | None = None,
    correction_fields: Mapping[str, object] | None = None,
    errors: tuple[type[AgentlabError], ...] = (ActionParseError, InvalidActionError),
    on_attempt: Callable[[Attempt[T]], None] | None = None,
    label: str = "reply",
) -> AskResult[T]:
    """Ask, parse, check; on problems ask again, at most ``max_attempts`` times in all.

    ``parse`` turns the raw reply into a value or raises one of ``errors`` (its ``message``
    becomes the problem; any other error propagates). ``checks`` run in order on the parsed
    value -- each returns its problems or raises one of ``errors`` -- and stop at the first
    that reports a problem, so a later check (which may act, e.g. carry out the action) only
    sees a reply the earlier ones accepted. ``correction`` is rendered with ``problems`` (the
    problems joined by '; ') plus ``correction_fields``; without it a retry asks the same
    question again. ``params`` may depend on the attempt number.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if isinstance(prompt, list) and correction is None and max_attempts > 1:
        raise ValueError("continuing a conversation needs a correction template")
    attempts: list[Attempt[T]] = []
    messages = list(prompt) if isinstance(prompt, list) else prompt("")
    for index in range(max_attempts):
        if index:
            feedback = _correction(correction, attempts[-1], correction_fields)
            if isinstance(prompt, list):
                messages = [*messages, ChatMessage("assistant", attempts[-1].reply), ChatMessage("user", feedback)]
            else:
                messages = prompt(feedback)
        sampling = params(index) if callable(params) else params
        out = llm.chat(messages, sampling)
        reply = out[0] if out else ""
        log.debug("%s attempt %d reply: %r", label, index, reply)
        attempt: Attempt[T] = Attempt(index=index, messages=messages, params=sampling, reply=reply)
        try:
            attempt.value = parse(reply)
            for check in checks:
                attempt.problems = _as_problems(check(attempt.value))
                if attempt.problems:
                    break
        except errors as exc:
            attempt.problems = [exc.message]
        attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
        if attempt.ok:
            return AskResult(attempt.value, attempts)
        if index + 1 < max_attempts:
            log.info("%s rejected (%s); asking again", label, attempt.problem)
    return AskResult(None, attempts)


def _correction(template: PromptTemplate | None, last: Attempt[T], fields: Mapping[str, object] | None) -> str:
    if template is None:
        return ""
    return template.render(problems=last.problem, **(fields or {})).strip()
