"""The one small interface every environment offers (Android, desktop, CLI workspace).

Agents only see :class:`Observation` records and send the actions of the env's space
(``env.actions``, an :class:`~agentlab.envs.actions.space.ActionSpace`); they never
talk to adb or pyautogui directly, so one agent loop works unchanged on a phone, a desktop
or a fake device in tests. The shape follows OSWorld's gym front:
``reset(task) -> Observation``, ``step(action) -> StepResult``, ``close()``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.errors import InvalidActionError

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from agentlab.envs.actions.base import Action
    from agentlab.envs.actions.space import ActionSpace


@dataclass(frozen=True)
class Element:
    """One UI element the agent can refer to by number (set-of-marks label)."""

    id: int  #: numbered from 1 in screen order (top-to-bottom, left-to-right)
    bbox: tuple[int, int, int, int]  #: x1, y1, x2, y2 in screen pixels
    role: str  #: Android class (``android.widget.Button``) or accessibility role
    text: str  #: visible text, or accessible name / content-desc when there is no text
    resource_id: str | None  #: Android resource-id; None on desktop
    clickable: bool
    focusable: bool = False
    #: Stable identity across screens and runs, used to key element documentation:
    #: the resource-id, or class + size + content-desc when there is none.
    uid: str = ""
    #: Extra state flags worth showing the model: "checked", "unchecked", "focused",
    #: "selected", "scrollable", "disabled"... (empty when none apply).
    state: tuple[str, ...] = ()

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bbox
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def width(self) -> int:
        return self.bbox[2] - self.bbox[0]

    @property
    def height(self) -> int:
        return self.bbox[3] - self.bbox[1]

    def label(self) -> str:
        """One line for prompts: ``[3] Button "Alarm" (id: com.app:id/alarm)``."""
        role = self.role.rsplit(".", 1)[-1] if self.role else "element"
        parts = [f"[{self.id}] {role}"]
        if self.text:
            parts.append(f'"{clip(self.text, 60)}"')
        if self.resource_id:
            parts.append(f"(id: {self.resource_id.rsplit('/', 1)[-1]})")
        if self.state:
            parts.append("[" + ", ".join(self.state) + "]")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bbox": list(self.bbox),
            "role": self.role,
            "text": self.text,
            "resource_id": self.resource_id,
            "clickable": self.clickable,
            "focusable": self.focusable,
            "uid": self.uid,
            "state": list(self.state),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Element:
        x1, y1, x2, y2 = (int(v) for v in d["bbox"])
        return cls(
            id=int(d["id"]),
            bbox=(x1, y1, x2, y2),
            role=str(d.get("role", "")),
            text=str(d.get("text", "")),
            resource_id=d.get("resource_id"),
            clickable=bool(d.get("clickable", False)),
            focusable=bool(d.get("focusable", False)),
            uid=str(d.get("uid", "")),
            state=tuple(str(v) for v in d.get("state", ())),
        )


def clip(s: str, n: int) -> str:
    """``s`` on one line, at most ``n`` characters (an ellipsis marks a cut): how a model's text or
    a program's output is quoted in an error message, a prompt or a table."""
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass
class Observation:
    """What an agent sees after each step."""

    screenshot: Image.Image | None
    elements: list[Element]
    #: Free text: terminal output, an accessibility summary, the current activity...
    text: str = ""
    timestamp: float = field(default_factory=time.time)
    #: Environment-specific extras (screen size, activity/window name, raw XML path...).
    info: dict[str, Any] = field(default_factory=dict)

    def element(self, n: int) -> Element:
        """The element labelled ``n``; a clear :class:`InvalidActionError` for any other number."""
        for el in self.elements:
            if el.id == n:
                return el
        if not self.elements:
            raise InvalidActionError(f"no element {n}: this screen has no labelled elements")
        raise InvalidActionError(
            f"no element {n} on this screen; labels run from 1 to {len(self.elements)}"
        )

    def summary(self, max_elements: int = 60) -> str:
        """Compact text for prompts and trajectories (one line per labelled element)."""
        lines: list[str] = []
        if self.screenshot is not None:
            w, h = self.screenshot.size
            lines.append(f"Screen {w}x{h}, {len(self.elements)} labelled elements.")
        else:
            lines.append(f"{len(self.elements)} labelled elements.")
        for el in self.elements[:max_elements]:
            lines.append(el.label())
        if len(self.elements) > max_elements:
            lines.append(f"... and {len(self.elements) - max_elements} more")
        if self.text:
            lines.append(self.text.strip())
        return "\n".join(lines)


@dataclass
class StepResult:
    observation: Observation
    done: bool
    reward: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


class Env(ABC):
    """An environment an agent acts on; close it (or use ``with``) to release the device."""

    @property
    @abstractmethod
    def actions(self) -> ActionSpace:
        """The actions this environment takes (phone: AppAgent's; desktop: PC-Agent's): agents
        take the prompt's action list and the parser from it."""

    @abstractmethod
    def reset(self, task: str | None = None) -> Observation:
        """Start an episode (the task is optional and only informational) and observe."""

    @abstractmethod
    def step(self, action: Action) -> StepResult:
        """Apply one action and observe the result.

        Raises :class:`~agentlab.errors.InvalidActionError` for an action this screen
        cannot take (unknown element, untypeable text) — nothing was done to the device —
        and :class:`~agentlab.errors.DeviceDisconnectedError` if the device went away.
        """

    def observe(self) -> Observation:
        """The current observation without acting (default: not supported)."""
        raise NotImplementedError(f"{type(self).__name__} does not support observe()")

    def close(self) -> None:
        """Release the device / display / workspace."""

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
