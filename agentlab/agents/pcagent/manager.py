"""The manager agent: an instruction becomes parameterised subtasks, joined by a communication hub.

The paper's manager decomposes an instruction into subtasks that each name what they produce
and what they need from earlier ones ("find the traveller's name" -> ``name``; "type {name}
into the form"), then keeps a *communication hub*: the values finished subtasks produced,
used to fill a later subtask's ``{placeholders}`` just before it starts. Here:

* the model writes one numbered line per subtask, ``1. <text> [outputs: name, date]``, with
  ``{name}`` wherever a value from an earlier subtask belongs (``pcagent/manager``);
* :func:`parse_plan` reads that, and a plan whose subtask needs a value no earlier subtask
  outputs is sent back to the model with that problem;
* :class:`CommunicationHub` holds ``name -> value`` and :meth:`CommunicationHub.fill` writes
  the values in (a placeholder with no value yet is left as it is and reported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentlab.agents.asker import RoleAsker
from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.errors import ActionParseError
from agentlab.envs.base import clip

#: ``{name}``: a value an earlier subtask produced
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ITEM = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:subtask\s*)?(\d+)\s*[.):]\s*(?:\*\*)?\s*(.+?)\s*$", re.I)
_OUTPUTS = re.compile(r"[\[(]?\s*outputs?\s*[:=]\s*([^\])]*)[\])]?\s*$", re.I)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Subtask:
    """One step of the plan: what to do, the values it produces, and (from its text) those it needs."""

    text: str
    outputs: tuple[str, ...] = ()

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(PLACEHOLDER.findall(self.text)))

    def line(self) -> str:
        return self.text + (f" [outputs: {', '.join(self.outputs)}]" if self.outputs else "")


def parse_plan(reply: str) -> list[Subtask]:
    """Numbered lines -> subtasks (anything else in the reply is ignored); none is an error."""
    out: list[Subtask] = []
    for line in (reply or "").splitlines():
        m = _ITEM.match(line)
        if not m:
            continue
        text = m.group(2).strip()
        outputs: tuple[str, ...] = ()
        om = _OUTPUTS.search(text)
        if om:
            names = [n.strip().strip("{}'\"` ") for n in om.group(1).split(",")]
            bad = [n for n in names if n and not _NAME.match(n)]
            if bad:
                raise ActionParseError(f"subtask {m.group(1)}: output names must be words like name or total_price, got {bad}")
            outputs = tuple(n for n in names if n)
            text = text[: om.start()].rstrip(" -;,")
        if text:
            out.append(Subtask(text=text.strip("* "), outputs=outputs))
    if not out:
        raise ActionParseError(f"no numbered subtasks ('1. ...') in the reply {clip(reply or '', 200)!r}")
    return out


def plan_problems(plan: list[Subtask], max_subtasks: int) -> list[str]:
    """What is wrong with a plan: too long, or a subtask needing a value nothing before it produces."""
    problems: list[str] = []
    if len(plan) > max_subtasks:
        problems.append(f"{len(plan)} subtasks; write at most {max_subtasks}")
    produced: set[str] = set()
    for i, sub in enumerate(plan, 1):
        missing = [n for n in sub.inputs if n not in produced]
        if missing:
            problems.append(f"subtask {i} uses {', '.join('{' + n + '}' for n in missing)} but no earlier subtask "
                            "lists it in its [outputs: ...]")
        produced.update(sub.outputs)
    return problems


@dataclass
class CommunicationHub:
    """Values finished subtasks produced, filled into later subtasks' placeholders."""

    values: dict[str, str] = field(default_factory=dict)

    def update(self, values: dict[str, str]) -> None:
        self.values.update({k: str(v) for k, v in values.items()})

    def fill(self, subtask: Subtask) -> tuple[str, dict[str, str], list[str]]:
        """The subtask's text with known values written in, the values used, and the names still missing."""
        used: dict[str, str] = {}
        missing: list[str] = []

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in self.values:
                used[name] = self.values[name]
                return self.values[name]
            missing.append(name)
            return m.group(0)

        return PLACEHOLDER.sub(sub, subtask.text), used, list(dict.fromkeys(missing))


class ManagerAgent:
    """Asks the model once for the plan (``pcagent/manager``), re-asking while it has problems."""

    def __init__(self, asker: RoleAsker[PCAgentConfig]) -> None:
        self.asker = asker

    def plan(self, instruction: str, screen: str) -> tuple[list[Subtask] | None, str, str | None]:
        """``(plan, raw reply, problem)``; the plan is None when no usable one came back."""
        limit = self.asker.config.max_subtasks
        asked = self.asker.ask(
            "manager", "pcagent/manager", {"instruction": instruction, "screen": screen, "max_subtasks": str(limit),
                                           "example_input": "{customer}"}, parse_plan, checks=[lambda plan: plan_problems(plan, limit)],
        )
        if asked.value is None:
            return None, asked.reply, asked.attempts[-1].problem
        return asked.value, asked.reply, None
