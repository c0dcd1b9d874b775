"""The workspace action space: a code agent's reply is a program to run, or the end of the episode.

A code-writing agent does not call functions such as ``click(3)``; it answers in prose with
at most one fenced program (```` ```python ```` or ```` ```bash ````) and says it has finished
by making ``DONE`` (or ``FAIL``) the last non-empty line of a reply. This module is the one
place that protocol is written down (:meth:`WorkspaceSpace.doc`, shown in the prompt) and read
(:meth:`WorkspaceSpace.parse_reply`), so the instructions and the parser cannot drift apart.

A ``DONE`` reply may still carry a program: :class:`Reply` holds both, and the agent runs the
program first; only when it succeeds does the episode end. Two or more programs in one reply
are an unusable reply (an :class:`~agentlab.errors.ActionParseError` the ask loop feeds back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agentlab.envs.actions.base import Action, need_str
from agentlab.envs.actions.space import ActionSpace
from agentlab.errors import ActionParseError

#: fence tag -> language the workspace runs
LANGUAGES: dict[str, Literal["python", "bash"]] = {
    "python": "python", "py": "python", "python3": "python",
    "bash": "bash", "sh": "bash", "shell": "bash",
}
_FENCE_RE = re.compile(r"^[ \t]*```([^\n`]*)\n(.*?)^[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)
_END_WORDS = {"DONE": "done", "FAIL": "fail"}


class WorkspaceSpace(ActionSpace):
    """The workspace's actions plus the reply protocol that carries them.

    Models do not write these actions as calls, so the classes' docstrings carry no ``e.g.``
    example; :meth:`doc` and :meth:`example` describe the protocol instead.
    """

    def doc(self) -> str:
        return (
            "Reply with a short thought and then AT MOST ONE program in a fenced block, either\n"
            "```python\n<code>\n```\nor\n```bash\n<script>\n```\n"
            "The program runs in the task's workspace folder (its current directory; it cannot write\n"
            "outside it, and it has no network); you will see its exit code and output next turn.\n"
            "When the task is complete, make DONE the last line of your reply; if it cannot be done,\n"
            "make FAIL the last line. A program in a DONE reply runs first: if it fails, the task\n"
            "goes on and you see the error."
        )

    def example(self) -> str:
        return "```python\nprint(open('notes.txt').read())\n```"

    def parse_reply(self, text: str) -> Reply:
        """Read a reply by the protocol: its program (if any) and its end marker (if any)."""
        return parse_reply(text)

    def parse(self, text: str) -> Action:
        """The reply's first action: its program, else its end marker (see :meth:`parse_reply`)."""
        reply = parse_reply(text)
        action = reply.program or reply.end
        assert action is not None  # parse_reply refuses a reply with neither
        return action


WORKSPACE = WorkspaceSpace("workspace", "a code agent's programs in a sandboxed workspace")


@WORKSPACE.action("run_program")
@dataclass(frozen=True)
class RunProgram(Action):
    """run_program(language: str, code: str) - run a python or bash program in the workspace (a fenced block in a reply)."""

    language: Literal["python", "bash"]
    code: str

    def __post_init__(self) -> None:
        if self.language not in ("python", "bash"):
            raise ActionParseError(f"run_program(): language must be 'python' or 'bash', got {self.language!r}")
        need_str(self.code, "run_program: code")

    def describe(self) -> str:
        first = next((ln for ln in self.code.splitlines() if ln.strip()), "")
        return f"run {self.language} ({len(self.code.splitlines())} lines: {first[:60]})"


@WORKSPACE.action("done")
@dataclass(frozen=True)
class Done(Action):
    """done() - the task is complete (a reply's last line is DONE)."""

    terminal = True


@WORKSPACE.action("fail")
@dataclass(frozen=True)
class Fail(Action):
    """fail() - the task cannot be done (a reply's last line is FAIL)."""

    terminal = True


@dataclass(frozen=True)
class Reply:
    """One reply read by the protocol: the program to run and/or how the episode ends."""

    program: RunProgram | None
    end: Done | Fail | None
    text: str = ""

    @property
    def status(self) -> str | None:
        """'done', 'failed' or None (the episode goes on)."""
        if self.end is None:
            return None
        return "done" if isinstance(self.end, Done) else "failed"


def _end_marker(text: str) -> Done | Fail | None:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    word = lines[-1].strip("*_`.!: ").upper()
    kind = _END_WORDS.get(word)
    if kind is None:
        return None
    return Done() if kind == "done" else Fail()


def parse_reply(text: str) -> Reply:
    """Parse a code agent's reply; an unusable one raises :class:`ActionParseError` saying why."""
    blocks = list(_FENCE_RE.finditer(text))
    if len(blocks) >= 2:
        raise ActionParseError(
            f"your reply holds {len(blocks)} fenced blocks; send at most ONE program per reply "
            "(put all the code in one ```python or ```bash block)"
        )
    rest = _FENCE_RE.sub("", text)
    if "```" in rest:
        raise ActionParseError("a ``` block is not closed; end the program with a line holding only ```")
    program: RunProgram | None = None
    if blocks:
        tag, code = blocks[0].group(1).strip().lower(), blocks[0].group(2)
        language = LANGUAGES.get(tag)
        if language is None:
            what = f"'{tag}'" if tag else "no language"
            raise ActionParseError(f"the block says {what}; open it with ```python or ```bash")
        if not code.strip():
            raise ActionParseError("the program block is empty; put the code between the ``` lines")
        program = RunProgram(language, code)
    end = _end_marker(rest)
    if program is None and end is None:
        raise ActionParseError(
            "no program and no end: send one ```python or ```bash block, or make DONE or FAIL the last line"
        )
    return Reply(program=program, end=end, text=text)
