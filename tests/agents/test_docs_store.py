"""The documentation store names files safely for any element uid (desktop ids included)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.agents.appagent.docs_store import DocStore, doc_filename
from agentlab.envs import Element
from agentlab.errors import DataError

# real desktop uids (a11y: "<app>:<role>:<name>", the grid fallback: "grid:<row>,<col>"), Android
# resource ids, and the awkward ones: path separators, dot-dot, spaces, unicode, very long
UIDS = [
    "demo_gtk.py:push button:Add one", "demo_gtk.py:push button:Add  one", "demo_gtk.py:push_button:Add_one",
    "grid:1,2", "grid:12", "grid:1,2 ", "soffice:table cell:A1", "com.example.clock.id_settings_btn",
    "a/b", "a\\b", "../../etc/passwd", "..", ".", ".hidden", "_useless", "with space", "Ünïcødé 按钮:ボタン",
    "x" * 300, "x" * 301, "-dash", "a@b", "😀",
]


def _el(uid: str) -> Element:
    return Element(1, (0, 0, 10, 10), "push button", "Add one", None, True, uid=uid)


def test_every_uid_round_trips_in_its_own_file(tmp_path) -> None:
    store = DocStore("demo_gtk", tmp_path)
    for i, uid in enumerate(UIDS):
        store.update(_el(uid), "click", f"doc {i}")
    files = sorted(p for p in (tmp_path / "demo_gtk").iterdir())
    assert len(files) == len(UIDS)  # two different uids never share a file
    assert all(p.parent == tmp_path / "demo_gtk" and not p.name.startswith(".") for p in files)
    fresh = DocStore("demo_gtk", tmp_path)  # read back from disk, not from the cache
    for i, uid in enumerate(UIDS):
        doc = fresh.get(uid)
        assert doc is not None and doc.uid == uid and doc.docs == {"click": f"doc {i}"}
    assert fresh.documented() == sorted(UIDS)
    assert "[1] click: doc 0" in fresh.for_screen([_el(UIDS[0])])


def test_file_names_are_readable_and_stable() -> None:
    name = doc_filename("demo_gtk.py:push button:Add one")
    assert name.startswith("demo_gtk.py_push_button_Add_one@") and name.endswith(".json")
    assert doc_filename("demo_gtk.py:push button:Add one") == name  # same uid, same file, every run
    assert doc_filename("grid:1,2").startswith("grid_1_2@")
    assert doc_filename("../../etc/passwd").startswith("etc_passwd@") and "/" not in doc_filename("a/b")
    with pytest.raises(DataError, match="without a uid"):
        doc_filename("")


def test_docs_in_the_first_layout_are_still_read(tmp_path) -> None:
    folder = tmp_path / "clock"
    folder.mkdir()
    (folder / "com.example.clock.id_vibrate_switch.json").write_text(json.dumps(
        {"uid": "com.example.clock.id_vibrate_switch", "app": "clock", "docs": {"tap": "Toggles vibration."}}))
    doc = DocStore("clock", tmp_path).get("com.example.clock.id_vibrate_switch")
    assert doc is not None and doc.docs == {"tap": "Toggles vibration."}


def test_a_file_holding_another_uid_is_refused(tmp_path) -> None:
    folder = tmp_path / "demo_gtk"
    folder.mkdir()
    (folder / doc_filename("grid:1,2")).write_text(json.dumps({"uid": "grid:2,1", "app": "demo_gtk"}))
    with pytest.raises(DataError, match="documents element 'grid:2,1', not 'grid:1,2'"):
        DocStore("demo_gtk", tmp_path).get("grid:1,2")


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_distinct_uids_get_distinct_safe_names(a: str, b: str) -> None:
    for uid in (a, b):
        name = doc_filename(uid)
        assert "/" not in name and "\0" not in name and not name.startswith(".") and name.isascii()
        assert len(name.encode()) <= 255
    assert (doc_filename(a) == doc_filename(b)) == (a == b)
