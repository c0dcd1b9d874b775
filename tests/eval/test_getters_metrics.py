"""Each getter reads real files in the formats agents produce; each metric passes and fails."""

from __future__ import annotations

import pytest

from agentlab.errors import DataError
from agentlab.judge.evaluators import METRICS, EvaluatorSpec, evaluate
from agentlab.tasks.setup import WRITERS
from agentlab.judge.getters import FinalState, GetterError, run_getter


@pytest.fixture
def state(tmp_path):
    WRITERS["write_xlsx"](tmp_path / "t.xlsx", sheets={"S": [["a", 1], ["b", 2.5]], "Other": [["x"]]})
    WRITERS["write_docx"](
        tmp_path / "d.docx",
        paragraphs=[{"text": "Title", "bold": True}, "", "Body text here", {"text": "Styled", "style": "Heading 1"}],
    )
    WRITERS["write_pptx"](tmp_path / "p.pptx", slides=[{"title": "One", "lines": ["x", "y"]}, {"title": "Two"}])
    WRITERS["write_image"](tmp_path / "i.png", width=8, height=4, colour=[255, 0, 0])
    WRITERS["write_json"](tmp_path / "s.json", value={"a": {"b": [10, 20]}, "x.y": True})
    WRITERS["write_ini"](tmp_path / "c.ini", sections={"net": {"proxy": "on"}})
    (tmp_path / "f.txt").write_text("line1\n\nline2\n")
    (tmp_path / "broken.xlsx").write_text("not a zip")
    return FinalState(tmp_path, values={"stdout": "42\n"})


def g(state, **cfg):
    return run_getter(state, cfg)


def test_file_getters(state):
    assert g(state, type="file_text", path="f.txt") == "line1\n\nline2"
    assert g(state, type="file_lines", path="f.txt") == ["line1", "line2"]
    assert g(state, type="file_exists", path="f.txt") is True
    assert g(state, type="file_exists", path="nope.txt") is False
    assert g(state, type="state_value", key="stdout") == "42\n"
    with pytest.raises(GetterError, match="not found"):
        g(state, type="file_text", path="nope.txt")
    with pytest.raises(DataError, match="leaves the state folder"):
        g(state, type="file_text", path="../../etc/passwd")


def test_xlsx_getters(state):
    assert g(state, type="xlsx_cell", path="t.xlsx", cell="B2", sheet="S") == 2.5
    assert g(state, type="xlsx_cell", path="t.xlsx", cell="A1") == "a"  # first sheet by default
    assert g(state, type="xlsx_range", path="t.xlsx", range="A1:B2") == [["a", 1], ["b", 2.5]]
    assert g(state, type="xlsx_range", path="t.xlsx", range="B1") == [[1]]
    assert g(state, type="xlsx_sheet_names", path="t.xlsx") == ["S", "Other"]
    with pytest.raises(GetterError, match="no sheet 'Missing'"):
        g(state, type="xlsx_cell", path="t.xlsx", cell="A1", sheet="Missing")
    with pytest.raises(GetterError, match="not a readable .xlsx"):
        g(state, type="xlsx_cell", path="broken.xlsx", cell="A1")


def test_docx_getters(state):
    assert g(state, type="docx_paragraphs", path="d.docx") == ["Title", "Body text here", "Styled"]
    assert len(g(state, type="docx_paragraphs", path="d.docx", skip_empty=False)) == 4
    assert "Body text" in g(state, type="docx_text", path="d.docx")
    title = g(state, type="docx_paragraph_style", path="d.docx", index=0)
    assert title["bold"] is True and title["italic"] is False and title["style"] == "Normal"
    body = g(state, type="docx_paragraph_style", path="d.docx", contains="Body")
    assert body["bold"] is False
    styled = g(state, type="docx_paragraph_style", path="d.docx", index=-1)
    assert styled["style"] == "Heading 1" and styled["bold"] is True  # bold through the style
    with pytest.raises(GetterError, match="no paragraph 7"):
        g(state, type="docx_paragraph_style", path="d.docx", index=7)


def test_pptx_getters(state):
    assert g(state, type="pptx_slide_count", path="p.pptx") == 2
    assert g(state, type="pptx_slide_texts", path="p.pptx") == ["One\nx\ny", "Two"]
    assert g(state, type="pptx_slide_title", path="p.pptx", index=1) == "Two"


def test_image_and_settings_getters(state):
    props = g(state, type="image_properties", path="i.png")
    assert props["width"] == 8 and props["height"] == 4 and props["mode"] == "RGB" and props["format"] == "PNG"
    assert props["mean_rgb"] == [255.0, 0.0, 0.0]
    assert g(state, type="json_setting", path="s.json", key="a.b.1") == 20
    assert g(state, type="json_setting", path="s.json", key="x.y") is True
    assert g(state, type="json_setting", path="s.json", key="a.zzz", default="d") == "d"
    with pytest.raises(GetterError, match="no key"):
        g(state, type="json_setting", path="s.json", key="a.zzz")
    assert g(state, type="ini_setting", path="c.ini", section="net", key="proxy") == "on"
    with pytest.raises(GetterError, match=r"no \[net\] port"):
        g(state, type="ini_setting", path="c.ini", section="net", key="port")


