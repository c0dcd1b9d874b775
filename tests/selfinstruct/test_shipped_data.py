"""The shipped data/demos honours its contract: schema, thresholds record, and Algorithm 1's
bounds for every generated row against every other row of its agent (recomputed here)."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from agentlab.paths import data_dir
from agentlab.selfinstruct.config import Thresholds

DEMOS = data_dir() / "demos"
pytestmark = pytest.mark.skipif(
    not (DEMOS / "state.json").is_file(), reason="no shipped dataset under data/demos (run agentlab selfinstruct)"
)


@pytest.fixture(scope="module")
def shipped():  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.store import load_demos

    return load_demos(DEMOS)


def test_schema_thresholds_and_seeds(shipped, pool) -> None:  # type: ignore[no-untyped-def]
    for col in ("agent", "domain", "text", "source", "round", "generator", "min_score", "max_score", "leak_score"):
        assert col in shipped.column_names
    raw = json.loads((DEMOS / "thresholds.json").read_text())
    assert {"scorer", "num_layers", "tau1", "tau2", "leakage_tau"} <= set(raw)
    th = Thresholds(**raw)
    assert th.tau1 <= th.tau2 and all(b.tau1 <= b.tau2 for b in th.per_domain.values())
    by_agent: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for a, t, s, r, d in zip(shipped["agent"], shipped["text"], shipped["source"], shipped["round"], shipped["domain"]):
        by_agent[a].append((t, s, r))
        assert d == pool.get(a).domain
        assert s in ("seed", "generated") and (r == 0) == (s == "seed")
    # FileAgent (#24) and the profile specialists (#38) joined after the dataset was generated: their
    # tokens train on their seed demonstrations
    assert set(pool.names) - set(by_agent) == {"FileAgent", "BrowserAgent", "MailboxAgent", "MediaAgent", "DataAgent"}
    assert set(by_agent) <= set(pool.names)
    for name, rows in by_agent.items():
        assert [t for t, s, _ in rows if s == "seed"] == [d.text for d in pool.get(name).demonstrations]
        texts = [t for t, _, _ in rows]
        assert len(texts) == len(set(texts)), f"{name} has duplicate demonstrations"
    gen_leaks = [x for x, s in zip(shipped["leak_score"], shipped["source"]) if s == "generated"]
    assert all(x <= th.leakage_tau for x in gen_leaks)


@pytest.mark.slow
def test_every_generated_row_is_inside_its_band_against_every_other_row(shipped, fast) -> None:  # type: ignore[no-untyped-def]
    th = Thresholds.load(DEMOS / "thresholds.json")
    assert th.scorer == fast.describe()["scorer"] and th.num_layers == fast.describe()["num_layers"]
    rows: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for a, t, s, d in zip(shipped["agent"], shipped["text"], shipped["source"], shipped["domain"]):
        rows[a].append((t, s, d))
    checked = 0
    for agent, items in rows.items():
        texts = [t for t, _, _ in items]
        band = th.band(items[0][2])
        mat = fast.matrix(texts, texts)
        deg = fast.degenerate(texts, texts)
        for i, (_, source, _) in enumerate(items):
            if source != "generated":
                continue
            # no accepted row owes its place to a meaningless F1 (precision and recall straddling 0)
            assert not deg[i].any(), f"{agent}: '{texts[i]}' has a degenerate BERTScore pair"
            others = np.delete(mat[i], i)
            lo, hi = float(others.min()), float(others.max())
            assert band.tau1 - 1e-4 <= lo and hi <= band.tau2 + 1e-4, (
                f"{agent}: '{texts[i]}' has scores in [{lo:.4f}, {hi:.4f}], band [{band.tau1}, {band.tau2}]"
            )
            checked += 1
    assert checked > 0
