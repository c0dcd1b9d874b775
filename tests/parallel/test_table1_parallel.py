"""Table 1 on Ray workers: every arm's rows are the serial run's, timings aside.

The model is a loopback OpenAI-compatible endpoint whose reply depends only on the request (the
task's reference program), so any worker, in any order, gets the same answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlab.experiments import table1 as t1
from agentlab.llm import LLMConfig
from agentlab.llm.roles import ModelsFile
from agentlab.parallel import Scale
from agentlab.run.episode import comparable_row


@pytest.fixture(scope="module")
def config() -> t1.Table1Config:
    return t1.Table1Config(sets=["dev2"], arms=["gt", "embedding", "generalist-s2"], per_set=3, envs=["workspace"],
                           max_steps=2, max_new_tokens=64)


@pytest.fixture(scope="module")
def endpoint(config):  # type: ignore[no-untyped-def]
    from agentlab.llm.testing import LoopbackChatServer

    tasks = t1.set_tasks("dev2", config)
    answers = {t.instruction: f"```{t.reference_solution.language}\n{t.reference_solution.code.rstrip()}\n```\nDONE"
               for t in tasks[:2] if t.reference_solution is not None}

    def reply(body: dict, k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        return next((a for q, a in answers.items() if q in text), "FAIL")

    with LoopbackChatServer(reply) as srv:
        yield LLMConfig(kind="openai", base_url=srv.url, model="loopback-coder")


def _rows(table: t1.Table1, out: Path) -> dict[str, list[dict]]:
    """Every arm's rows without timings, the run folder's own path (in a failed check's message) left out."""
    text = json.dumps({arm: sorted((comparable_row(r) for r in rows), key=lambda r: r["id"])
                       for arm, rows in table.rows.items()})
    return json.loads(text.replace(str(out), "<out>"))


def test_table1_on_two_workers_matches_the_serial_run(ray_session, tmp_path: Path, config, endpoint, pool) -> None:  # type: ignore[no-untyped-def]
    models = ModelsFile(endpoint)
    serial = t1.run(config, pool, models.load(), tmp_path / "serial", progress=False, models=models)
    parallel = t1.run(config, pool, models.load(), tmp_path / "parallel", progress=False, models=models,
                      scale=Scale(workers=2))
    assert serial.cells()["gt"]["all"] == (2, 3)
    assert _rows(serial, tmp_path / "serial") == _rows(parallel, tmp_path / "parallel")
    match = t1.match_rows(parallel, tmp_path / "parallel", serial, tmp_path / "serial")
    assert match.compared == sum(len(r) for r in serial.rows.values()) > 0
    assert (match.differing, match.unmatched) == ([], 0)
