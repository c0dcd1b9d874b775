"""Pool documents name their runner: parsing, ``pool validate``, and enrolling a new runner."""

from __future__ import annotations

from pathlib import Path


from agentlab.agents import base as agents_base
from agentlab.run.episode import ExecOptions, run_task
from agentlab.toolkits import TOOLKITS
from agentlab.pool import AgentPool, parse_document

DOC = """---
name: TestAgent
platform: desktop
interface: CLI
modality: single
base_model: open
domain: calc
supports_extension: false
runner: {runner}
runner_options:
  libraries: [openpyxl]
---
# Applications
Terminal, openpyxl

# Capabilities
Edits spreadsheets in code.

# Limitations
Cannot use the GUI.

# Demonstrations
1. Sum column B of sales.xlsx into B101.
"""


def test_runner_fields_are_parsed_and_checked() -> None:
    doc, problems = parse_document(DOC.format(runner="code"), "x.md")
    assert not problems and doc is not None
    assert (doc.runner, doc.runner_options, doc.runner_line) == ("code", {"libraries": ["openpyxl"]}, 9)
    assert "runner" not in doc.extra and "runner_options" not in doc.extra
    _, problems = parse_document(DOC.format(runner="[1, 2]"), "x.md")
    assert problems == ["x.md:9: runner '[1, 2]' must be a runner name such as code, appagent or gui"]
    _, problems = parse_document(DOC.format(runner="code").replace("  libraries: [openpyxl]\n", "").replace(
        "runner_options:\n", "runner_options: 3\n"), "x.md")
    assert problems == ["x.md:10: runner_options must be a mapping of 'key: value' lines"]


def test_shipped_pool_names_a_registered_runner_everywhere() -> None:
    pool = AgentPool.from_dir(None)
    by_runner = {r: sorted(a.name for a in pool.agents if a.runner == r) for r in ("code", "tools", "gui", "appagent")}
    assert {r: len(v) for r, v in by_runner.items()} == {"code": 5, "tools": 10, "gui": 10, "appagent": 10}
    assert all((a.runner in ("code", "tools")) == (a.interface == "CLI") for a in pool.agents)
    # every tools specialist names its toolkit, and says so where routers and readers look
    assert all(a.runner_options.get("toolkit") in TOOLKITS and "toolkit" in a.capabilities.lower()
               for a in pool.agents if a.runner == "tools")
    assert agents_base.runner_problems(pool.agents) == []


def test_pool_validate_rejects_an_unknown_runner(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    (tmp_path / "TestAgent.md").write_text(DOC.format(runner="telepathy"))
    _mount()
    res = CliRunner().invoke(app, ["pool", "validate", str(tmp_path)])
    assert res.exit_code == 2
    assert f"{tmp_path / 'TestAgent.md'}:9: unknown runner 'telepathy'; known: code, tools, appagent, gui" in res.output


def test_a_new_runner_needs_only_its_registry_line(tmp_path, monkeypatch, scripted, task, solution) -> None:
    monkeypatch.setitem(agents_base.AGENTS, "coder2", "agentlab.agents.code:CodeAgent")
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "TestAgent.md").write_text(DOC.format(runner="coder2"))
    pool = AgentPool.from_dir(folder)
    llm = scripted([f"```python\n{solution}```\nDONE"])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "run", options=ExecOptions())
    assert (row["agents"], row["success"], row["error"]) == (["TestAgent"], True, None)


def test_a_document_without_runner_is_a_harness_error(tmp_path, scripted, task) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    text = DOC.format(runner="code").replace("runner: code\n", "")
    (folder / "TestAgent.md").write_text(text)
    pool = AgentPool.from_dir(folder)
    row = run_task(task, pool=pool, llm=scripted([]), out_dir=tmp_path / "run", options=ExecOptions())
    assert row["success"] is False and "agent TestAgent has no runner" in row["error"]
