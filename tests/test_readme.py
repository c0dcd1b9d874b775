"""The README is a front door, and a front door that stops opening is a bug (issue #39).

* The four journeys: every ```bash block preceded by ``<!-- journey -->`` is run, in order, in one
  temporary folder laid out like the repository root, with the real CLI and the embedded model,
  so a journey that stops chaining (a command renamed, an option lost, a checkpoint a later
  command cannot take) fails here. Only the sizes shrink, by rewriting the extracted commands
  (:data:`SMALLER` and :data:`EXTRA`): the self-instruct target drops to one demonstration past the
  document's ten, in one small round, and an episode gets one step with replies of 16 tokens.
  The data the journeys read is the repository's (``AGENTLAB_DATA`` points at a copy: the agent
  documents are copied because enrolling writes there; prompts, tokens and the rest are linked;
  ``data/tasks`` holds only the task files the journeys name).
* The README stays small (≤ 12 KB), every relative link in it, in ``docs/index.md`` and in every
  other page under ``docs/`` resolves (files and ``#anchors``), ``docs/index.md`` lists every page under ``docs/``, and the README's
  layout table lists exactly the units of ``agentlab/`` on the floors ``docs/architecture.md``
  gives them (which ``tests/test_architecture.py`` holds the code to).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
INDEX = ROOT / "docs" / "index.md"
MAX_README_BYTES = 12 * 1024

#: option -> the value the test runs it with (the README's own value is what a person runs)
SMALLER = {"--per-agent": "11", "--max-steps": "1"}
#: command -> options appended to it in the test: one small self-instruct round, short replies
EXTRA = {
    "agentlab selfinstruct": "--max-rounds 1 --config {tiny_selfinstruct} --no-progress",
    "agentlab exec": "--max-new-tokens 16",
}
TINY_SELFINSTRUCT = "prompts_per_round: 1\nsequences_per_prompt: 2\nmax_new_tokens: 48\n"


def journey_blocks(text: str) -> list[str]:
    """The ```bash blocks marked ``<!-- journey -->``, in the README's order."""
    return [m.group(1) for m in re.finditer(r"<!-- journey -->\s*\n```bash\n(.*?)\n```", text, re.S)]


def shrink(block: str, extra: dict[str, str]) -> str:
    """``block`` with its continuation lines joined, :data:`SMALLER` values swapped in and
    :data:`EXTRA` options appended to the commands they name (a heredoc's body has neither)."""
    block = re.sub(r"[ \t]*\\\n\s*", " ", block)
    for option, value in SMALLER.items():
        block = re.sub(rf"(?<=\s){re.escape(option)} \S+", f"{option} {value}", block)
    lines = []
    for line in block.splitlines():
        for command, options in extra.items():
            if line.startswith(command + " "):
                code, sep, comment = line.partition("  #")
                line = f"{code.rstrip()} {options}" + (f"  #{comment}" if sep else "")
        lines.append(line)
    return "\n".join(lines) + "\n"


def _checkout(tmp: Path, blocks: list[str]) -> dict[str, str]:
    """A folder laid out like the repository root for the journeys, and the environment to run them in."""
    data = tmp / "data"
    data.mkdir()
    for item in (ROOT / "data").iterdir():
        if item.name == "agents":
            shutil.copytree(item, data / "agents")
        elif item.name not in ("tasks", "demos"):
            (data / item.name).symlink_to(item)
    (data / "demos").mkdir()
    (data / "demos" / "thresholds.json").symlink_to(ROOT / "data" / "demos" / "thresholds.json")
    (data / "tasks").mkdir()
    for name in sorted(set(re.findall(r"data/tasks/([\w.-]+\.json)", "\n".join(blocks)))):
        shutil.copy(ROOT / "data" / "tasks" / name, data / "tasks" / name)
    shim = tmp / "bin" / "agentlab"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentlab.cli "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ)
    env.update(PATH=f"{shim.parent}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               AGENTLAB_DATA=str(data), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", COLUMNS="120")
    return env


def test_the_journeys_chain(tmp_path: Path) -> None:
    blocks = journey_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 5, "the README marks its journeys' blocks with <!-- journey --> before ```bash"
    env = _checkout(tmp_path, blocks)
    tiny = tmp_path / "tiny-selfinstruct.yaml"
    tiny.write_text(TINY_SELFINSTRUCT, encoding="utf-8")
    extra = {command: options.format(tiny_selfinstruct=tiny) for command, options in EXTRA.items()}
    for i, block in enumerate(blocks, start=1):
        script = shrink(block, extra)
        start = time.monotonic()
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, (f"journey block {i} stopped (exit {proc.returncode}):\n{script}\n"
                                      f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
        log.info("journey block %d: %.1f s", i, time.monotonic() - start)
    # What chaining means: each step took the previous one's output.
    assert (tmp_path / "data" / "agents" / "desktop" / "MyAgent.md").is_file()
    assert (tmp_path / "runs" / "demos-myagent" / "thresholds.json").is_file()
    tokens = json.loads((tmp_path / "runs" / "tokens" / "with-myagent" / "tokens.json").read_text(encoding="utf-8"))
    assert "MyAgent" in tokens["agents"]
    # the store's hybrid settings travel with the new token (`agentlab train --add`)
    assert (tmp_path / "runs" / "tokens" / "with-myagent" / "hybrid.json").is_file()
    preds = [json.loads(line) for line in (tmp_path / "runs" / "my-pred.jsonl").read_text(encoding="utf-8").splitlines()]
    assert preds and all(p["agent"] for p in preds)
    # the new token was routed with: without --tokens MyAgent has no row and is never ranked
    assert all("MyAgent" in {name for name, _ in p["ranking"]} for p in preds if p["id"] != "alarm")
    rows = [json.loads(line) for line in (tmp_path / "runs" / "exec-myagent" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["router"] == "hybrid" for r in rows)
    assert "with-myagent" in (tmp_path / "runs" / "exec-myagent" / "manifest.json").read_text(encoding="utf-8")
    assert (tmp_path / "runs" / "exec-myagent" / "view" / "index.html").is_file()
    assert (tmp_path / "runs" / "exec-myagent" / "report.md").is_file()


def test_shrink_rewrites_sizes_and_appends_options_only_to_their_command() -> None:
    block = ("agentlab exec --tasks t.json --router hybrid \\\n  --max-steps 5 --out runs/x   # a comment\n"
             "agentlab selfinstruct --agents A --per-agent 30\nagentlab execute-not --max-steps 9")
    out = shrink(block, {"agentlab exec": "--max-new-tokens 16"})
    assert out.splitlines()[0] == "agentlab exec --tasks t.json --router hybrid --max-steps 1 --out runs/x --max-new-tokens 16  # a comment"
    assert "--per-agent 11" in out and "--max-new-tokens" not in out.splitlines()[2]


def test_readme_is_at_most_12_kb() -> None:
    size = len(README.read_bytes())
    assert size <= MAX_README_BYTES, f"README.md is {size} bytes; move a section into docs/ (limit {MAX_README_BYTES})"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def broken_links(path: Path) -> list[str]:
    """Relative links of ``path`` (Markdown links and images, outside code) whose file or anchor is missing."""
    text = re.sub(r"```.*?```|`[^`\n]*`", "", path.read_text(encoding="utf-8"), flags=re.S)
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s):, mailto: -- not ours to resolve offline
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            out.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            out.append(f"{target}: no heading with that anchor in {dest.name}")
    return out


DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_every_relative_link_resolves(doc: Path) -> None:
    """README.md, docs/index.md and every page they lead to (sections moved out of the README keep their links)."""
    assert broken_links(doc) == []


def test_broken_links_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title here\n[ok](#title-here) [gone](b.md) [bad](a.md#nope) `[code](x.md)`\n")
    assert broken_links(tmp_path / "a.md") == ["b.md: no such file", "a.md#nope: no heading with that anchor in a.md"]


def test_docs_index_lists_every_page() -> None:
    listed = {(INDEX.parent / t).resolve() for t in re.findall(r"\]\(([^)#\s]+\.md)\)", INDEX.read_text(encoding="utf-8"))}
    pages = {p.resolve() for p in (ROOT / "docs").rglob("*.md") if p != INDEX}
    missing = sorted(str(p.relative_to(ROOT)) for p in pages - listed)
    assert not missing, f"docs/index.md does not list: {missing} (one line each)"


def _readme_layout() -> dict[str, int]:
    text = README.read_text(encoding="utf-8").split("<!-- layout -->", 1)[1]
    out: dict[str, int] = {}
    for floor, units in re.findall(r"^\| (\d+) \| ([^|]+) \|", text, re.M):
        for unit in units.split(","):
            out[unit.strip()] = int(floor)
    return out


def test_readme_layout_lists_every_unit_on_its_floor() -> None:
    from tests.test_architecture import UNITS, _floors

    floors, layout = _floors(), _readme_layout()
    expected = "\n".join(f"| {n} | {', '.join(u for u, f in floors.items() if f == n)} | ... |"
                         for n in sorted(set(floors.values()), reverse=True))
    assert sorted(layout) == UNITS, f"the README's layout table must list exactly agentlab/'s units; its rows:\n{expected}"
    assert layout == floors, f"the README's layout table must put each unit on its floor (docs/architecture.md):\n{expected}"
