"""Figures for routers: accuracy tables, confusion, token space, training and scaling curves.

Inputs are plain numbers keyed by names (as the metrics and benchmark modules produce
them), so these functions never depend on how a router was trained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    import plotly.graph_objects as go


def accuracy_bars(
    table: Mapping[str, Mapping[str, float]],
    *,
    title: str = "Routing accuracy per domain",
    yaxis_title: str = "accuracy (%)",
    percent: bool = True,
) -> go.Figure:
    """Grouped bars: one group per column key (e.g. domain), one bar per row key (router)."""
    import plotly.graph_objects as go

    columns: list[str] = []
    for row in table.values():
        columns.extend(c for c in row if c not in columns)
    scale = 100.0 if percent else 1.0
    fig = go.Figure()
    for name, row in table.items():
        ys = [row.get(c) for c in columns]
        fig.add_trace(
            go.Bar(
                x=columns,
                y=[None if y is None else y * scale for y in ys],
                name=name,
                text=["" if y is None else f"{y * scale:.0f}" for y in ys],
                textposition="outside",
            )
        )
    fig.update_layout(
        barmode="group", title=title, yaxis_title=yaxis_title, xaxis_title="", width=1100, height=460
    )
    if percent:
        fig.update_yaxes(range=[0, 105])
    return fig


def accuracy_heatmap(
    table: Mapping[str, Mapping[str, float | None]],
    counts: Mapping[str, Mapping[str, int]] | None = None,
    *,
    title: str = "Routing accuracy per domain",
) -> go.Figure:
    """Rows = routers, columns = domains (+ overall): accuracy in % as colour and text, with the
    number of tasks behind each cell when ``counts`` is given; cells without tasks stay blank."""
    import plotly.graph_objects as go

    columns: list[str] = []
    for row in table.values():
        columns.extend(c for c in row if c not in columns)
    names = list(table)
    z = [[None if (v := table[r].get(c)) is None else 100.0 * float(v) for c in columns] for r in names]

    def cell(r: str, c: str, v: float | None) -> str:
        if v is None:
            return ""
        n = counts.get(r, {}).get(c) if counts else None
        return f"{v:.0f}" + (f"<br><sub>n={n}</sub>" if n is not None else "")

    text = [[cell(r, c, v) for c, v in zip(columns, zr)] for r, zr in zip(names, z)]
    fig = go.Figure(
        go.Heatmap(
            z=z, x=columns, y=names, text=text, texttemplate="%{text}", colorscale="RdYlGn", zmin=0, zmax=100,
            colorbar_title="%", hoverongaps=False, xgap=2, ygap=2,
            hovertemplate="%{y} on %{x}: %{z:.1f}%<extra></extra>",
        )
    )
    fig.update_layout(title=title, width=max(700, 52 * len(columns) + 250), height=160 + 60 * len(names),
                      yaxis_autorange="reversed")
    return fig


def confusion_matrix(
    gold: Sequence[str],
    pred: Sequence[str | None],
    *,
    labels: Sequence[str] | None = None,
    normalize: bool = True,
    title: str = "Confusion matrix",
) -> go.Figure:
    """Heatmap of gold (rows) against predicted (columns); ``None`` predictions become
    "(none)". Cells show counts; colour is the row-normalised share when ``normalize``."""
    import plotly.graph_objects as go

    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} items but pred has {len(pred)}")
    p = [x if x is not None else "(none)" for x in pred]
    given = list(labels) if labels is not None else []
    labels = given + [x for x in dict.fromkeys(list(gold) + p) if x not in given]
    idx = {n: i for i, n in enumerate(labels)}
    counts = np.zeros((len(labels), len(labels)), dtype=int)
    for g, q in zip(gold, p):
        counts[idx[g], idx[q]] += 1
    rows = counts.sum(axis=1, keepdims=True)
    z = np.divide(counts, np.maximum(rows, 1)) if normalize else counts.astype(float)
    acc = float(np.trace(counts) / max(1, counts.sum()))
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=labels,
            y=labels,
            text=[[str(c) if c else "" for c in r] for r in counts],
            texttemplate="%{text}",
            colorscale="Blues",
            zmin=0,
            zmax=1 if normalize else None,
            colorbar_title="share" if normalize else "count",
            hovertemplate="gold %{y}<br>pred %{x}<br>%{z:.2f}<extra></extra>",
        )
    )
    size = max(500, 22 * len(labels) + 200)
    fig.update_layout(
        title=f"{title} (accuracy {acc:.1%}, n={int(counts.sum())})",
        xaxis_title="predicted",
        yaxis_title="gold",
        yaxis_autorange="reversed",
        width=size + 100,
        height=size,
    )
    return fig


def project_2d(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PCA to two dimensions: (coordinates [n, 2], explained-variance ratio [2])."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"need at least two row vectors, got shape {x.shape}")
    x = x - x.mean(axis=0, keepdims=True)
    u, s, _ = np.linalg.svd(x, full_matrices=False)
    k = min(2, s.size)
    coords = u[:, :k] * s[:k]
    if k < 2:
        coords = np.pad(coords, ((0, 0), (0, 2 - k)))
    var = s**2
    ratio = var[:2] / var.sum() if var.sum() > 0 else np.zeros(2)
    return coords, np.pad(ratio, (0, 2 - ratio.size))


def token_projection(
    vectors: np.ndarray,
    names: Sequence[str],
    groups: Sequence[str],
    *,
    title: str = "Agent tokens (rows of W_A), PCA",
) -> go.Figure:
    """2-D PCA of token embeddings, one marker per agent, coloured by group (domain)."""
    import plotly.graph_objects as go

    if len(names) != len(vectors) or len(groups) != len(vectors):
        raise ValueError("vectors, names and groups must have the same length")
    import plotly.express as px

    coords, ratio = project_2d(vectors)
    palette = px.colors.qualitative.Dark24  # 20 domains need more than plotly's 10 default colours
    fig = go.Figure()
    for n, g in enumerate(dict.fromkeys(groups)):
        sel = [i for i, x in enumerate(groups) if x == g]
        fig.add_trace(
            go.Scatter(
                x=coords[sel, 0],
                y=coords[sel, 1],
                mode="markers+text",
                text=[names[i] for i in sel],
                textposition="top center",
                name=g,
                marker={"size": 11, "color": palette[n % len(palette)]},
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title=f"PC1 ({ratio[0]:.0%} of variance)",
        yaxis_title=f"PC2 ({ratio[1]:.0%} of variance)",
        legend_title_text="domain",
        width=950,
        height=650,
    )
    return fig


def loss_curves(
    curves: Mapping[str, Sequence[float] | tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "Training loss",
    xaxis_title: str = "epoch",
    yaxis_title: str = "cross-entropy",
) -> go.Figure:
    """One line per named curve: a list of values (x = 1..n) or an ``(xs, ys)`` pair."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, curve in curves.items():
        if isinstance(curve, tuple) and len(curve) == 2 and all(isinstance(c, Sequence) for c in curve):
            pair = cast("tuple[Sequence[float], Sequence[float]]", curve)
            xs, ys = list(pair[0]), list(pair[1])
        else:
            ys = list(cast("Sequence[float]", curve))
            xs = list(range(1, len(ys) + 1))
        if len(xs) != len(ys):
            raise ValueError(f"curve {name!r}: {len(xs)} x values for {len(ys)} y values")
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=name))
    fig.update_layout(title=title, xaxis_title=xaxis_title, yaxis_title=yaxis_title, width=800, height=420)
    return fig


