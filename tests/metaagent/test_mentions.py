"""Named-application detection: the lexicon read from the documents, matching, and the store rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.metaagent.mentions import ApplicationLexicon, document_terms, names_two_applications
from agentlab.metaagent.store_policy import FallbackPolicy
from agentlab.pool import AgentPool
from agentlab.pool.document import parse_document


def _doc(name: str, domain: str, applications: str, *, platform: str = "desktop", interface: str = "CLI"):
    text = (f"---\nname: {name}\nplatform: {platform}\ninterface: {interface}\nmodality: single\nbase_model: open\n"
            f"domain: {domain}\nsupports_extension: false\n---\n# Applications\n{applications}\n\n# Capabilities\n"
            f"{name} does things in its application, reliably and quickly, for the person at the computer.\n\n"
            "# Limitations\nIt does nothing outside its application.\n\n# Demonstrations\n"
            + "".join(f"{i}. Do task number {i} in the application.\n" for i in range(1, 6)))
    doc, errors = parse_document(text, f"{name}.md")
    assert doc is not None, errors
    return doc


def test_terms_are_the_leading_product_name_file_kinds_and_the_domain_name() -> None:
    calc = _doc("CalcGui", "calc", "LibreOffice Calc graphical interface: menus, Format Cells dialog", interface="GUI")
    assert document_terms(calc) == {"LibreOffice", "Calc"}  # UI words later in the line are not names
    sheet = _doc("Sheets", "calc", "Terminal, Python with openpyxl, spreadsheet files used by LibreOffice Calc (.xlsx, .csv)")
    assert document_terms(sheet) == {"Terminal", ".xlsx", ".csv", "Calc"}  # "Calc" spells the domain
    vs = _doc("Vs", "vscode", "The `code` tool, workspace .vscode/settings.json files")
    assert document_terms(vs) == {"vscode", ".json"}  # the leading article is not a name


def test_shared_terms_name_no_one_and_generalists_add_nothing() -> None:
    docs = [
        _doc("CalcGui", "calc", "LibreOffice Calc graphical interface", interface="GUI"),
        _doc("Sheets", "calc", "Terminal, Python with openpyxl (.xlsx, .csv)"),
        _doc("WriterGui", "writer", "LibreOffice Writer graphical interface", interface="GUI"),
        _doc("Docs", "writer", "Terminal, Python with python-docx (.docx)"),
        _doc("Shell", "os", "Terminal (Bash), core Linux utilities"),
        _doc("Everything", "general", "Any desktop application window: Calc, Writer", interface="GUI"),
        _doc("Maps", "maps", "Google Maps on Android", platform="mobile", interface="GUI"),
        _doc("Browser", "chrome", "Google Chrome graphical interface", interface="GUI"),
    ]
    lex = ApplicationLexicon.from_pool(docs)
    assert lex.terms[("desktop", "calc")] == {"Calc", ".xlsx", ".csv"}  # "LibreOffice" is shared with writer
    assert lex.terms[("desktop", "writer")] == {"Writer", ".docx"}
    assert "Terminal" not in lex.terms[("desktop", "os")]  # "Terminal" opens three lines
    assert ("desktop", "general") not in lex.terms  # the catch-all names no application
    # "Google" names Chrome on the desktop and Maps on the phone: platforms do not clash
    assert "Google" in lex.terms[("desktop", "chrome")] and "Google" in lex.terms[("mobile", "maps")]


def test_matching_order_case_and_whole_words() -> None:
    docs = [_doc("CalcGui", "calc", "LibreOffice Calc graphical interface", interface="GUI"),
            _doc("Sheets", "calc", "Python with openpyxl (.xlsx)"),
            _doc("WriterGui", "writer", "LibreOffice Writer graphical interface", interface="GUI"),
            _doc("Img", "gimp", "GIMP graphical interface", interface="GUI")]
    lex = ApplicationLexicon.from_pool(docs)
    text = "Read the total in letter.docx? No: open budget.xlsx in Calc, then tell the Writer window"
    assert lex.domains(text) == ["calc", "writer"]  # ordered by first mention (".xlsx" before "Writer")
    assert lex.domains("the writer of the letter wants a calculator") == []  # capitalised names only, whole words
    assert lex.domains("open it in gimp") == ["gimp"]  # an all-capitals name is matched in any case
    assert names_two_applications(lex, "Copy cell B2 of report.xlsx into the Writer letter")
    assert not names_two_applications(lex, "Sum column B in Calc and save report.xlsx")


def test_two_applications_of_different_platforms_are_not_one_request(pool: AgentPool) -> None:
    lex = ApplicationLexicon.from_pool(pool)
    assert names_two_applications(lex, "Copy the total from invoice.xlsx (open in LibreOffice Calc) into letter.docx")
    # a phone app and a desktop application named together: each platform names only one
    one_each = "Play the song on Spotify while the VLC window stays open"
    assert set(lex.domains(one_each)) == {"spotify", "vlc"} and not names_two_applications(lex, one_each)


def test_the_store_policy_sends_a_named_two_application_request_to_a_generalist(pool: AgentPool) -> None:
    lex = ApplicationLexicon.from_pool(pool)
    ranking = [("SheetAgent", 0.7), ("WordAgent", 0.2), ("PCAgent", 0.1)]
    policy = FallbackPolicy(("PCAgent",), 0.99, "generalist_mass")
    text = "Put the invoice total from invoice.xlsx into letter.docx and save both"
    assert policy.decide(ranking, "SheetAgent", multi_app=names_two_applications(lex, text)).agent == "PCAgent"
    single = "Sum the Amount column of invoice.xlsx"
    assert policy.decide(ranking, "SheetAgent", multi_app=names_two_applications(lex, single)).agent == "SheetAgent"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_lowercase_prose_without_file_kinds_names_nothing_capitalised(text: str) -> None:
    """Lower-cased text names only case-free terms; it never raises on arbitrary input."""
    docs = [_doc("CalcGui", "calc", "LibreOffice Calc graphical interface", interface="GUI"),
            _doc("WriterGui", "writer", "LibreOffice Writer graphical interface", interface="GUI")]
    lex = ApplicationLexicon.from_pool(docs)
    assert lex.domains(text.lower().replace(".", " ")) == []


def test_fallback_record_round_trips_into_the_notebook_bars(tmp_path) -> None:
    """The notebook plots the benchmark's record; a file that is not one is one DataError naming it."""
    import json

    import pytest

    from agentlab.errors import DataError
    from agentlab.experiments.generalist_fallback import bars, costs, load_record

    rows = [{"name": "before", "agents": 30, "single_accuracy": 0.60, "single_to_generalist": 0.0,
             "target_to_generalist": 0.0},
            {"name": "after+mentions", "agents": 32, "single_accuracy": 0.597, "single_to_generalist": 0.01,
             "target_to_generalist": 11 / 12},
            {"name": "store", "agents": 32, "single_accuracy": 0.66, "single_to_generalist": 0.01,
             "target_to_generalist": 11 / 12}]
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"command": "python benchmarks/generalist_fallback.py", "rows": rows}))
    rec = load_record(path)
    b = bars(rec)
    assert b["two-app targets to a generalist"]["after+mentions"] == pytest.approx(11 / 12)
    assert b["single-app accuracy"]["store"] == pytest.approx(0.66)
    # the cost is in points against before; store routes by device, so it has none
    assert costs(rec) == {"after+mentions": pytest.approx(0.3)}
    path.write_text('{"rows": [{"name": "x"}]}')
    with pytest.raises(DataError, match="g.json"):
        load_record(path)
