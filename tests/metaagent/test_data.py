"""Training-set loading: seeds from documents, generated rows from a datasets folder, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.errors import DataError
from agentlab.metaagent.data import load_training_set


def _dataset(tmp_path: Path, rows: list[dict]) -> Path:
    from datasets import Dataset

    path = tmp_path / "demos"
    Dataset.from_list(rows).save_to_disk(str(path))
    return path


def test_seed_only_matches_documents(pool) -> None:
    ts = load_training_set(pool, source="seed")
    assert ts.agents == pool.names
    assert len(ts) == sum(len(a.demonstrations) for a in pool)
    assert ts.texts[0] == pool.agents[0].demonstrations[0].text
    assert {ts.domains[i] == pool.agents[y].domain for i, y in enumerate(ts.labels)} == {True}


def test_generated_rows_and_per_agent_is_deterministic(tmp_path: Path, pool) -> None:
    sub = pool.subset(["SheetAgent", "MailAgent"])
    rows = [{"agent": "SheetAgent", "domain": "calc", "text": f"gen sheet {i}", "source": "generated", "round": 1} for i in range(20)]
    rows += [{"agent": "Ghost", "domain": "calc", "text": "x", "source": "generated", "round": 1}]
    path = _dataset(tmp_path, rows)
    a = load_training_set(sub, path, per_agent=15, seed=3)
    b = load_training_set(sub, path, per_agent=15, seed=3)
    assert a.texts == b.texts
    counts = a.counts()
    assert counts["SheetAgent"] == 15 and counts["MailAgent"] == len(pool.get("MailAgent").demonstrations[:15])
    sheet = a.only("SheetAgent").texts
    seeds = [d.text for d in pool.get("SheetAgent").demonstrations]
    assert sheet[: len(seeds)] == seeds  # seeds first
    with pytest.raises(DataError, match="MailAgent"):
        load_training_set(sub, path, source="generated")


def test_bad_dataset_folder_is_one_line(tmp_path: Path, pool) -> None:
    (tmp_path / "nope").mkdir()
    with pytest.raises(DataError, match="nope"):
        load_training_set(pool, tmp_path / "nope")
