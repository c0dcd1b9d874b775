"""Figures for routing at several model sizes: accuracy of each router against backbone parameters.

Inputs are plain numbers keyed by names (``agentlab.experiments.backbones.size_points`` makes them
from the benchmark's records), so the figure never depends on how a router was trained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import plotly.graph_objects as go


def accuracy_vs_size(
    points: Mapping[str, Mapping[str, float | None]],
    sizes: Mapping[str, int],
    *,
    title: str = "Routing accuracy against backbone size",
    goal: float | None = None,
) -> go.Figure:
    """One line per router through its accuracy (%) at each backbone, x = parameters (millions).

    ``points``: router -> {backbone label: accuracy in [0, 1] or None}; ``sizes``: backbone label ->
    parameters. Backbones are placed by size; a missing accuracy leaves a gap. ``goal`` draws a
    dashed horizontal line (e.g. 0.8)."""
    import plotly.graph_objects as go

    order = sorted(sizes, key=lambda b: sizes[b])
    fig = go.Figure()
    for router, accs in points.items():
        ys = [accs.get(b) for b in order]
        fig.add_trace(go.Scatter(
            x=[sizes[b] / 1e6 for b in order], y=[None if y is None else 100 * y for y in ys],
            mode="lines+markers+text", name=router, text=["" if y is None else f"{100 * y:.1f}" for y in ys],
            textposition="top center", hovertext=order,
        ))
    if goal is not None:
        fig.add_hline(y=100 * goal, line_dash="dash", annotation_text=f"goal {100 * goal:.0f} %")
    fig.update_layout(title=title, xaxis_title="backbone parameters (millions)", yaxis_title="accuracy (%)",
                      width=760, height=460)
    fig.update_xaxes(tickvals=[sizes[b] / 1e6 for b in order], ticktext=[f"{b}<br>{sizes[b] / 1e6:.0f}M" for b in order])
    fig.update_yaxes(range=[0, 105])
    return fig
