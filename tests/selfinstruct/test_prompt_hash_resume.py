"""The shipped self-instruct journal (12-character prompt hash) still resumes with full hashes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentlab.dialogue.templates import load_template
from agentlab.errors import CheckpointError
from agentlab.paths import data_dir
from agentlab.selfinstruct.store import Journal


def _shipped(tmp_path: Path) -> Journal:
    """The shipped journal as the 12-character-hash run left it: up to its first ``revision``
    (later lines continue it under a revised prompt and bands, see docs/selfinstruct.md)."""
    lines = (data_dir() / "demos" / "journal.jsonl").read_text().splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if '"type": "revision"' in line), len(lines))
    (tmp_path / "journal.jsonl").write_text("".join(lines[:cut]))
    return Journal(tmp_path)


def test_shipped_journal_recorded_the_shipped_template(tmp_path: Path) -> None:
    head = _shipped(tmp_path).header()
    assert head is not None and len(head["prompt_sha"]) == 12
    style = yaml.safe_load((data_dir() / "demos" / "selfinstruct.yaml").read_text())["prompt_style"]
    assert head["prompt_style"] == style
    assert load_template(f"selfinstruct/{style}").matches(head["prompt_sha"])


def test_shipped_journal_resumes_with_the_full_hash(tmp_path: Path) -> None:
    journal = _shipped(tmp_path)
    head = journal.header()
    assert head is not None
    before = (tmp_path / "journal.jsonl").read_bytes()
    state = journal.state()
    run = {k: v for k, v in head.items() if k != "type"}
    full = load_template(f"selfinstruct/{head['prompt_style']}").sha256
    journal.start({**run, "prompt_sha": full}, fresh=False)
    assert (tmp_path / "journal.jsonl").read_bytes() == before  # accepted as is, nothing rewritten
    assert journal.state().keys() == state.keys()
    with pytest.raises(CheckpointError, match="different prompt_sha"):
        journal.start({**run, "prompt_sha": "0" * 64}, fresh=False)
    with pytest.raises(CheckpointError, match="different prompt_sha"):
        journal.start({**run, "prompt_sha": full[:11] + "0"}, fresh=False)
