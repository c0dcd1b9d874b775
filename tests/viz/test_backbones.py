"""Accuracy against backbone size: one line per router, backbones placed by parameters."""

from __future__ import annotations

from agentlab.viz.backbones import accuracy_vs_size


def test_lines_follow_backbone_size_and_leave_gaps() -> None:
    fig = accuracy_vs_size({"agenttoken": {"big": 0.7, "small": 0.5}, "lora": {"small": 0.4, "big": None}},
                           {"big": 270_000_000, "small": 135_000_000}, goal=0.8)
    at, lora = fig.data
    assert list(at.x) == [135.0, 270.0] and list(at.y) == [50.0, 70.0]
    assert list(lora.y) == [40.0, None] and lora.name == "lora"
    assert fig.layout.shapes and fig.layout.shapes[0].y0 == 80.0
