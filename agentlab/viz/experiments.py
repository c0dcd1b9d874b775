"""Figures of the experiments' results (``agentlab.experiments``) that need more than one generic plot call."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from agentlab.viz.routing import scaling_curves

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from agentlab.experiments.pool_growth import PoolGrowth


def pool_growth_figure(growth: PoolGrowth, *, title: str | None = None) -> go.Figure:
    """The Figure 3 analog: accuracy as agents are added (random orders as mean ± std, GUI first,
    CLI first), with each order's domain coverage (the ceiling of its accuracy) dotted."""
    from agentlab.experiments.pool_growth import CLI_FIRST, GUI_FIRST

    points = growth.points
    rand, rand_cov = growth.random_accuracy(), growth.random_coverage()
    curves = {
        "random order (mean ± std)": (points, rand.mean(0), rand.std(0)),
        GUI_FIRST: (points, growth.accuracy[GUI_FIRST]),
        CLI_FIRST: (points, growth.accuracy[CLI_FIRST]),
    }
    fig = scaling_curves(
        curves,  # type: ignore[arg-type]  # numpy arrays are sequences at run time; numpy does not declare Sequence
        title=title or f"Figure 3 analog: {growth.router} routing accuracy as agents are added",
        xaxis_title="agents in the pool",
    )
    coverage = {
        "coverage, random (mean)": rand_cov.mean(0),
        "coverage, GUI first": growth.coverage[GUI_FIRST],
        "coverage, CLI first": growth.coverage[CLI_FIRST],
    }
    for name, cov in coverage.items():
        fig.add_scatter(x=points, y=np.asarray(cov) * 100, mode="lines", line={"dash": "dot"}, name=name)
    return fig
