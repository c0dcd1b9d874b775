"""Mixture of grounding: the expert a semantic action needs turns it into something done.

The worker names targets in words; which expert grounds a step follows from the action it
chose (:attr:`~agentlab.agents.s2.actions.SemanticAction.expert`):

* **visual** (``click``, ``type(..., into=...)``): with a model that takes images (the
  ``grounder`` role's, or the worker's with ``grounding: worker``), the model is shown the
  screenshot and asked for the point (``s2/ground_point``, pixels or the 0-1000 grid:
  ``point_coords``; any usual answer shape, :mod:`agentlab.agents.s2.points`); with a text-only one
  or ``grounding: elements``, the accessibility element whose role and name are most similar to
  the description (word overlap and difflib's ratio), with the score recorded and a floor
  (``min_match``);
* **textual** (``click_text``, ``select_span``): OCR (:mod:`agentlab.envs.ocr`) finds the words;
  a click lands on their centre, a span is drag-selected from the first words' left edge to
  the last words' right edge;
* **structural** (``set_cells``): cells are written directly (:mod:`agentlab.agents.s2.cells`).

:meth:`Mixture.ground` only decides (nothing touches the screen, so a target that cannot be
found is fed back to the worker as a problem); :meth:`Mixture.carry_out` acts. An expert left
out of the run (``experts``) refuses its actions with a message naming the ones still usable.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from agentlab.agents.s2.actions import (ClickSemantic, ClickText, HotkeySemantic, ScrollSemantic, SelectSpan,
                                        SemanticAction, SetCells, TypeSemantic, actions_doc)
from agentlab.agents.asker import RoleAsker
from agentlab.agents.s2.cells import CellWrite, write_cells
from agentlab.agents.s2.config import Expert, S2Config
from agentlab.agents.s2.points import GRID, parse_point
from agentlab.agents.s2.screen import Screen
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Click, DoubleClick, Hotkey, Scroll, SelectText, Type
from agentlab.envs.base import Element, Env, Observation
from agentlab.envs.ocr import TextMatch, find_text, ocr_problem
from agentlab.errors import InvalidActionError
from agentlab.llm.screens import fitted_size

_ROLE_WORDS = {"button", "push", "field", "text", "box", "check", "checkbox", "label", "menu", "item", "entry",
               "tab", "icon", "link", "cell", "toggle", "combo", "list"}
_STOP = {"the", "a", "an", "on", "in", "of", "to", "at", "that", "which", "says", "labelled", "labeled", "named"}


@dataclass
class Grounded:
    """One semantic action made concrete: the desktop actions (or the cell write) and why."""

    expert: Expert | None
    target: str  #: what was aimed at: an element's label, the words found, the cells
    score: float | None  #: how well the target matched the description (None: nothing to match)
    actions: list[Action] = field(default_factory=list)
    cells: SetCells | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def role(self) -> dict[str, Any]:
        """The ``grounding`` entry of a step's role messages."""
        text = f"{self.expert} expert: {self.target}" + (f" (score {self.score:.2f})" if self.score is not None else "")
        return {"role": "grounding", "text": text, "expert": self.expert, "target": self.target,
                "score": None if self.score is None else round(self.score, 4), **self.detail}


@dataclass
class CarriedOut:
    """What acting did: the screen after it, the env's step info, a cell write."""

    observation: Observation
    info: dict[str, Any] = field(default_factory=dict)
    write: CellWrite | None = None


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def match_score(description: str, element: Element) -> float:
    """How well ``element`` fits a description in words, 0-1: the best of word overlap with its
    role and name, the element's whole name appearing in the description ("the Add one
    button"), and difflib's ratio against the name, squared so that only a near spelling
    (a typo) counts (the description's generic role words are left out of the comparison)."""
    want = set(_words(description))
    have = set(_words(f"{element.role} {element.text}"))
    overlap = len(want & have) / len(want | have) if want and have else 0.0
    name = " ".join(_words(element.text))
    desc = " ".join(w for w in _words(description) if w not in _ROLE_WORDS)
    ratio = difflib.SequenceMatcher(None, desc, name).ratio() ** 2 if name and desc else 0.0
    named = 0.0
    if name and f" {name} " in f" {' '.join(_words(description))} ":
        named = 0.5 + 0.5 * len(name.split()) / max(len(want), 1)
    return max(overlap, ratio, min(named, 1.0))


