"""A COLA decision agent refining its subtask before it acts (``--team-option refine=true``).

In the COLA paper a decision agent does not take the scheduler's subtask as it comes: it first
restates it for itself from the task, what the team said so far and any guidance, then acts. The
team's default here adds the guidance to the subtask without a model call (a 135M model's
restatement loses the file names and values the specialists' tools read off the request). With
``refine`` the decision agent's own model (the ``agent`` role, the same one that then acts) is
asked (``cola/refine``) for one line, ``Subtask: ...``; a reply without one, or one that drops a
file the subtask names, is asked again once and then the subtask goes as it was, so refining can
only add, never lose, what the step needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentlab.dialogue.ask import RetrySampling, ask_until_parsed
from agentlab.dialogue.templates import load_template
from agentlab.errors import ActionParseError
from agentlab.llm.base import ChatMessage, LLMBackend

PROMPTS = ("cola/refine", "cola/reask")
_LINE = re.compile(r"^\s*[*_#>-]*\s*subtask\s*[*_]*\s*:\s*[*_]*\s*(.+?)\s*$", re.I | re.M)
_FILE = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,5}\b")


@dataclass(frozen=True)
class Refined:
    """The text the decision agent acts on, and whether a model wrote it."""

    text: str
    by_model: bool
    reply: str = ""


def parse_refined(reply: str, subtask: str) -> str:
    """The ``Subtask:`` line of ``reply``; it must keep every file name ``subtask`` names."""
    m = _LINE.search(reply or "")
    if m is None or not m.group(1).strip():
        raise ActionParseError("no 'Subtask: ...' line in the reply")
    text = m.group(1).strip()
    lost = [f for f in dict.fromkeys(_FILE.findall(subtask)) if f.lower() not in text.lower()]
    if lost:
        raise ActionParseError(f"the refined subtask drops {', '.join(lost)}; keep every file the subtask names")
    return text


class Refiner:
    """Asks a decision agent's model to restate its subtask (module docstring)."""

    def __init__(self, llm: LLMBackend, *, max_attempts: int = 2, sampling: RetrySampling) -> None:
        self.llm, self.max_attempts, self.sampling = llm, max_attempts, sampling
        self.template = load_template("cola/refine")

    def refine(self, *, task: str, subtask: str, guidance: str, dialogue: str) -> Refined:
        def prompt(feedback: str) -> list[ChatMessage]:
            return [ChatMessage("user", self.template.render(
                task=task, subtask=subtask, guidance=guidance or "(none)", dialogue=dialogue,
                feedback=f"\n{feedback}\n" if feedback else "").strip())]

        asked = ask_until_parsed(self.llm, prompt, lambda r: parse_refined(r, subtask), max_attempts=self.max_attempts,
                                 params=self.sampling, correction=load_template("cola/reask"), label="cola refine")
        if asked.value is None:
            return Refined(subtask + (f"\n{guidance}" if guidance else ""), False, asked.reply)
        return Refined(asked.value + (f"\n{guidance}" if guidance else ""), True, asked.reply)


__all__ = ["PROMPTS", "Refined", "Refiner", "parse_refined"]
