"""Agent documents: parsing, every validation message, the shipped 30-agent pool, enrolment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlab.errors import AgentDocumentError, UnknownAgentError
from agentlab.pool import AgentPool, DOMAINS, load_document, parse_document, validate_dir

GOOD = """---
name: TestAgent
platform: desktop
interface: CLI
modality: single
base_model: open
domain: calc
supports_extension: false
---
# Applications
Terminal, openpyxl

# Capabilities
Edits spreadsheets in code.

# Limitations
Cannot use the GUI.

# Demonstrations
1. Sum column B of sales.xlsx into B101.
2. Sort data.xlsx by the Date column. ![state](shot.png)
"""


def write(tmp_path: Path, text: str, name: str = "TestAgent.md") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_good_document_parses_into_typed_record(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(b"\x89PNG")
    doc = load_document(write(tmp_path, GOOD))
    assert doc.name == "TestAgent" and doc.interface == "CLI" and doc.domain == "calc"
    assert doc.supports_extension is False
    assert [d.text for d in doc.demonstrations] == [
        "Sum column B of sales.xlsx into B101.",
        "Sort data.xlsx by the Date column.",
    ]
    assert doc.demonstrations[1].image == tmp_path / "shot.png"
    assert doc.demonstrations[0].line == 20
    assert "Cannot use the GUI." in doc.description and "TestAgent" in doc.render()


@pytest.mark.parametrize(
    ("mutate", "line", "message"),
    [
        (lambda t: t.replace("---\nname", "name", 1), 1, "missing YAML front matter"),
        (lambda t: t.replace("domain: calc", "domain: spreadsheets"), 7, "unknown domain 'spreadsheets' for platform desktop"),
        (lambda t: t.replace("interface: CLI", "interface: TUI"), 4, "interface 'TUI' is not one of CLI, GUI"),
        (lambda t: t.replace("modality: single\n", ""), 8, "lacks required field 'modality'"),
        (lambda t: t.replace("Edits spreadsheets in code.", ""), 13, "section '# Capabilities' is empty"),
        (lambda t: t.replace("# Limitations\nCannot use the GUI.\n", ""), 19, "missing section '# Limitations'"),
        (lambda t: t.replace("2. Sort", "3. Sort"), 21, "demonstration numbered 3, expected 2"),
        (lambda t: t.replace("1. Sum column B of sales.xlsx into B101.", "Sum column B"), 20, "must be a numbered item"),
        (lambda t: t.replace("supports_extension: false", "supports_extension: maybe"), 8, "supports_extension must be true or false"),
        (lambda t: t.replace("name: TestAgent", "name: Test Agent!"), 2, "must be an identifier"),
        (lambda t: t.replace("# Capabilities", "# Abilities"), 13, "unknown section '# Abilities'"),
    ],
)
def test_each_broken_document_gets_its_own_message(tmp_path: Path, mutate, line: int, message: str) -> None:
    path = write(tmp_path, mutate(GOOD))
    _, problems = parse_document(path.read_text(), path)
    assert problems, "expected a problem"
    assert any(p.startswith(f"{path}:{line}: ") and message in p for p in problems), problems


def test_missing_image_and_no_demonstrations(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)  # shot.png absent
    _, problems = parse_document(path.read_text(), path)
    assert any(":21: demonstration image not found" in p for p in problems)
    text = GOOD.split("# Demonstrations")[0] + "# Demonstrations\n\n"
    _, problems = parse_document(text, path)
    assert any("section '# Demonstrations' is empty" in p for p in problems)


def test_load_document_raises_with_every_problem(tmp_path: Path) -> None:
    bad = GOOD.replace("domain: calc", "domain: nowhere").replace("interface: CLI", "interface: X")
    bad = bad.replace(" ![state](shot.png)", "")
    with pytest.raises(AgentDocumentError) as info:
        load_document(write(tmp_path, bad))
    assert len(info.value.problems) == 2
    assert "and 1 more problem" in str(info.value)


def test_shipped_pool_has_the_paper_agents_and_the_two_architectures(pool: AgentPool) -> None:
    # the paper's 20 desktop + 10 mobile agents, plus Agent S2 and PC-Agent (issue #14), FileAgent (#24)
    # the browser, mail and media-player profile specialists and the data specialist (#38)
    assert len(pool) == 37
    assert len(pool.filter(platform="desktop")) == 27 and len(pool.filter(platform="mobile")) == 10
    expected = {
        "OSAgent": "os", "Friday": "os", "FileAgent": "os", "SheetAgent": "calc", "CalcAgent": "calc", "SlideAgent": "impress",
        "ImpressAgent": "impress", "WordAgent": "writer", "WriterAgent": "writer", "VLCAgent": "vlc",
        "MailAgent": "thunderbird", "ChromeAgent": "chrome", "WebAgent": "chrome", "VSAgent": "vscode",
        "VSGUIAgent": "vscode", "GimpAgent": "gimp", "ImageAgent": "gimp", "Searcher": "general",
        "GoogleDrive": "general", "CoderAgent": "general", "VisionAgent": "general", "AppAgent": "mobile",
        "MapsAgent": "maps", "XAgent": "x", "TelegramAgent": "telegram", "TemuAgent": "temu",
        "YouTubeAgent": "youtube", "SpotifyAgent": "spotify", "YelpAgent": "yelp", "GmailAgent": "gmail",
        "ClockAgent": "clock", "AgentS2": "general", "PCAgent": "general",
        "BrowserAgent": "chrome", "MailboxAgent": "thunderbird", "MediaAgent": "vlc", "DataAgent": "general",
    }
    assert {a.name: a.domain for a in pool} == expected
    assert all(len(a.demonstrations) >= 10 for a in pool)
    for a in pool:
        assert a.domain in DOMAINS[a.platform]


def test_cli_gui_pairs_are_told_apart_by_limitations(pool: AgentPool) -> None:
    for cli, gui in [("SheetAgent", "CalcAgent"), ("WordAgent", "WriterAgent"), ("SlideAgent", "ImpressAgent"),
                     ("VSAgent", "VSGUIAgent"), ("ImageAgent", "GimpAgent")]:
        assert pool.get(cli).interface == "CLI" and pool.get(gui).interface == "GUI"
        assert pool.get(cli).limitations != pool.get(gui).limitations
        assert any(w in pool.get(cli).limitations for w in ("GUI", "window", "interface", "click"))


def test_unknown_agent_suggests_close_names(pool: AgentPool) -> None:
    with pytest.raises(UnknownAgentError, match="did you mean SheetAgent"):
        pool.get("SheetAgnet")


def test_duplicate_names_in_a_folder_are_reported(tmp_path: Path) -> None:
    (tmp_path / "desktop").mkdir()
    write(tmp_path / "desktop", GOOD.replace("![state](shot.png)", ""), "A.md")
    write(tmp_path / "desktop", GOOD.replace("![state](shot.png)", ""), "B.md")
    docs, problems = validate_dir(tmp_path)
    assert len(docs) == 1
    assert any("duplicate agent name 'TestAgent'" in p for p in problems)


def test_enroll_adds_then_refuses_duplicate(tmp_path: Path, pool: AgentPool) -> None:
    root = tmp_path / "agents"
    (root / "desktop").mkdir(parents=True)
    for a in list(pool)[:2]:
        (root / a.platform).mkdir(exist_ok=True)
        (root / a.platform / f"{a.name}.md").write_text(a.path.read_text())
    local = AgentPool.from_dir(root)
    new = write(tmp_path, GOOD.replace(" ![state](shot.png)", ""))
    doc = local.enroll(new)
    assert (root / "desktop" / "TestAgent.md").is_file() and doc.name in local
    assert len(AgentPool.from_dir(root)) == 3
    with pytest.raises(AgentDocumentError, match="already enrolled"):
        AgentPool.from_dir(root).enroll(new)


def test_pool_cli_validate_list_enroll(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    runner = CliRunner()
    res = runner.invoke(app, ["pool", "validate"])
    assert res.exit_code == 0 and "37 agents" in res.output
    res = runner.invoke(app, ["pool", "list", "--json"])
    rows = json.loads(res.output)
    assert len(rows) == 37 and {"name", "platform", "interface", "domain"} <= set(rows[0])
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    write(bad_dir, GOOD.replace("domain: calc", "domain: nope"))
    res = runner.invoke(app, ["pool", "validate", str(bad_dir)])
    assert res.exit_code == 2
    assert f"{bad_dir / 'TestAgent.md'}:7: unknown domain 'nope'" in res.output


def test_console_script_exit_codes(tmp_path: Path) -> None:
    """The real entry point (not CliRunner) must propagate typer.Exit codes."""
    import subprocess
    import sys

    bad = tmp_path / "bad"
    bad.mkdir()
    write(bad, GOOD.replace("domain: calc", "domain: nope"))
    cmd = [sys.executable, "-c", "from agentlab.cli import main; main()", "pool", "validate"]
    res = subprocess.run(cmd + [str(bad)], capture_output=True, text=True)
    assert res.returncode == 2 and "unknown domain 'nope'" in res.stderr
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-c", "from agentlab.cli import main; main()", "pool", "list", "--dir", str(bad)],
                         capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.startswith("error: ") and "Traceback" not in res.stderr