@pytest.mark.parametrize(
    "name, result, expected, options, score",
    [
        ("exact_match", " Total ", "Total", {}, 1.0),
        ("exact_match", "total", "Total", {}, 0.0),
        ("exact_match", "total", "Total", {"case_sensitive": False}, 1.0),
        ("exact_match", [["a", 1]], [["a", 1]], {}, 1.0),
        ("contains", "hello world", "world", {}, 1.0),
        ("contains", ["slide one", "Agenda\nRisks"], ["agenda", "risks"], {"case_sensitive": False}, 1.0),
        ("contains", ["slide one"], ["agenda"], {}, 0.0),
        ("not_contains", "clean log", ["ERROR"], {}, 1.0),
        ("not_contains", "an ERROR", ["ERROR"], {}, 0.0),
        ("fuzzy_match", "colour", "color", {"threshold": 0.8}, 1.0),
        ("fuzzy_match", "abc", "xyz", {"threshold": 0.8}, 0.0),
        ("regex_match", "2024-05-01", r"\d{4}-\d\d-\d\d", {}, 1.0),
        ("regex_match", "May 1", r"\d{4}-\d\d-\d\d", {}, 0.0),
        ("number_close", "1,234.50", 1234.5, {}, 1.0),
        ("number_close", 292.49, 292.5, {"abs_tol": 0.005}, 0.0),
        ("number_close", None, 1, {}, 0.0),
        ("list_equal", ["b", "a"], ["a", "b"], {"ordered": False}, 1.0),
        ("list_equal", ["b", "a"], ["a", "b"], {}, 0.0),
        ("dict_subset", {"width": 160, "mode": "L", "x": 1}, {"width": 160, "mode": "L"}, {}, 1.0),
        ("dict_subset", {"width": 161, "mode": "L"}, {"width": 160}, {}, 0.0),
        ("colour_close", {"mean_rgb": [86, 87, 85]}, [86, 86, 86], {"tol": 2}, 1.0),
        ("colour_close", [200, 40, 40], [86, 86, 86], {}, 0.0),
        ("is_true", True, None, {}, 1.0),
        ("is_true", False, None, {}, 0.0),
    ],
)
def test_metrics_pass_and_fail(name, result, expected, options, score):
    assert METRICS[name](result, expected, **options) == score


def test_fuzzy_match_without_threshold_is_the_ratio():
    assert 0.0 < METRICS["fuzzy_match"]("colour", "color") < 1.0


def test_evaluate_and_or_and_getter_failure(state):
    spec = {
        "func": ["exact_match", "number_close"],
        "result": [{"type": "xlsx_cell", "path": "t.xlsx", "cell": "A2"}, {"type": "xlsx_cell", "path": "missing.xlsx", "cell": "B2"}],
        "expected": [{"type": "literal", "value": "b"}, {"type": "literal", "value": 2.5}],
    }
    res = evaluate(spec, state)
    assert res.score == 0.0 and not res.success
    assert res.checks[0].score == 1.0 and res.checks[1].error and "missing.xlsx" in res.checks[1].error
    assert "error" in res.explain()
    assert evaluate({**spec, "conj": "or"}, state).score == 1.0
    spec["result"][1]["path"] = "t.xlsx"
    assert evaluate(spec, state).success


def test_bad_spec_names_the_problem(state):
    with pytest.raises(DataError, match="unknown metric 'nope'"):
        evaluate({"func": "nope", "result": {"type": "literal", "value": 1}}, state)
    with pytest.raises(DataError, match="unknown getter type 'xlsx_cel'"):
        evaluate({"func": "is_true", "result": {"type": "xlsx_cel", "path": "t.xlsx"}}, state)
    spec = EvaluatorSpec.model_validate({"func": "is_true", "result": {"type": "xlsx_cell", "path": "t.xlsx", "celll": "A1"}})
    problems = spec.problems()
    assert any("missing key 'cell'" in p for p in problems) and any("unexpected key 'celll'" in p for p in problems)
    spec = EvaluatorSpec.model_validate({"func": "exact_match", "result": {"type": "literal", "value": 1}, "options": {"tol": 1}})
    assert spec.problems() == ["check 0 (exact_match): metric does not take option 'tol'"]
    with pytest.raises(ValueError, match="'result' has 1 entries"):
        EvaluatorSpec.model_validate({"func": ["is_true", "is_true"], "result": [{"type": "literal", "value": 1}]})

