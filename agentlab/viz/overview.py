"""Figures that describe the inputs: the agent pool, the benchmark task lists, score distributions.

Each function takes plain package records (an :class:`AgentPool`, a list of
:class:`BenchmarkTask`, arrays of scores) and returns a plotly figure, so notebooks stay glue
and tests can inspect traces and axes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from agentlab.pool.document import ALL_DOMAINS, DOMAINS

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from agentlab.eval.benchmarks import BenchmarkTask
    from agentlab.pool import AgentPool

INTERFACE_COLORS = {"GUI": "#1f77b4", "CLI": "#ff7f0e"}


def _domain_order(domains: Iterable[str]) -> list[str]:
    """Domains in the project's canonical order, unknown ones last (alphabetically)."""
    present = set(domains)
    known = [d for d in ALL_DOMAINS if d in present]
    return known + sorted(present - set(known))


def pool_overview(pool: AgentPool) -> go.Figure:
    """Agents per domain, stacked by interface (GUI/CLI), one panel per platform."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    platforms = [p for p in DOMAINS if any(a.platform == p for a in pool)]
    widths = [max(1, len({a.domain for a in pool if a.platform == p})) for p in platforms]
    fig = make_subplots(
        rows=1,
        cols=len(platforms),
        column_widths=widths,
        subplot_titles=[f"{p} ({sum(a.platform == p for a in pool)} agents)" for p in platforms],
        shared_yaxes=True,
    )
    for col, platform in enumerate(platforms, start=1):
        agents = [a for a in pool if a.platform == platform]
        order = _domain_order(a.domain for a in agents)
        for interface in ("GUI", "CLI"):
            per = {d: [a.name for a in agents if a.domain == d and a.interface == interface] for d in order}
            fig.add_trace(
                go.Bar(
                    x=order,
                    y=[len(per[d]) for d in order],
                    name=interface,
                    legendgroup=interface,
                    showlegend=col == 1,
                    marker_color=INTERFACE_COLORS[interface],
                    hovertext=[", ".join(per[d]) or "-" for d in order],
                    hoverinfo="x+y+text+name",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(
        barmode="stack",
        title=f"AgentPool: {len(pool)} agents by platform, domain and interface",
        width=1000,
        height=420,
        legend_title_text="interface",
    )
    fig.update_yaxes(title_text="agents", row=1, col=1)
    return fig


def benchmark_overview(tasks: Sequence[BenchmarkTask]) -> go.Figure:
    """Benchmark tasks per domain, one bar group per benchmark (multi-app tasks count once in
    each domain they involve)."""
    import plotly.graph_objects as go

    counts: dict[str, Counter[str]] = {}
    for t in tasks:
        c = counts.setdefault(t.benchmark, Counter())
        for d in t.domains or ((t.domain,) if t.domain else ()):
            c[d] += 1
    order = _domain_order(d for c in counts.values() for d in c)
    fig = go.Figure()
    for bench, c in counts.items():
        n = sum(1 for t in tasks if t.benchmark == bench)
        fig.add_trace(go.Bar(x=order, y=[c.get(d, 0) for d in order], name=f"{bench} ({n} tasks)"))
    fig.update_layout(
        barmode="group",
        title=f"Benchmark tasks per domain ({len(tasks)} tasks; evaluation only)",
        xaxis_title="domain",
        yaxis_title="tasks",
        width=1000,
        height=420,
    )
    return fig


def upper_triangle(matrix: np.ndarray) -> np.ndarray:
    """The off-diagonal pairs ``i < j`` of a square score matrix, as a flat array."""
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {m.shape}")
    i, j = np.triu_indices(m.shape[0], k=1)
    return m[i, j]


def score_distributions(
    scores: Mapping[str, Sequence[float] | np.ndarray],
    *,
    band: tuple[float, float] | None = None,
    title: str = "Pairwise BERTScore F1 per domain",
    yaxis_title: str = "BERTScore F1",
) -> go.Figure:
    """One box (with the points) per group, plus the central-95% range of every group as a
    line and, if given, the chosen ``band`` (τ1, τ2) as a shaded region: the Figure 7 analog."""
    import plotly.graph_objects as go

    fig = go.Figure()
    lows, highs = [], []
    for name, vals in scores.items():
        v = np.asarray(vals, dtype=float)
        if v.size == 0:
            continue
        lo, hi = np.percentile(v, [2.5, 97.5])
        lows.append(lo)
        highs.append(hi)
        fig.add_trace(
            go.Box(
                y=v,
                name=f"{name} (n={v.size})",
                boxpoints="outliers",
                hovertemplate=f"{name}<br>%{{y:.3f}}<extra></extra>",
            )
        )
    if band is not None:
        fig.add_hrect(y0=band[0], y1=band[1], fillcolor="green", opacity=0.12, line_width=0)
        fig.add_annotation(
            xref="paper", x=1.0, y=band[1], text=f"τ1={band[0]:.2f}, τ2={band[1]:.2f}",
            showarrow=False, xanchor="right", yanchor="bottom",
        )
    sub = ""
    if lows:
        sub = f"<br><sup>central 95% of each domain lies within [{min(lows):.2f}, {max(highs):.2f}]</sup>"
    fig.update_layout(
        title=title + sub, yaxis_title=yaxis_title, showlegend=False, width=1000, height=460
    )
    return fig