def best_element(description: str, elements: list[Element]) -> tuple[Element | None, float]:
    """The element most similar to ``description`` and its score (first wins a tie)."""
    best: Element | None = None
    top = 0.0
    for el in elements:
        s = match_score(description, el)
        if s > top:
            best, top = el, s
    return best, top


class Mixture:
    """The run's experts over one env."""

    def __init__(self, config: S2Config, env: Env, asker: RoleAsker[S2Config]) -> None:
        self.config = config
        self.env = env
        self.asker = asker
        self.experts: tuple[Expert, ...] = tuple(config.experts)

    # ------------------------------------------------------------------ deciding
    def ground(self, action: SemanticAction, screen: Screen) -> Grounded:
        """The concrete form of ``action`` on ``screen``; :class:`InvalidActionError` when it has none."""
        need = action.expert
        if need is not None and need not in self.experts:
            raise InvalidActionError(f"{action.to_call()} needs the {need} grounding expert, which this run "
                                     f"leaves out; use one of these instead:\n{actions_doc(self.experts)}")
        if isinstance(action, ClickSemantic):
            return self._visual(action.description, screen, lambda p: [_click(p, action.clicks)])
        if isinstance(action, TypeSemantic):
            if not action.into:
                return Grounded(None, "", None, [Type(action.text)])
            return self._visual(action.into, screen,
                                lambda p: [Type(action.text, element=p)] if isinstance(p, int)
                                else [Click(x=p[0], y=p[1]), Type(action.text)])
        if isinstance(action, ClickText):
            m = self._find(action.phrase, screen)
            x, y = _center(m.bbox)
            return Grounded("textual", m.text, m.score, [Click(x=x, y=y)], detail={"bbox": list(m.bbox)})
        if isinstance(action, SelectSpan):
            return self._span(action, screen)
        if isinstance(action, SetCells):
            target = ", ".join(f"{ref}={value!r}" for ref, value in action.cells)
            return Grounded("structural", target, None, cells=action,
                            detail={"sheet": action.sheet, "file": action.file})
        if isinstance(action, HotkeySemantic):
            return Grounded(None, "", None, [Hotkey(*action.keys)])
        if isinstance(action, ScrollSemantic):
            return Grounded(None, "", None, [Scroll(direction=action.direction, amount=action.amount)])
        raise InvalidActionError(f"{action.to_call()} has nothing to ground")

    def _point_role(self) -> str | None:
        """The system-prompt role the point question goes to (None: match accessibility elements)."""
        mode = self.config.grounding
        if mode == "elements":
            return None
        role = "grounding expert" if mode == "grounder" else "worker"
        return role if self.asker.sees_images(role) else None

    def _visual(self, description: str, screen: Screen, make: Any) -> Grounded:
        role = self._point_role()
        if role is not None and screen.obs.screenshot is not None:
            x, y = self._ask_point(description, screen, role)
            under = [e for e in screen.obs.elements if e.bbox[0] <= x < e.bbox[2] and e.bbox[1] <= y < e.bbox[3]]
            el = min(under, key=lambda e: e.width * e.height) if under else None
            # no similarity to measure for a model's point: the score says how well the element
            # under it (if any) fits the description, 0.0 when it hit no listed element
            score = match_score(description, el) if el is not None else 0.0
            return Grounded("visual", f"({x}, {y})" + (f" on {el.label()}" if el else ""), score, make((x, y)),
                            detail={"point": [x, y], "method": "model point", "model_role": self.asker.model_role(role),
                                    "coords": self.config.point_coords})
        el, score = best_element(description, screen.obs.elements)
        if el is None or score < self.config.min_match:
            near = f" (closest: {el.label()}, score {score:.2f})" if el is not None else ""
            raise InvalidActionError(f"no element on this screen looks like {description!r}{near}; describe it by "
                                     "its role and name as listed, e.g. \"the Save push button\"")
        return Grounded("visual", el.label(), score, make(el.id), detail={"element": el.id, "method": "text similarity"})

    def _ask_point(self, description: str, screen: Screen, role: str) -> tuple[int, int]:
        """Ask ``role``'s model where ``description`` is on the screenshot; the point in screen pixels.

        The model sees the screenshot downscaled to its role's side, so a pixel answer is in the
        sent image's pixels and is scaled back; a grid answer is a fraction of either. A point
        that cannot be had is an :class:`InvalidActionError`: the worker is told and tries again."""
        size = screen.size
        sent = fitted_size(size, self.asker.image_side(role))
        coords = self.config.point_coords
        units = ("in pixels of that image, e.g. (120, 45)" if coords == "pixels" else
                 f"on a 0-{GRID} grid over the image ((0, 0) top left, ({GRID}, {GRID}) bottom right), e.g. (500, 120)")
        asked = self.asker.ask(role, "s2/ground_point", {"description": description, "width": str(sent[0]),
                                                         "height": str(sent[1]), "units": units},
                               lambda reply: parse_point(reply, size, coords, sent), images=[screen.obs.screenshot])
        if asked.value is None:
            raise InvalidActionError(f"the visual expert could not place {description!r}: {asked.attempts[-1].problem}; "
                                     "describe the element differently (its visible label, its position)")
        return asked.value

    def _find(self, phrase: str, screen: Screen) -> TextMatch:
        if (problem := ocr_problem()) is not None:
            raise InvalidActionError(f"the textual expert cannot read the screen here: {problem}")
        m = find_text(screen.ocr(), phrase)
        if m is None:
            raise InvalidActionError(f"the text {phrase!r} is not on the screen (OCR); quote words exactly as shown")
        return m

    def _span(self, action: SelectSpan, screen: Screen) -> Grounded:
        a = self._find(action.first, screen)
        b = a
        if action.last:
            b = self._find(action.last, screen)
            if (b.bbox[1], b.bbox[0]) < (a.bbox[1], a.bbox[0]):
                raise InvalidActionError(f"{action.last!r} comes before {action.first!r} on the screen; "
                                         "give the first words first")
        target = a.text if b is a else f"{a.text} ... {b.text}"
        return Grounded("textual", target, min(a.score, b.score), [SelectText(start=a.start, end=b.end)],
                        detail={"start": list(a.start), "end": list(b.end)})

    # ------------------------------------------------------------------ acting
    def carry_out(self, grounded: Grounded) -> CarriedOut:
        """Do it: step the env through the desktop actions, or write the cells and look again."""
        if grounded.cells is not None:
            c = grounded.cells
            write = write_cells(c.cells, uno_url=getattr(self.env, "uno_url", None), sheet=c.sheet, file=c.file,
                                files_dir=self.config.files_dir, save=self.config.save_cells)
            info: dict[str, Any] = {"cells": {ref: v for ref, v in c.cells}, "route": write.route, "document": write.document,
                    "sheet": write.sheet, "saved": write.saved}
            return CarriedOut(self.env.observe(), info, write)
        obs: Observation | None = None
        infos: list[dict[str, Any]] = []
        for act in grounded.actions:
            res = self.env.step(act)
            obs = res.observation
            infos.append(dict(res.info))
        assert obs is not None
        last: dict[str, Any] = dict(infos[-1]) if infos else {}
        if len(infos) > 1:
            last["actions"] = [i.get("action") for i in infos]
        return CarriedOut(obs, last)


def _center(bbox: tuple[int, int, int, int]) -> tuple[int, int]:
    x, y, w, h = bbox
    return x + w // 2, y + h // 2


def _click(target: int | tuple[int, int], clicks: int) -> Action:
    cls = DoubleClick if clicks == 2 else Click
    if isinstance(target, int):
        return cls(element=target)
    return cls(x=target[0], y=target[1])

