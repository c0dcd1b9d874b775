"""Self-instruct on two Ray workers, one shard per agent: the journal holds the same rounds as a
serial run (``agents_per_batch: 1``) -- the same candidates, decisions and accepted texts, seconds
aside; only the driver writes it. BERTScore values agree to 1e-6, not to the last bit: a worker's
fresh scorer embeds the seed texts in other batches (other padding) than the driver's did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentlab.fileio import read_jsonl
from agentlab.llm import LLMConfig
from agentlab.llm.testing import LoopbackChatServer, list_continuation
from agentlab.parallel import Scale
from agentlab.paths import data_dir
from agentlab.selfinstruct.config import SelfInstructConfig
from agentlab.selfinstruct.pipeline import run_selfinstruct

AGENTS = ["SpotifyAgent", "GmailAgent"]


def _same(a: Any, b: Any, path: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ: floats by more than 1e-6, anything else at all."""
    if isinstance(a, float) and isinstance(b, float):
        return [] if abs(a - b) <= 1e-6 else [f"{path}: {a} != {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _same(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _same(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def _rounds(out: Path) -> list[dict]:
    recs = [r for r in read_jsonl(out / "journal.jsonl") if r.get("type") in ("round", "stop")]
    for r in recs:
        r.pop("seconds", None)
    return sorted(recs, key=lambda r: (r["agent"], r.get("round", 10**6), r["type"]))


def test_same_tolerates_only_float_noise() -> None:
    assert _same({"a": [0.1, "x"]}, {"a": [0.1 + 1e-8, "x"]}) == []
    assert _same({"a": [0.1, "x"]}, {"a": [0.1, "y"]}) == [".a[1]: 'x' != 'y'"]
    assert _same({"a": 0.1}, {"a": 0.2}) and _same({"a": 1}, {"b": 1})


def test_list_continuation_depends_only_on_the_request() -> None:
    body = {"seed": 3, "messages": [{"role": "user", "content": "1. Play some jazz now\n2. Skip this song please\n3."}]}
    assert list_continuation(body, 0) == list_continuation(dict(body), 7)
    assert list_continuation({**body, "seed": 4}, 0) != list_continuation(body, 0)
    assert list_continuation({"messages": [{"content": "no list"}]}, 0) == " Nothing to add.\n"


@pytest.mark.slow
def test_sharded_selfinstruct_equals_serial(ray_session, tmp_path, pool) -> None:  # type: ignore[no-untyped-def]
    with LoopbackChatServer(list_continuation) as srv:
        gen = LLMConfig(kind="openai", base_url=srv.url, model="loopback-generator")
        base = dict(agents=AGENTS, per_agent=15, max_rounds=2, generator=gen, agents_per_batch=1, fresh=True,
                    thresholds=data_dir() / "demos" / "thresholds.json", torch_threads=1, leakage=False)
        serial = run_selfinstruct(SelfInstructConfig(out_dir=tmp_path / "serial", **base), pool=pool, progress=False)
        sharded = run_selfinstruct(SelfInstructConfig(out_dir=tmp_path / "sharded", **base), pool=pool, progress=False,
                                   scale=Scale(workers=2))
    assert serial.run_candidates > 0 and serial.run_candidates == sharded.run_candidates
    assert serial.run_accepted == sharded.run_accepted
    assert _same(_rounds(tmp_path / "serial"), _rounds(tmp_path / "sharded")) == []
    assert {(a.agent, a.total, a.rounds) for a in serial.agents} == {(a.agent, a.total, a.rounds) for a in sharded.agents}
    assert all(a.rounds == 2 for a in sharded.agents)
