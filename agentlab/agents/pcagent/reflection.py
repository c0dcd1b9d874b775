"""The reflection agent: did the last action do what the decision agent meant?

After each action it compares the screen before and after with the decision agent's thought
and gives one of the paper's three verdicts: **as intended**; **unexpected change** (the
screen changed, but not as meant: a wrong element or action type, so the decision agent
should correct course); **no effect** (nothing responded: a spot with no interactive
element, a field not yet focused). A screen that did not change at all is "no effect"
without asking the model (:func:`~agentlab.agents.appagent_core.screen_changed`). The
verdict goes to the decision agent's next prompt and to the progress agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

from agentlab.agents.appagent_core import screen_changed
from agentlab.agents.pcagent.asker import RoleAsker
from agentlab.agents.pcagent.perception import Perception
from agentlab.agents.response import sections
from agentlab.errors import ActionParseError

Verdict = Literal["as intended", "unexpected change", "no effect"]
VERDICTS: tuple[Verdict, ...] = ("as intended", "unexpected change", "no effect")
_VERDICT = re.compile(r"\b(as[\s_-]+intended|unexpected[\s_-]+change|no[\s_-]+effect)\b", re.I)
_SECTION = re.compile(r"^[\s>*#_-]*(verdict|reason)\s*[*_]*\s*:\s*[*_]*", re.I | re.M)


@dataclass(frozen=True)
class Reflection:
    """A verdict on one action (None when the model gave no usable one) and why."""

    verdict: Verdict | None
    text: str
    asked: bool  #: False when the verdict came from the unchanged screen alone

    def feedback(self) -> str:
        """The line the decision and progress agents read."""
        if self.verdict is None:
            return f"unknown ({self.text})"
        return f"{self.verdict}: {self.text}" if self.text else self.verdict


def parse_reflection(reply: str) -> Reflection:
    """``Verdict: <one of the three>`` and ``Reason: ...`` (a verdict phrase anywhere counts)."""
    found = {m.group(1).lower(): reply[m.end():] for m in _SECTION.finditer(reply or "")}
    source = found.get("verdict", "") or reply or ""
    m = _VERDICT.search(source) or _VERDICT.search(reply or "")
    if not m:
        clip = " ".join((reply or "").split())[:200]
        raise ActionParseError(f"no verdict (as intended, unexpected change or no effect) in the reply {clip!r}")
    verdict = cast(Verdict, re.sub(r"[\s_-]+", " ", m.group(1).lower()))
    reason = sections(reply).get("thought", "")
    if "reason" in found:
        reason = _SECTION.split(found["reason"], maxsplit=1)[0].strip()
    return Reflection(verdict, " ".join(reason.split()), asked=True)


class ReflectionAgent:
    """Compares two perceptions; asks ``pcagent/reflection`` only when the screen changed."""

    def __init__(self, asker: RoleAsker) -> None:
        self.asker = asker

    def reflect(self, *, subtask: str, action: str, thought: str, before: Perception, after: Perception) -> Reflection:
        if not screen_changed(before.observation, after.observation):
            return Reflection("no effect", "the screen did not change at all", asked=False)
        shots = [p.observation.screenshot for p in (before, after) if p.observation.screenshot is not None]
        asked = self.asker.ask(
            "pcagent/reflection", parse_reflection,
            {"subtask": subtask, "action": action, "thought": thought or "(none given)",
             "before": before.listing(), "after": after.listing()},
            role="reflection", images=shots if len(shots) == 2 else [],
        )
        if asked.value is None:
            return Reflection(None, f"no usable verdict: {asked.attempts[-1].problem}", asked=True)
        return asked.value
