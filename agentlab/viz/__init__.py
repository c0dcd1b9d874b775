"""Plotting for the workbench notebooks: functions that return plotly figures, and their export.

Every figure function takes package records and returns a ``plotly.graph_objects.Figure``
(tests inspect traces and axes); :func:`show` displays a figure so it renders both live in
Jupyter and in a static HTML export, and writes it to the run's figures folder.
Plotly is imported inside the functions, so importing this package stays cheap.
"""

from agentlab.viz.export import (
    export_pngs,
    figure_bundle,
    figure_html,
    read_manifest,
    set_figures_dir,
    show,
    show_image,
    write_figure,
)
from agentlab.viz.overview import benchmark_overview, pool_overview, score_distributions, upper_triangle
from agentlab.viz.routing import (
    accuracy_bars,
    accuracy_heatmap,
    confusion_matrix,
    loss_curves,
    project_2d,
    scaling_curves,
    table_figure,
    token_projection,
)

__all__ = [
    "accuracy_bars",
    "accuracy_heatmap",
    "benchmark_overview",
    "confusion_matrix",
    "export_pngs",
    "figure_bundle",
    "figure_html",
    "loss_curves",
    "pool_overview",
    "project_2d",
    "read_manifest",
    "scaling_curves",
    "score_distributions",
    "set_figures_dir",
    "show",
    "show_image",
    "table_figure",
    "token_projection",
    "upper_triangle",
    "write_figure",
]
