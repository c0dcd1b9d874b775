"""Held-out demonstrations for choosing AgentToken settings, and the routing benchmark with the ``lda`` preset."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agentlab.experiments.heldout_demos import HeldOutRow, heldout_split, markdown
from agentlab.metaagent.data import load_training_set
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_held_out_demonstrations_are_never_training_data(pool) -> None:
    train = load_training_set(pool, per_agent=16, seed=0)
    extra, held = heldout_split(pool, train)
    seen = {t.strip().lower() for t in train.texts}
    seeds = {d.text.strip().lower() for a in pool.agents for d in a.demonstrations}
    held_texts = {t.strip().lower() for t in held.texts}
    assert len(held) > 500 and len(extra) > 500
    assert not held_texts & seen and not held_texts & seeds
    assert not held_texts & {t.strip().lower() for t in extra.texts}
    # the side depends on the text only: another training draw keeps every row it leaves on the same side
    more = load_training_set(pool, per_agent=20, seed=1)
    extra2, held2 = heldout_split(pool, more)
    held2_texts = {t.strip().lower() for t in held2.texts}
    assert held2_texts - seen <= held_texts
    assert not held2_texts & {t.strip().lower() for t in extra.texts}
    assert len(held2) != len(held)
    assert held.agents == pool.names


def test_markdown_lists_every_setting() -> None:
    rows = [HeldOutRow("embedding", 0.5, 0.6, 10), HeldOutRow("lda", 0.25, 0.5, 10, 0.9)]
    text = "\n".join(markdown(rows, train_examples=7, backbone="`x`"))
    assert "| embedding | 50.0% | 60.0% |  |" in text and "| lda | 25.0% | 50.0% | 0.90 |" in text
    assert "7 training examples; 10 held-out" in text


@needs_lists
@pytest.mark.slow
def test_routing_benchmark_with_the_lda_preset(tmp_path, capsys) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("benchmark_routing_lda", BENCH / "routing.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        res = tmp_path / "routing.md"
        code = module.main(["--quick", "--routers", "agenttoken,hybrid", "--limit", "3", "--per-agent", "2",
                            "--agenttoken-preset", "lda", "--results", str(res)])
    finally:
        sys.path.remove(str(BENCH))
    assert code == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    values = dict(kv.split("=") for kv in line.split())
    assert set(values) == {"agenttoken", "hybrid"} and all(0.0 <= float(v) <= 1.0 for v in values.values())
    assert "--agenttoken-preset lda" in res.read_text()
