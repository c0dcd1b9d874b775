"""The two-backbone study: the probes tell separable features from noise, and the report compares records."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from agentlab.experiments.backbone_probe import linear_probe, nearest_centroid, score
from agentlab.experiments.backbones import goals, load_records, markdown, size_points


def _clusters(n: int, seed: int, spread: float) -> tuple[torch.Tensor, list[str]]:
    gen = torch.Generator().manual_seed(seed)
    centres = torch.randn(3, 16, generator=torch.Generator().manual_seed(0)) * 3
    y = torch.arange(n) % 3
    return centres[y] + spread * torch.randn(n, 16, generator=gen), [["calc", "gimp", "vlc"][int(k)] for k in y]


def test_probes_separate_clusters_and_not_noise() -> None:
    xtr, ytr = _clusters(60, 1, 0.5)
    xte, yte = _clusters(30, 2, 0.5)
    s = score(xtr, ytr, xte, yte)
    assert s.centroid == 1.0 and s.linear == 1.0 and s.tasks == 30
    noise = torch.randn(300, 16, generator=torch.Generator().manual_seed(3))
    labels = ["calc", "gimp", "vlc"] * 100
    chance = score(noise[:240], labels[:240], noise[240:], labels[240:])
    assert chance.centroid < 0.6 and chance.linear < 0.6


def test_classifiers_return_one_class_per_row_and_skip_empty_classes() -> None:
    x = torch.tensor([[0.0, 1.0], [0.0, 1.1], [1.0, 0.0], [1.1, 0.0]])
    y = torch.tensor([0, 0, 2, 2])  # class 1 has no example
    test = torch.tensor([[0.0, 2.0], [2.0, 0.0]])
    assert nearest_centroid(x, y, test, 3).tolist() == [0, 2]
    assert linear_probe(x, y, test, 3).tolist() == [0, 2]


def _record(name: str, params: int, at: float, emb: float, at_v2: float, emb_v2: float, lin: float) -> dict:
    def r(acc: float, v2: float, n: int = 313) -> dict:
        return {"acc_313": acc, "tasks_313": n, "acc_v2_domain": v2, "acc_v2_agent": v2 - 0.05, "tasks_v2": 134,
                "train_examples": 678, "fit_seconds": 12.5, "fit_peak_rss_mib": 40.0, "trainable_parameters": 1,
                "route_seconds_per_task": 0.1}
    probe = {"313": {"centroid": lin - 0.1, "linear": lin, "tasks": 313}, "v2": {"centroid": 0.5, "linear": 0.6, "tasks": 134}}
    return {"backbone": {"name": f"embedded:{name}", "model_id": name, "fingerprint": "f" * 16, "parameters": params,
                         "hidden_size": 576, "vocab_size": 1000, "layers": 30, "load_seconds": 1.0, "load_rss_mib": 500.0},
            "command": f"python benchmarks/routing.py --backbone {name} --record", "settings": {},
            "routers": {"agenttoken": r(at, at_v2), "embedding": r(emb, emb_v2), "lora": r(0.4, 0.3, n=18)},
            "probe": {"hidden": probe, "minilm": probe}, "peak_rss_mib": 2000.0}


def test_report_compares_backbones_and_states_the_goals(tmp_path: Path) -> None:
    small = _record("small", 135_000_000, 0.58, 0.72, 0.64, 0.77, 0.70)
    big = _record("big", 270_000_000, 0.74, 0.72, 0.78, 0.77, 0.80)
    text = "\n".join(markdown([big, small]))  # sorted by size whatever the order given
    assert text.index("small (135M)") < text.index("big (270M)")
    assert "Goal 1 (AgentToken >= embedding router on both task sets with at least one backbone): **met**" in text
    assert "Goal 2 (best router >= 80 % on the 313 tasks): **not met** (best: agenttoken on big (270M), 74.0 %)" in text
    assert "linear +10.0" in text and "(n=18/134)" in text
    assert "**not met**" in goals([small], ["small"])[0]

    for rec in (small, big):
        (tmp_path / f"{rec['backbone']['model_id']}.json").write_text(json.dumps(rec))
    recs = load_records(tmp_path)
    points, sizes = size_points(recs)
    assert sizes == {"small": 135_000_000, "big": 270_000_000}
    assert points["agenttoken"] == {"small": 0.58, "big": 0.74} and "lora (subset)" in points
