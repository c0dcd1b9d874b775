"""Figures of a ``--seeds K`` run: per-domain mean success with its 95 % interval, pass@k and pass^k curves.

Input is :func:`agentlab.eval.variance.seed_stats` (plain records), so the figure shows exactly
what ``agentlab exec`` prints; how the intervals are computed is documented there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentlab.eval.variance import SeedStats

if TYPE_CHECKING:
    import plotly.graph_objects as go


def seed_figure(stats: Sequence[SeedStats], *, title: str | None = None) -> go.Figure:
    """Left: one bar per domain (and overall) at the mean success (%), the 95 % interval as
    asymmetric error bars. Right: pass@k (solid) and pass^k (dashed) against k per group."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if not stats:
        raise ValueError("no statistics to plot")
    seeds = max(s.seeds for s in stats)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45],
                        subplot_titles=("mean success with 95% interval", "pass@k (solid) and pass^k (dashed)"))
    fig.add_trace(go.Bar(
        x=[s.domain for s in stats], y=[100 * s.mean for s in stats], name="mean success",
        error_y={"type": "data", "symmetric": False, "array": [100 * (s.ci_high - s.mean) for s in stats],
                 "arrayminus": [100 * (s.mean - s.ci_low) for s in stats]},
        text=[f"{100 * s.mean:.0f}" for s in stats], textposition="outside",
        customdata=[[s.method, s.tasks, s.seeds] for s in stats],
        hovertemplate="%{x}: %{y:.1f}% (%{customdata[0]}; %{customdata[1]} tasks, %{customdata[2]} seeds)<extra></extra>",
        showlegend=False,
    ), row=1, col=1)
    for s in stats:
        ks = sorted(s.pass_at)
        fig.add_trace(go.Scatter(x=ks, y=[100 * s.pass_at[k] for k in ks], mode="lines+markers", name=f"{s.domain} pass@k",
                                 legendgroup=s.domain), row=1, col=2)
        fig.add_trace(go.Scatter(x=ks, y=[100 * s.pass_hat[k] for k in ks], mode="lines+markers", name=f"{s.domain} pass^k",
                                 legendgroup=s.domain, line={"dash": "dash"}), row=1, col=2)
    fig.update_yaxes(title_text="success (%)", range=[0, 105], row=1, col=1)
    fig.update_yaxes(title_text="tasks (%)", range=[0, 105], row=1, col=2)
    fig.update_xaxes(title_text="k (episodes per task)", dtick=1, row=1, col=2)
    fig.update_layout(title=title or f"ExecutionAcc over {seeds} seed(s) per task", template="plotly_white")
    return fig
