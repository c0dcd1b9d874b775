"""COLA's planner: split a task into a few coarse subtasks before anyone acts.

The planner sees the task, the files in its folder, what long-term memory recalls of similar
tasks, and the team's recent messages (``data/prompts/cola/planner.txt``), and answers with
numbered lines. It does not choose agents -- the scheduler does, from the pool's documents --
so a small model only has to split text. A reply without numbered lines, or with more than
``max_subtasks``, is sent back once more with the problem quoted
(:func:`~agentlab.dialogue.ask.ask_until_parsed`, ``cola/planner_correction``); when every
attempt fails the whole task becomes the one subtask (``fallback``), so the team still acts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentlab.dialogue.ask import Attempt, RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template
from agentlab.errors import ActionParseError
from agentlab.llm.base import ChatMessage, LLMBackend

PROMPTS = ("cola/planner", "cola/planner_correction")
_LINE_RE = re.compile(r"^\s*(?:step\s*)?(\d{1,2})\s*[.):]\s*(.+?)\s*$", re.I)


@dataclass
class Plan:
    """The subtasks in order; ``fallback`` when the planner's replies were unusable."""

    subtasks: list[str]
    fallback: bool = False
    attempts: list[Attempt[list[str]]] = field(default_factory=list)
    reply: str = ""


def parse_plan(text: str, max_subtasks: int) -> list[str]:
    """Numbered lines (``1. ...``, ``2) ...``, ``Step 3: ...``) in order; other lines are ignored."""
    subtasks = []
    for line in text.splitlines():
        m = _LINE_RE.match(line)
        if m and m.group(2).strip(" #*-"):
            subtasks.append(m.group(2).strip(" #*"))
    if not subtasks:
        raise ActionParseError("no numbered subtask lines ('1. ...') in the reply")
    if len(subtasks) > max_subtasks:
        raise ActionParseError(f"{len(subtasks)} subtasks; at most {max_subtasks}")
    if len({s.lower() for s in subtasks}) < len(subtasks):
        raise ActionParseError("the same subtask is written twice")
    return subtasks


class Planner:
    """Writes the coarse plan of one task with ``llm``."""

    def __init__(self, llm: LLMBackend, *, max_subtasks: int = 4, max_attempts: int = 2, sampling: RetrySampling) -> None:
        self.llm = llm
        self.max_subtasks = max_subtasks
        self.max_attempts = max_attempts
        self.sampling = sampling
        self.template = load_template("cola/planner")
        self.correction = load_template("cola/planner_correction")

    def plan(self, task: str, *, observation: str, memory: str, dialogue: str) -> Plan:
        prompt = [ChatMessage("user", self.template.render(
            task=task, observation=observation, memory=memory, dialogue=dialogue, max_subtasks=self.max_subtasks).strip())]
        asked = ask_until_parsed(
            self.llm, prompt, lambda text: parse_plan(text, self.max_subtasks), max_attempts=self.max_attempts,
            params=self.sampling, correction=self.correction, correction_fields={"max_subtasks": self.max_subtasks},
            label="cola planner")
        if asked.value is None:
            return Plan([task], fallback=True, attempts=asked.attempts, reply=asked.reply)
        return Plan(asked.value, attempts=asked.attempts, reply=asked.reply)
