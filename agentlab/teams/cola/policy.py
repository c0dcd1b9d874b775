"""What a COLA team does after a step: accept it, retry, reassign, backtrack, stop -- or ask.

One pure function of the review, the step's outcome, the step's spent budget and the interaction
mode (:func:`decide`; the table in docs/agents/cola.md), and one that turns a person's answer
into a decision (:func:`from_answer`). The team (:mod:`agentlab.teams.cola.team`) carries the
decision out; asking goes through a callback so the policy never talks to a person itself.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Literal

from agentlab.envs.snapshot import Snapshot
from agentlab.dialogue.person import Answer, QuestionKind
from agentlab.teams.cola.options import ColaOptions
from agentlab.teams.cola.reviewer import Review
from agentlab.teams.cola.scheduler import Assignment
from agentlab.teams.hub import StepOutcome

#: asks the person about the current step (None: nobody to ask, or the question budget is spent)
AskStep = Callable[[QuestionKind, str], "Answer | None"]


@dataclass
class Slot:
    """One subtask's state in the run: its ranking, which choice acts, its budget, its guidance."""

    assignment: Assignment
    choice: int = 0
    agent_override: str | None = None
    retries: int = 0
    reassignments: int = 0
    guidance: list[str] = field(default_factory=list)
    snapshot: Snapshot | None = None  #: the files before this step (taken when the step is first reached)

    @property
    def agent(self) -> str | None:
        return self.agent_override or self.assignment.agent(self.choice)


@dataclass(frozen=True)
class Decision:
    """What the team does after a step."""

    action: Literal["accept", "retry", "reassign", "backtrack", "stop", "give_up"]
    why: str
    #: accept: was the step judged done (by the reviewer or a person)? None: accepted unjudged (an unsure reviewer)
    success: bool | None = True
    guidance: str = ""
    step: int | None = None  #: backtrack target (0-based)
    agent: str | None = None  #: reassign target chosen by a person


def decide(i: int, slot: Slot, outcome: StepOutcome, review: Review, *, options: ColaOptions, ask: AskStep,
           able: Collection[str], backtracks: int) -> Decision:
    """After step ``i`` (0-based) was reviewed: what next (the table in docs/agents/cola.md)."""
    mode = options.interaction

    def answered(answer: Answer) -> Decision:
        return from_answer(answer, current=i, options=options, able=able, backtracks=backtracks)

    if mode == "active":
        answer = ask("confirm", f"Step {i + 1} ({outcome.status}): {outcome.summary}. "
                     f"The reviewer says {review.verdict}: {review.reason}. Confirm this step?")
        if answer is not None:
            return answered(answer)
    if review.verdict == "yes":
        return Decision("accept", review.reason)
    if review.verdict == "unsure":
        if mode == "passive":
            answer = ask("unsure", f"The reviewer is unsure whether step {i + 1} did its subtask ({review.reason}). "
                         "Accept it?")
            if answer is not None:
                return answered(answer)
        return Decision("accept", f"the reviewer was unsure ({review.reason}); the evaluator will judge", success=None)
    if mode == "passive" and outcome.status in ("error", "wrong_env"):
        answer = ask("error", f"Step {i + 1} could not run: {outcome.error or outcome.status}. What now?")
        if answer is not None:
            return answered(answer)
    feedback = f"A reviewer rejected an earlier attempt: {review.reason}"
    if slot.retries < options.max_retries and outcome.status not in ("wrong_env", "error"):
        return Decision("retry", review.reason, guidance=feedback)
    if slot.reassignments < options.max_reassignments and slot.assignment.agent(slot.choice + 1) is not None:
        return Decision("reassign", review.reason, guidance=feedback)
    if mode == "passive":
        answer = ask("failed", f"Step {i + 1} failed again ({review.reason}) and the team's retries are spent. "
                     "What now?")
        if answer is not None:
            return answered(answer)
    return Decision("give_up", f"{review.reason} (retries and reassignments spent)")


def from_answer(answer: Answer, *, current: int, options: ColaOptions, able: Collection[str], backtracks: int) -> Decision:
    """A person's answer about step ``current`` (0-based) as a decision; an answer the team cannot
    follow (a step not reached yet, the backtrack budget spent, an agent that cannot act here)
    gives the step up and says why."""
    said = f"a person answered {answer.text or answer.choice!r}"
    if answer.choice == "yes":
        return Decision("accept", said)
    if answer.choice in ("no", "stop"):
        return Decision("stop", said)
    if answer.choice == "backtrack":
        assert answer.step is not None
        if answer.step > current + 1:
            return Decision("give_up", f"{said}, but step {answer.step} has not run yet (this is step {current + 1})")
        if backtracks >= options.max_backtracks:
            return Decision("give_up", f"{said}, but the backtrack budget ({options.max_backtracks}) is spent")
        return Decision("backtrack", said, guidance=answer.guidance, step=answer.step - 1)
    if answer.choice == "reassign":
        if answer.agent not in able:
            return Decision("give_up", f"{said}, but {answer.agent} cannot act on this task here")
        return Decision("reassign", said, guidance=answer.guidance, agent=answer.agent)
    return Decision("retry", said, guidance=answer.guidance)
