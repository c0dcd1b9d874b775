"""The toolkits: real files edited by each domain's functions, the call protocol, the slot values
a request and a workspace offer, and the grammar that keeps a local model's reply to calls."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from agentlab.errors import ActionParseError, ConfigError
from agentlab.toolkits import TOOLKITS, load_toolkit
from agentlab.toolkits.base import Call, ToolError, parse_calls
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.runtime import program, results
from agentlab.toolkits.slots import mentioned, merge, request_values, workspace_values


@pytest.fixture
def in_tmp(tmp_path: Path):  # the toolkits take paths relative to the workspace (their cwd)
    old = Path.cwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def test_every_toolkit_loads_and_documents_each_tool() -> None:
    for name in TOOLKITS:
        kit = load_toolkit(name)
        assert kit.tools and kit.examples, name
        doc = kit.doc()
        assert all(f"- {t}(" in doc for t in kit.tools) and "done()" in doc
        for q, calls in kit.examples:  # the examples are in the protocol they teach
            assert parse_calls(calls, kit)[-1].name == "done", (name, q)
    with pytest.raises(ConfigError, match="unknown toolkit 'nope'; known toolkits: sheets, documents"):
        load_toolkit("nope")


def test_sheet_tools_edit_a_real_workbook(in_tmp: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    for row in (["name", "team", "age"], ["Bob", "ops", 40], ["Ann", "dev", 31]):
        ws.append(row)
    wb.save("people.xlsx")
    kit = load_toolkit("sheets").tools
    kit["update_value"].fn("people.xlsx", "Staff", "Bob", "age", "41")
    kit["sort_rows"].fn("people.xlsx", "Staff", "name")
    kit["rename_sheet"].fn("people.xlsx", "Staff", "Team")
    with pytest.raises(ToolError, match="Staff"):
        kit["delete_sheet"].fn("people.xlsx", "Staff")
    ws = openpyxl.load_workbook("people.xlsx")["Team"]
    assert [[c.value for c in r] for r in ws.iter_rows()] == [["name", "team", "age"], ["Ann", "dev", 31], ["Bob", "ops", 41]]
    # a range written bottom-up is the same range (a small model often names the ends the other way round)
    kit["sum_into"].fn("people.xlsx", "Team", "C4", "C3", "c2")
    kit["sum_into"].fn("people.xlsx", "Team", "D1", "C3", "A2")
    ws = openpyxl.load_workbook("people.xlsx")["Team"]
    assert (ws["C4"].value, ws["D1"].value) == ("=SUM(C2:C3)", "=SUM(A2:C3)")
    with pytest.raises(ToolError, match="cell references"):
        kit["sum_into"].fn("people.xlsx", "Team", "C5", "amount", "C3")


def test_document_slide_file_setting_and_image_tools(in_tmp: Path) -> None:
    import docx
    import pptx
    from PIL import Image

    d = docx.Document()
    for text in ("Agenda", "Parking is behind the hall.", "Lunch is at noon."):
        d.add_paragraph(text)
    d.save("a.docx")
    load_toolkit("documents").tools["delete_paragraph"].fn("a.docx", "Parking")
    assert [p.text for p in docx.Document("a.docx").paragraphs] == ["Agenda", "Lunch is at noon."]

    prs = pptx.Presentation()
    for title in ("Intro", "Results"):
        prs.slides.add_slide(prs.slide_layouts[1]).shapes.title.text = title
    prs.save("deck.pptx")
    load_toolkit("slides").tools["add_slide_after"].fn("deck.pptx", "Intro", "Budget")
    assert [s.shapes.title.text for s in pptx.Presentation("deck.pptx").slides] == ["Intro", "Budget", "Results"]

    Path("backup.ini").write_text("[schedule]\nretention_days = 7\n")
    load_toolkit("files").tools["set_ini_value"].fn("backup.ini", "schedule", "retention_days", "14")
    assert "retention_days = 14" in Path("backup.ini").read_text()

    Path(".vscode").mkdir()
    Path(".vscode/settings.json").write_text("{}")
    load_toolkit("settings").tools["set_setting"].fn(".vscode/settings.json", "editor.fontSize", "16")
    assert json.loads(Path(".vscode/settings.json").read_text()) == {"editor.fontSize": 16}

    Image.new("RGB", (1200, 400), (1, 2, 3)).save("banner.png")
    load_toolkit("images").tools["resize_to_width"].fn("banner.png", 600, "small.png")
    assert Image.open("small.png").size == (600, 200) and Image.open("banner.png").size == (1200, 400)


def test_the_runtime_program_reports_each_call_and_stops_at_the_first_error(in_tmp: Path) -> None:
    import subprocess
    import sys

    Path("notes.txt").write_text("b\na\n")
    calls = [{"name": "sort_lines", "args": {"path": "notes.txt", "descending": False}},
             {"name": "delete", "args": {"path": "missing.txt"}},
             {"name": "delete", "args": {"path": "notes.txt"}}]
    out = subprocess.run([sys.executable, "-c", program("files", calls)], capture_output=True, text=True, cwd=in_tmp)
    done = results(out.stdout)
    assert [r["ok"] for r in done] == [True, False] and out.returncode == 1
    assert Path("notes.txt").read_text() == "a\nb\n"  # the third call never ran


def test_parse_calls_binds_checks_and_forgives_a_cut_last_line() -> None:
    kit = load_toolkit("sheets")
    calls = parse_calls("rename_sheet('a.xlsx', 'Data', new_name='Q3')\nrename_sheet('a.xlsx', 'Data', 'Q3')\ndone()", kit)
    assert calls == [Call("rename_sheet", {"file": "a.xlsx", "sheet": "Data", "new_name": "Q3"}), Call("done", {})]
    assert parse_calls("delete_sheet('a.xlsx', 'Old')\nrename_sheet('a.xlsx', 'Da", kit) == [
        Call("delete_sheet", {"file": "a.xlsx", "sheet": "Old"})]  # the reply ran out of tokens mid-call
    for bad, says in [("print('hi')", "unknown tool 'print'"), ("rename_sheet('a.xlsx')", "missing sheet, new_name"),
                      ("import os", "not a call"), ("", "no call in the reply"),
                      ("change_case('a.xlsx', 'S', 'c', 'shout')", "case must be one of 'upper', 'lower', 'title'"),
                      ("rename_sheet(x, 'a', 'b')", "arguments must be literal values")]:
        with pytest.raises(ActionParseError, match=says):
            parse_calls(bad, kit)


def test_slot_values_come_from_the_request_and_the_workspace_only(tmp_path: Path) -> None:
    (tmp_path / "backup.ini").write_text("[schedule]\nretention_days = 7\ntime = 02:00\n[target]\npath = /b\n")
    (tmp_path / "other.ini").write_text("[x]\ny = 1\n")
    kit = load_toolkit("files")
    request = "Keep backups for 14 days instead of 7: retention_days in the [schedule] section of backup.ini."
    values = merge(request_values(request), workspace_values(tmp_path, kit))
    g = CallGrammar.build(kit, values)
    file, section, key, value = g.tools["set_ini_value"]
    assert file == ("'backup.ini'",)  # the request names one of the two files
    assert section == ("'schedule'",) and key == ("'retention_days'",)
    assert value is not None and "'14'" in value
    assert "set_json_value" not in g.tools and "drop_csv_column" not in g.tools  # no JSON, no CSV here
    # values an earlier error named are left out of that argument, unless nothing else is left
    avoided = CallGrammar.build(kit, values, avoid={("set_ini_value", 3): {"'14'"}, ("set_ini_value", 1): {"'schedule'"}})
    assert "'14'" not in avoided.tools["set_ini_value"][3] and avoided.tools["set_ini_value"][1] == ("'schedule'",)
    assert mentioned(["editor.fontSize", "editor.tabSize", "files.autoSave"], "Use a font size of 16") == ["editor.fontSize"]


def test_anchor_slots_are_request_words_found_in_the_document(tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    for text in ("Welcome to the fair", "Parking is behind the town hall."):
        d.add_paragraph(text)
    d.save(tmp_path / "news.docx")
    kit = load_toolkit("documents")
    values = merge(request_values("Remove the paragraph about parking from news.docx."), workspace_values(tmp_path, kit))
    (_, anchors) = CallGrammar.build(kit, values).tools["delete_paragraph"]
    assert anchors is not None and "'parking'" in anchors and all(a.strip("'").lower() in
                                                                  "parking is behind the town hall. welcome to the fair"
                                                                  for a in anchors)


def _walk(grammar: CallGrammar, tokenizer, rng: random.Random, limit: int = 200, scores_fn=None) -> str:
    """Decode greedily under the grammar's logits processor from random scores (any model's worst
    case), or from ``scores_fn()`` (a stand-in for a model's preference)."""
    import torch

    proc = grammar.logits_processor(tokenizer)
    ids = torch.tensor([[tokenizer.eos_token_id]])
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    for _ in range(limit):
        scores = torch.rand((1, len(tokenizer)), generator=gen) if scores_fn is None else scores_fn()
        tok = int(proc(ids, scores).argmax())
        if tok == tokenizer.eos_token_id:
            break
        ids = torch.cat([ids, torch.tensor([[tok]])], dim=1)
    return tokenizer.decode(ids[0, 1:])


def test_every_walk_of_the_grammar_parses_to_calls_over_the_candidates(tmp_path: Path) -> None:
    """With the embedded model's tokenizer and random scores, every decoded reply parses and each
    argument is one of the candidates the grammar offered (or text without quotes)."""
    from transformers import AutoTokenizer

    from agentlab.llm.embedded import converted_smollm2_dir

    tokenizer = AutoTokenizer.from_pretrained(converted_smollm2_dir())
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = "Airports"
    wb.active.append(["code", "city"])
    wb.active.append(["lhr", "London"])
    wb.save(tmp_path / "airports.xlsx")
    kit = load_toolkit("sheets")
    values = merge(request_values("Put the codes of airports.xlsx in upper case and sort by city."),
                   workspace_values(tmp_path, kit))
    grammar = CallGrammar.build(kit, values, max_calls=2, max_text_tokens=6)
    rng = random.Random(0)
    for _ in range(12):
        text = _walk(grammar, tokenizer, rng)
        calls = parse_calls(text, kit, max_calls=2)
        for call in calls:
            if call.name in ("done", "fail"):
                continue
            for (name, value), cands in zip(call.args.items(), grammar.tools[call.name]):
                if cands is not None:
                    assert repr(value) in cands or str(value) in cands, (text, name)
    first = CallGrammar.build(kit, values, max_calls=2, max_text_tokens=6, allow_done=False, allow_fail=False)
    for _ in range(6):  # an episode's first reply: done() or fail() may follow a call, never open the reply
        assert parse_calls(_walk(first, tokenizer, rng), kit, max_calls=2)[0].name not in ("done", "fail")
    assert "fail" in first.tools and first.lark().split("start:")[1].split("\n")[0].strip() == "normal more1"


def test_numbers_that_end_a_sentence_or_a_size_and_one_digit_values_are_offered() -> None:
    from agentlab.toolkits.slots import request_values

    assert request_values("Move the chart slide to position 3.").numbers == ["3"]
    assert request_values("Resize logo.png to 310x130 pixels").numbers == ["310", "130"]
    assert "4" in request_values("Set the editor's tab size to 4").phrases  # a setting's value, as text
    assert request_values("Keep version 1.2.3 as it is").numbers == []  # not a number, and not three
    assert request_values("Rename sheet2 to Q3").numbers == []  # digits inside words stay words


def test_numbers_as_people_write_them_and_no_made_up_number_beside_a_named_one() -> None:
    """Units written onto a number, thousands with commas and numbers in words are read from the
    request; the domain's default numbers are offered only when the request names none."""
    from agentlab.toolkits.base import Slot
    from agentlab.toolkits.slots import DEFAULT_NUMBERS, request_values, word_numbers

    said = request_values("Make the title 28pt, the margins 12px and cap the total at 1,200.")
    assert said.numbers == ["28", "12", "1200"]
    assert word_numbers("Move the chart to the third slide, add twenty-five rows and halve the size") == ["3", "25", "0.5"]
    assert word_numbers("Keep it tidy") == []
    number = Slot("number")
    assert request_values("Put the logo on the second slide").candidates(number) == ["2"]
    assert request_values("Rotate photo.png 45 degrees").candidates(number) == ["45"]
    assert request_values("Turn the photo upright").candidates(number) == list(DEFAULT_NUMBERS)
    assert request_values("Rename sheet2 to Q3, version 1.2.3").numbers == []  # digits inside words stay words


def test_a_whole_number_slot_falls_back_to_whole_defaults_when_the_request_names_only_decimals(tmp_path: Path) -> None:
    kit = load_toolkit("sheets")
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = "Data"
    wb.create_sheet("Notes")
    wb.save(tmp_path / "budget.xlsx")
    values = merge(request_values("Move the Notes sheet of budget.xlsx by 0.5"), workspace_values(tmp_path, kit))
    positions = CallGrammar.build(kit, values).tools["move_sheet"][2]
    assert positions and all(p.isdigit() for p in positions) and "0.5" not in positions


def test_an_apostrophe_neither_opens_nor_closes_a_quoted_value() -> None:
    """People write apostrophes ("the Pricing slide's title"): the quoted value after one is read
    whole, and a word's apostrophe is never taken for a quote."""
    from agentlab.toolkits.slots import request_values

    said = request_values("In pitch.pptx change the Pricing slide's title to 'Pricing (2027)'.")
    assert said.phrases[0] == "Pricing (2027)" and "s title to" not in said.phrases
    assert request_values("Don't touch it, just put 'Kind regards,' in italics").phrases[0] == "Kind regards,"


@pytest.mark.parametrize(("request_text", "urls"), [
    ("Could you make https://news.example.com/start? the home page", ["https://news.example.com/start"]),
    ("Open https://a.example.org/!", ["https://a.example.org/"]),
    ("Save the snapshots to ~/Pictures/vlc please.", ["~/Pictures/vlc"]),
    ("Downloads go to ~/Downloads, backups to /mnt/data/in.", ["/mnt/data/in", "~/Downloads"]),
    ("Replies should go to sam.porter@example.org from now on.", ["sam.porter@example.org"]),
])
def test_addresses_and_home_paths_are_offered_as_written(request_text: str, urls: list[str]) -> None:
    """A question's "?" is not part of the address it ends, a home path keeps its "~", the
    path part of an address is not offered as a path of its own, and an e-mail address is whole
    and names no file."""
    said = request_values(request_text)
    assert said.urls == urls and not any("@" in u or u.endswith("example.org") for u in said.mentioned_files)
    assert not any(p in ("sam.porter", "sam porter", "example.org") for p in said.phrases)  # an address is one value


def test_file_tools_over_many_files_and_lines(in_tmp: Path) -> None:
    """The files toolkit's tools for "every file of a kind in a folder" and "take it off the list":
    a pattern matches any case of the extension and only the folder's own files, nothing outside
    the workspace, and a pattern or a line that matches nothing is an error, never a silent no-op."""
    from agentlab.toolkits import files as F
    from agentlab.toolkits.base import ToolError

    for rel in ("downloads/a.pdf", "downloads/B.PDF", "downloads/x.tmp", "downloads/old/c.pdf", "top.pdf"):
        Path(rel).parent.mkdir(parents=True, exist_ok=True)
        Path(rel).write_text(rel)
    Path("todo.txt").write_text("call the Plumber\nbuy milk\n")
    assert F.remove_lines("todo.txt", "plumber") == "removed 1 line(s) of todo.txt"
    assert Path("todo.txt").read_text() == "buy milk\n"
    with pytest.raises(ToolError, match="no line"):
        F.remove_lines("todo.txt", "plumber")
    F.move_matching("downloads/*.pdf", "downloads/pdfs")
    assert sorted(p.name for p in Path("downloads/pdfs").iterdir()) == ["B.PDF", "a.pdf"]
    assert Path("downloads/old/c.pdf").is_file() and Path("top.pdf").is_file()  # not in the folder itself
    F.delete_matching("downloads/*.tmp")
    assert not Path("downloads/x.tmp").exists()
    F.add_prefix("downloads/pdfs/*.pdf", "2026_")
    assert sorted(p.name for p in Path("downloads/pdfs").iterdir()) == ["2026_B.PDF", "2026_a.pdf"]
    for bad in ("downloads/*.tmp", "../*.pdf", "/etc/*.conf", "nowhere/*.pdf"):
        with pytest.raises(ToolError):
            F.delete_matching(bad)
    with pytest.raises(ToolError):
        F.add_prefix("*.pdf", "a/b")
    # a file would land on one that exists: refused before anything moves, nothing lost
    Path("keep").mkdir()
    Path("keep/top.pdf").write_text("older")
    Path("x.pdf").write_text("x")
    with pytest.raises(ToolError, match="already exist"):
        F.move_matching("*.pdf", "keep")
    assert Path("top.pdf").is_file() and Path("x.pdf").is_file() and Path("keep/top.pdf").read_text() == "older"
    Path("2026_x.pdf").write_text("mine")
    with pytest.raises(ToolError, match="already exist"):
        F.add_prefix("*.pdf", "2026_")
    assert Path("x.pdf").read_text() == "x" and Path("2026_x.pdf").read_text() == "mine"


def test_pattern_slots_offer_the_kinds_and_folders_the_request_names(tmp_path: Path) -> None:
    """A pattern is offered only for a kind of file the request names as a kind, narrowed to the
    folders it names."""
    from agentlab.toolkits import load_toolkit
    from agentlab.toolkits.base import Slot
    from agentlab.toolkits.slots import merge, request_values, workspace_values

    for rel in ("downloads/a.pdf", "downloads/x.tmp", "holiday/beach.jpg", "holiday/list.txt", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    kit = load_toolkit("files")

    def offered(request: str) -> list[str] | None:
        return merge(request_values(request), workspace_values(tmp_path, kit)).candidates(Slot("pattern"))

    assert offered("Put all the PDFs into a folder called pdfs inside downloads") == ["'downloads/*.pdf'"]
    assert offered("Add 2026_ in front of the .jpg photos in the holiday folder") == ["'holiday/*.jpg'"]
    assert offered("Delete the .txt files, the ones in holiday") == ["'holiday/*.txt'"]  # the folder narrows
    assert offered("Move the txt files somewhere") == ["'holiday/*.txt'", "'*.txt'"]
    # no kind of file named (an extension inside a file name is not one): no pattern, so a tool
    # over every file of a kind cannot be called ("delete every .txt" for a setting in notes.txt)
    assert offered("Tidy up") == [] and offered("Keep backups for 14 days in notes.txt") == []
    assert request_values("Put them in a new folder called pdfs inside downloads").folders == ["downloads/pdfs"]
    assert request_values("Make a new folder called drafts, then move it into the archive folder").folders == ["archive", "drafts"]


def test_a_text_that_picks_messages_is_found_in_their_headers_and_all_only_when_asked(tmp_path: Path) -> None:
    """A mail tool's ``match`` slot: the request's words that a message's subject, sender or
    recipient holds; ``*`` (every message) only when the request says all or every, so "get rid
    of it" cannot delete the whole inbox; a request naming nothing found falls back to its words."""
    from agentlab.toolkits.base import Slot

    box = tmp_path / "Mail" / "Local Folders" / "Inbox"
    box.parent.mkdir(parents=True)
    box.write_text("From - Mon\nFrom: Jonas Weber <jonas@example.org>\nSubject: Contract renewal\n\nhi\n\n"
                   "From - Tue\nFrom: shop@example.com\nSubject: You won a gift card!!!\n\nwin\n")
    kit = load_toolkit("mail")

    def offered(request: str) -> list[str] | None:
        return merge(request_values(request), workspace_values(tmp_path, kit)).candidates(Slot("match"))

    spam = offered("There's a spam mail, the 'You won a gift card!!!' one. Please get rid of it.")
    assert spam[0] == "'You won a gift card!!!'" and "'*'" not in spam, spam
    jonas = offered("Mark everything from Jonas Weber as read")
    assert "'Jonas Weber'" in jonas and "'*'" in jonas and "'read'" not in jonas, jonas
    assert "'*'" in offered("Tidy the inbox up")  # nothing found: the request's words and every message


def test_a_file_name_or_an_address_is_never_cut_into_value_words() -> None:
    """'server json' is not a value the request gives (it is the file server.json): the words and
    pairs of words offered as values skip file names and addresses."""
    said = request_values("Change the port in server.json to 8081, and open https://example.com/a.b today").phrases
    assert "8081" in said and "port" in said and "today" in said
    assert not {"server json", "server", "json", "https", "a.b", "example"} & set(said), said


def test_mirror_and_vertical_flip_move_the_pixels(in_tmp: Path) -> None:
    from PIL import Image

    im = Image.new("RGB", (4, 2), (0, 0, 0))
    im.putpixel((0, 0), (255, 0, 0))
    im.save("logo.png")
    kit = load_toolkit("images")
    kit.tools["mirror"].fn("logo.png", "m.png")
    kit.tools["flip_vertical"].fn("logo.png", "v.png")
    assert Image.open("m.png").convert("RGB").getpixel((3, 0)) == (255, 0, 0)
    assert Image.open("v.png").convert("RGB").getpixel((0, 1)) == (255, 0, 0)
    assert Image.open("logo.png").convert("RGB").getpixel((0, 0)) == (255, 0, 0)  # a new file: the original kept


def test_clockwise_rotation_and_inversion_move_the_pixels(in_tmp: Path) -> None:
    """rotate_clockwise turns to the right (rotate's 270), invert makes a negative and keeps alpha."""
    from PIL import Image

    im = Image.new("RGBA", (4, 2), (0, 0, 0, 255))
    im.putpixel((0, 0), (255, 0, 0, 128))
    im.save("scan.png")
    kit = load_toolkit("images")
    kit.tools["rotate_clockwise"].fn("scan.png", 90, "cw.png")
    kit.tools["rotate"].fn("scan.png", 270, "ccw270.png")
    kit.tools["rotate"].fn("scan.png", 90, "ccw90.png")
    cw = Image.open("cw.png")
    assert cw.size == (2, 4) and cw.getpixel((1, 0))[:3] == (255, 0, 0)  # top-left goes to top-right
    assert list(cw.getdata()) == list(Image.open("ccw270.png").getdata())
    assert list(cw.getdata()) != list(Image.open("ccw90.png").getdata())
    kit.tools["invert"].fn("scan.png", "neg.png")
    neg = Image.open("neg.png")
    assert neg.mode == "RGBA" and neg.getpixel((0, 0)) == (0, 255, 255, 128) and neg.getpixel((1, 1)) == (255, 255, 255, 255)
    with pytest.raises(ToolError):
        kit.tools["rotate_clockwise"].fn("scan.png", 45, "bad.png")


def test_a_file_the_request_names_in_another_case_is_the_one_offered(tmp_path: Path) -> None:
    """A mail folder is the file ``Inbox`` and people write "the inbox": named as a whole word in
    any case, it is the candidate; a name inside another word ("Invoices" in "invoicesx") is not."""
    from agentlab.toolkits.base import Slot
    from agentlab.toolkits.slots import merge, request_values, workspace_values

    box = tmp_path / "Mail" / "Local Folders"
    box.mkdir(parents=True)
    for name in ("Inbox", "Invoices", "Trash"):
        (box / name).write_text("")
    kit = load_toolkit("mail")
    slot = Slot("file")

    def offered(request: str) -> list[str]:
        return merge(request_values(request), workspace_values(tmp_path, kit)).candidates(slot) or []

    assert offered("Star the message 'Invoice 4471' in the Local Folders inbox.") == ["'Mail/Local Folders/Inbox'"]
    assert set(offered("Move 'Invoice 4471' from the inbox into the 'Invoices' folder.")) == {
        "'Mail/Local Folders/Inbox'", "'Mail/Local Folders/Invoices'"}
    assert len(offered("Tidy up my mail")) == 3  # none named: every folder


def test_a_slot_that_names_its_files_offers_them_before_others_of_their_kind(tmp_path: Path) -> None:
    """VLC writes vlc-qt-interface.conf beside vlcrc: the media toolkit's settings slot (.ini,
    .conf or a file named vlcrc) offers vlcrc alone when it is there, the .conf files otherwise."""
    from agentlab.toolkits.slots import merge, request_values, workspace_values

    conf = tmp_path / "vlc-config" / "vlc"
    conf.mkdir(parents=True)
    (conf / "vlc-qt-interface.conf").write_text("[MainWindow]\nplaylist-visible=false\n")
    kit = load_toolkit("media")
    slot = kit.tools["set_option"].params[0].slot

    def offered() -> list[str]:
        return merge(request_values("Turn on VLC's dark palette"), workspace_values(tmp_path, kit)).candidates(slot) or []

    assert offered() == ["'vlc-config/vlc/vlc-qt-interface.conf'"]
    (conf / "vlcrc").write_text("[qt]\n#qt-dark-palette=0\n")
    assert offered() == ["'vlc-config/vlc/vlcrc'"]
