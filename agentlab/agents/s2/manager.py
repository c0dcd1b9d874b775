"""Agent S2's manager: the task and the current screen in, an ordered list of subgoals out.

Proactive hierarchical planning: the runner asks the manager again after every subgoal the
worker completed (``replan=True``), so the remaining subgoals are rewritten from what the
screen shows now rather than from the first guess; after a failed subgoal it always asks
again, with the failure. A reply is a numbered (or bulleted) list; ``DONE`` alone, or an empty
list, means nothing is left to do. The plan is cut to ``max_subgoals``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.config import S2Config
from agentlab.agents.s2.screen import Screen
from agentlab.dialogue.ask import AskResult
from agentlab.errors import ActionParseError

_ITEM = re.compile(r"^\s*(?:\d+\s*[.):]|[-*•])\s+(.+?)\s*$", re.M)
_DONE = re.compile(r"^\W*(done|complete|completed|nothing (left|to do))\W*$", re.I)


@dataclass(frozen=True)
class Plan:
    """One manager answer: the subgoals left, in order (empty: the task is done)."""

    subgoals: tuple[str, ...]
    reply: str


def parse_plan(reply: str, max_subgoals: int) -> Plan:
    """Subgoals from a numbered or bulleted list (``Plan:`` headers and prose around it are fine)."""
    text = (reply or "").strip()
    if not text:
        raise ActionParseError("empty reply: write the remaining subgoals as a numbered list, or DONE")
    items = []
    for m in _ITEM.finditer(text):
        item = m.group(1).strip().strip("*_").strip()
        if item and not _DONE.match(item):
            items.append(item)
    if not items:
        first = text.splitlines()[0]
        if _DONE.match(first) or re.match(r"^\W*(plan\W*)?done\b", first, re.I):
            return Plan((), reply)
        raise ActionParseError(f"no numbered subgoals in {' '.join(text.split())[:160]!r}; write them as "
                               "'1. ...' lines, or DONE when the task is complete")
    return Plan(tuple(dict.fromkeys(items))[:max_subgoals], reply)


class Manager:
    """Plans and replans; remembers nothing itself (the runner passes what happened)."""

    def __init__(self, asker: RoleAsker[S2Config], task: str) -> None:
        self.asker = asker
        self.task = task
        self.calls = 0  #: plans made (first plan and replans)

    def plan(self, screen: Screen, *, done: list[str], failed: str = "",
             previous: tuple[str, ...] = ()) -> AskResult[Plan]:
        """Ask for the subgoals left (``.value`` is None when no usable plan came back)."""
        cfg = self.asker.config
        self.calls += 1
        fields = {
            "task": self.task,
            "observation": "(the screenshot is attached)" if self.asker.sees_images("manager")
            else screen.text(cfg.max_elements, cfg.ocr),
            "done": "\n".join(f"- {d}" for d in done) or "(none yet)",
            "failed": f"The last subgoal failed: {failed}\n" if failed else "",
            "previous": "\n".join(f"{i}. {s}" for i, s in enumerate(previous, 1)) or "(no plan yet)",
            "max_subgoals": str(cfg.max_subgoals),
        }
        return self.asker.ask("manager", "s2/manager", fields, lambda r: parse_plan(r, cfg.max_subgoals),
                              images=[screen.obs.screenshot])
