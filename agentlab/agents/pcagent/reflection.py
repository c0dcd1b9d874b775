"""The reflection agent: did the last action do what the decision agent meant?

After each action it compares the screen before and after with the decision agent's thought
and gives one of the paper's three verdicts: **as intended**; **unexpected change** (the
screen changed, but not as meant: a wrong element or action type, so the decision agent
should correct course); **no effect** (nothing responded: a spot with no interactive
element, a field not yet focused). A screen that did not change at all is "no effect"
without asking the model (:func:`~agentlab.agents.appagent.core.screen_changed`). The
verdict goes to the decision agent's next prompt and to the progress agent.

The model is shown what changed rather than two whole screens (:func:`screen_diff`: the
listed items only the screen before had, and those only the screen after has, numbers
ignored), which keeps the prompt short on a desktop listing hundreds of items; a backend
that takes images also gets both screenshots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

from agentlab.agents.appagent.core import screen_changed
from agentlab.agents.asker import RoleAsker
from agentlab.agents.pcagent.config import PCAgentConfig
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


_NUMBER = re.compile(r"^\[\d+\]\s*")


def screen_diff(before: Perception, after: Perception, limit: int = 40) -> tuple[str, str]:
    """The listing lines only ``before`` has and those only ``after`` has (item numbers ignored)."""

    def lines(p: Perception) -> list[str]:
        return [_NUMBER.sub("", ln) for ln in p.listing().splitlines() if ln.startswith("[")]

    a, b = lines(before), lines(after)
    gone = [ln for ln in a if ln not in set(b)]
    new = [ln for ln in b if ln not in set(a)]

    def show(items: list[str]) -> str:
        if not items:
            return "(nothing)"
        more = f"\n... and {len(items) - limit} more" if len(items) > limit else ""
        return "\n".join(items[:limit]) + more

    return show(gone), show(new)


class ReflectionAgent:
    """Compares two perceptions; asks ``pcagent/reflection`` only when the screen changed."""

    def __init__(self, asker: RoleAsker[PCAgentConfig]) -> None:
        self.asker = asker

    def reflect(self, *, subtask: str, action: str, thought: str, before: Perception, after: Perception) -> Reflection:
        if not screen_changed(before.observation, after.observation):
            return Reflection("no effect", "the screen did not change at all", asked=False)
        shots = [p.observation.screenshot for p in (before, after) if p.observation.screenshot is not None]
        gone, new = screen_diff(before, after)
        asked = self.asker.ask(
            "reflection", "pcagent/reflection",
            {"subtask": subtask, "action": action, "thought": thought or "(none given)", "gone": gone, "new": new},
            parse_reflection, images=shots if len(shots) == 2 else [],
        )
        if asked.value is None:
            return Reflection(None, f"no usable verdict: {asked.attempts[-1].problem}", asked=True)
        return asked.value
