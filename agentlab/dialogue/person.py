"""Asking a person: one question type, one answer type, one callback, whatever the team or front end.

A team that involves a person (COLA's passive and active modes, in its own settings) decides
*when* to ask; the run decides *how*: the kernel hands the team one callback of type :data:`Ask`
(``Question -> Answer``) -- :func:`terminal_ask` in the CLI, :class:`ScriptedAnswers` in tests
and unattended runs (``agentlab exec --answers FILE``; papermill runs), and the notebook prompt
in :mod:`agentlab.viz.ask`. An answer is written the same way everywhere (:func:`parse_answer`)::

    yes | no | stop | retry[: guidance] | reassign AGENT[: guidance] | backtrack K[: guidance]

``K`` is a step number as the person sees it (1 = the first step); ``guidance`` is text that
goes into the next instruction of the agent that acts.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from agentlab.errors import ConfigError

log = logging.getLogger(__name__)

#: why the team asks
QuestionKind = Literal["confirm", "unsure", "failed", "error"]
Choice = Literal["yes", "no", "stop", "retry", "reassign", "backtrack"]
CHOICES: tuple[Choice, ...] = ("yes", "no", "stop", "retry", "reassign", "backtrack")


@dataclass(frozen=True)
class Question:
    """What a team asks a person about one step (``step`` counts from 1, as shown)."""

    kind: QuestionKind
    step: int
    agent: str
    subtask: str
    text: str  #: the question itself, with what the reviewer saw
    choices: tuple[Choice, ...] = CHOICES

    def prompt(self) -> str:
        """The question as a person reads it, with how to answer."""
        return (f"[step {self.step}, {self.agent}] {self.text}\n"
                f"Answer: {' | '.join(_SYNTAX[c] for c in self.choices)}")


_SYNTAX: dict[Choice, str] = {
    "yes": "yes", "no": "no", "stop": "stop", "retry": "retry[: guidance]",
    "reassign": "reassign AGENT[: guidance]", "backtrack": "backtrack K[: guidance]",
}


@dataclass(frozen=True)
class Answer:
    """A person's answer: the choice, optional guidance, and its target (step K or an agent)."""

    choice: Choice
    guidance: str = ""
    step: int | None = None  #: backtrack: the step (from 1) to roll back to
    agent: str | None = None  #: reassign: the agent to take the step over
    text: str = ""  #: the answer as given

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"choice": self.choice}
        for key in ("guidance", "step", "agent"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        return out


#: the one callback every front end implements
Ask = Callable[[Question], Answer]

_ALIASES = {"y": "yes", "ok": "yes", "confirm": "yes", "n": "no", "quit": "stop", "abort": "stop",
            "back": "backtrack", "rollback": "backtrack"}


def parse_answer(text: str) -> Answer:
    """Read an answer written as in the module docstring; anything else is a :class:`ConfigError`."""
    head, colon, guidance = (text or "").partition(":")
    words = head.split()
    word = _ALIASES.get(words[0].lower(), words[0].lower()) if words else ""
    if word not in CHOICES:
        raise ConfigError(f"cannot read the answer {text!r}; write one of: {', '.join(_SYNTAX.values())}")
    choice: Choice = word
    rest, guidance = words[1:], guidance.strip()
    if choice == "backtrack":
        if len(rest) != 1 or not rest[0].isdigit() or int(rest[0]) < 1:
            raise ConfigError(f"'backtrack' needs the step to go back to (a number from 1), not {text!r}")
        return Answer(choice, guidance, step=int(rest[0]), text=text)
    if choice == "reassign":
        if len(rest) != 1:
            raise ConfigError(f"'reassign' needs one agent name, not {text!r}")
        return Answer(choice, guidance, agent=rest[0], text=text)
    if rest:  # "retry use column B" without the colon: the words are the guidance
        guidance = " ".join([*rest, *([colon + " " + guidance] if guidance else [])]).replace(" :", ":")
    return Answer(choice, guidance, text=text)


@dataclass
class ScriptedAnswers:
    """Answers given in advance, used in order (tests, papermill runs, ``--answers FILE``).

    When they run out, ``default`` answers (``yes`` unless set otherwise) and a warning is
    logged, so an unattended run never hangs. ``asked`` keeps every question with its answer.
    """

    answers: list[Answer]
    default: Answer = field(default_factory=lambda: Answer("yes", text="yes (default: no scripted answer left)"))
    asked: list[tuple[Question, Answer]] = field(default_factory=list)
    #: log a warning when the default answers (off where the answer is shown anyway: a notebook's card)
    warn_when_out: bool = True

    @classmethod
    def of(cls, texts: Iterable[str], default: str = "yes") -> ScriptedAnswers:
        return cls([parse_answer(t) for t in texts], default=parse_answer(default))

    @classmethod
    def from_file(cls, path: Path, default: str = "yes") -> ScriptedAnswers:
        """One answer per line; blank lines and lines starting with ``#`` are skipped."""
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read the answers file ({exc.strerror})", where=path) from None
        answers = []
        for n, line in enumerate(lines, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                try:
                    answers.append(parse_answer(line))
                except ConfigError as exc:
                    raise ConfigError(exc.message, where=f"{path}:{n}") from None
        return cls(answers, default=parse_answer(default))

    def __call__(self, question: Question) -> Answer:
        if self.answers:
            answer = self.answers.pop(0)
        else:
            (log.warning if self.warn_when_out else log.info)("no scripted answer left for %r; answering %r",
                                                               question.text, self.default.choice)
            answer = self.default
        self.asked.append((question, answer))
        return answer


def terminal_ask(question: Question, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> Answer:
    """Ask on the terminal until the answer can be read (the CLI's :data:`Ask`)."""
    inp, out = stdin or sys.stdin, stdout or sys.stderr
    out.write(question.prompt() + "\n")
    while True:
        out.write("> ")
        out.flush()
        line = inp.readline()
        if not line:  # end of input: nobody is there to answer
            return Answer("stop", text="(end of input)")
        try:
            return parse_answer(line.strip())
        except ConfigError as exc:
            out.write(exc.message + "\n")
