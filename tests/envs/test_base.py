"""Element / Observation records shared by every environment."""

from __future__ import annotations

import pytest

from agentlab.envs import Element, Observation
from agentlab.errors import InvalidActionError


def _el(i: int, **kw) -> Element:  # type: ignore[no-untyped-def]
    base = dict(id=i, bbox=(0, 10 * i, 100, 10 * i + 8), role="android.widget.Button",
                text=f"Item {i}", resource_id=f"com.app:id/item{i}", clickable=True)
    base.update(kw)
    return Element(**base)


def test_element_center_and_dict_round_trip() -> None:
    el = _el(2, focusable=True, uid="com.app:id/item2")
    assert el.center == (50, 24)
    assert Element.from_dict(el.to_dict()) == el


def test_observation_element_lookup_and_clear_error() -> None:
    obs = Observation(screenshot=None, elements=[_el(1), _el(2)])
    assert obs.element(2).text == "Item 2"
    with pytest.raises(InvalidActionError, match="labels run from 1 to 2"):
        obs.element(7)
    with pytest.raises(InvalidActionError, match="no labelled elements"):
        Observation(screenshot=None, elements=[]).element(1)


def test_summary_lists_each_element_once() -> None:
    obs = Observation(screenshot=None, elements=[_el(1), _el(2, text="")], text="Activity: Main")
    s = obs.summary()
    assert '[1] Button "Item 1" (id: item1)' in s
    assert "[2] Button (id: item2)" in s
    assert s.endswith("Activity: Main")