def scaling_curves(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]] | tuple[Sequence[float], Sequence[float], Sequence[float]]],
    *,
    title: str,
    xaxis_title: str,
    yaxis_title: str = "accuracy (%)",
    percent: bool = True,
) -> go.Figure:
    """Lines of y against x per strategy; a third sequence (std) draws a shaded ±1 std band."""
    import plotly.graph_objects as go

    scale = 100.0 if percent else 1.0
    fig = go.Figure()
    for name, curve in curves.items():
        xs = list(curve[0])
        ys = np.asarray(curve[1], dtype=float) * scale
        if len(curve) == 3:
            sd = np.asarray(curve[2], dtype=float) * scale
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=list(ys + sd) + list((ys - sd)[::-1]),
                    fill="toself",
                    opacity=0.15,
                    line_width=0,
                    showlegend=False,
                    hoverinfo="skip",
                    name=f"{name} ±1 std",
                )
            )
        fig.add_trace(go.Scatter(x=xs, y=list(ys), mode="lines+markers", name=name))
    fig.update_layout(title=title, xaxis_title=xaxis_title, yaxis_title=yaxis_title, width=850, height=450)
    return fig


def table_figure(rows: Sequence[Mapping[str, object]], *, title: str = "") -> go.Figure:
    """A plotly table of records (columns in first-seen order): for Table-5-style summaries."""
    import plotly.graph_objects as go

    cols: list[str] = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)

    def fmt(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "" if v is None else str(v)

    fig = go.Figure(
        go.Table(
            header={"values": [f"<b>{c}</b>" for c in cols], "align": "left"},
            cells={"values": [[fmt(r.get(c)) for r in rows] for c in cols], "align": "left"},
        )
    )
    fig.update_layout(title=title, width=1000, height=120 + 32 * max(1, len(rows)))
    return fig
