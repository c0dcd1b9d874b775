"""The progress agent: a running summary of the current subtask, updated after every action.

The paper's progress agent sits between the manager and the decision agent: from the subtask,
its previous progress, the action just taken and the reflection agent's verdict it writes
the new progress (what is done, what is left), so the decision agent reads a short summary
instead of the whole history (``pcagent/progress``). A reply that cannot be used keeps the
previous progress with the action and its verdict appended, so the loop never stops on it.
"""

from __future__ import annotations

import re

from agentlab.agents.asker import RoleAsker
from agentlab.agents.pcagent.config import PCAgentConfig
from agentlab.errors import ActionParseError

_PREFIX = re.compile(r"^[\s>*#_-]*progress\s*[*_]*\s*:\s*[*_]*", re.I)


def parse_progress(reply: str) -> str:
    text = _PREFIX.sub("", (reply or "").strip(), count=1).strip()
    text = " ".join(text.split())
    if not text:
        raise ActionParseError("the progress reply is empty; write 'Progress: <what is done and what is left>'")
    return text[:800]


class ProgressAgent:
    """Updates the progress text of one subtask."""

    def __init__(self, asker: RoleAsker[PCAgentConfig]) -> None:
        self.asker = asker

    def update(self, *, subtask: str, previous: str, action: str, reflection: str) -> tuple[str, bool]:
        """``(new progress, whether the model gave it)``."""
        asked = self.asker.ask(
            "progress", "pcagent/progress",
            {"subtask": subtask, "previous": previous, "action": action, "reflection": reflection}, parse_progress,
        )
        if asked.value is not None:
            return asked.value, True
        return f"{previous}; then {action} ({reflection})", False
