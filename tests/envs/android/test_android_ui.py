"""uiautomator XML -> numbered elements (AppAgent's selection rule), no device needed."""

from __future__ import annotations

import pytest

from agentlab.envs.android_ui import element_uid, parse_hierarchy, select_elements
from agentlab.envs.testing.fake_app import ClockApp
from agentlab.errors import DataError


def _edit_screen() -> str:
    app = ClockApp()
    app.stack = ["home", "alarms", "edit"]
    return app.hierarchy_xml()


def test_clickable_kept_and_focusable_near_clickable_dropped() -> None:
    els = select_elements(parse_hierarchy(_edit_screen()))
    texts = [e.text for e in els]
    assert "Save" in texts and "Cancel" in texts
    assert "07" in texts  # focusable-only hour picker, far from clickables: kept
    assert "save hint" not in texts  # focusable-only, 5 px from Save's centre: dropped
    assert [e.id for e in els] == list(range(1, len(els) + 1))
    tops = [(e.bbox[1], e.bbox[0]) for e in els]
    assert tops == sorted(tops)


def test_min_dist_is_a_real_knob() -> None:
    roots = parse_hierarchy(_edit_screen())
    assert "save hint" in [e.text for e in select_elements(roots, min_dist=1)]


def test_uid_from_resource_id_or_class_size_desc() -> None:
    roots = parse_hierarchy(_edit_screen())
    by_text = {e.text: e for e in select_elements(roots)}
    assert by_text["Save"].uid == "com.example.clock.id_save"
    assert by_text["Navigate up"].uid == "ImageButton_80_80_Navigate_up"
    nodes = {n.text or n.content_desc: n for r in roots for n in r.walk()}
    assert element_uid(nodes["save hint"]) == "View_210_50_save_hint"


def test_row_elements_take_their_childrens_text_and_state() -> None:
    app = ClockApp()
    app.stack = ["home", "alarms"]
    els = select_elements(parse_hierarchy(app.hierarchy_xml()))
    assert any(e.text == "07:00 Wake up" for e in els)
    switches = [e for e in els if e.role.endswith("Switch")]
    assert switches[0].state == ("checked",) and switches[1].state == ("unchecked",)


def test_a_switch_without_text_is_named_by_its_rows_text_and_nothing_else_is() -> None:
    """A screen reader's label for an unlabelled switch: the text on its row (settings rows)."""
    app = ClockApp()
    app.stack = ["home", "settings"]
    by_uid = {e.uid: e for e in select_elements(parse_hierarchy(app.hierarchy_xml()))}
    assert by_uid["com.example.clock.id_vibrate_switch"].text == "Vibrate"
    assert by_uid["com.example.clock.id_dark_switch"].text == "Dark theme"
    assert by_uid["ImageButton_80_80_Navigate_up"].text == "Navigate up"  # its own description, not the title's
    xml = ('<hierarchy><node class="android.widget.Switch" checkable="true" clickable="true" bounds="[400,100][500,150]"/>'
           '<node class="android.widget.TextView" text="Far away" bounds="[0,300][300,350]"/></hierarchy>')
    (alone,) = select_elements(parse_hierarchy(xml))
    assert alone.text == ""  # no text on its row: still unnamed, not the nearest text anywhere


@pytest.mark.parametrize("bad", ["not xml", "<?xml version='1.0'?><root/>", '<hierarchy><node bounds="oops"/></hierarchy>'])
def test_bad_dumps_raise_data_error(bad: str) -> None:
    with pytest.raises(DataError):
        parse_hierarchy(bad)
