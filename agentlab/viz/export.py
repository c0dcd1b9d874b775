"""Showing figures so they survive every way a notebook is read, and exporting them to files.

A figure shown with :func:`show` carries two representations: plotly's JSON mime type (what
JupyterLab's plotly extension draws interactively) and self-contained HTML (what nbconvert's
static export keeps). The HTML needs plotly.js, which we inline once per kernel from the
installed ``plotly`` package, never from a CDN, so an executed notebook renders offline.

When a figures folder is set (the runner passes ``figures_dir`` to every notebook) each
figure is also written as ``<name>.html`` beside one shared ``plotly.min.js`` and listed in
``manifest.jsonl``; :func:`export_pngs` later turns the listed pages into PNGs with headless
Chromium (plotly's kaleido would need a downloaded Chrome; see :mod:`agentlab.viz.chromium`).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.fileio import append_jsonl, atomic_write_text, read_jsonl

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from PIL import Image

log = logging.getLogger(__name__)

MANIFEST = "manifest.jsonl"
DEFAULT_SIZE = (900, 500)
_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class _State:
    figures_dir: Path | None = None
    plotlyjs_emitted: bool = False
    counter: int = 0


_STATE = _State()


@dataclass(frozen=True)
class ExportedFigure:
    """One line of ``manifest.jsonl``: a figure written by :func:`show`."""

    name: str
    html: str
    width: int
    height: int
    readme: bool = False
    png: str | None = None


def set_figures_dir(path: str | Path | None) -> Path | None:
    """Where :func:`show` writes figure files (``None``: display only). Returns the folder."""
    _STATE.figures_dir = Path(path) if path else None
    if _STATE.figures_dir is not None:
        _STATE.figures_dir.mkdir(parents=True, exist_ok=True)
    return _STATE.figures_dir


def figure_size(fig: go.Figure) -> tuple[int, int]:
    """The pixel size a figure asks for (its layout's width/height, else the default)."""
    w = fig.layout.width or DEFAULT_SIZE[0]
    h = fig.layout.height or DEFAULT_SIZE[1]
    return int(w), int(h)


def plotlyjs_script() -> str:
    """plotly.js from the installed package, inlined so that it defines ``window.Plotly``.

    nbconvert's HTML template loads require.js; plotly.js's UMD header would then register
    itself as an AMD module instead of a global, and every figure script would fail. Hiding
    ``define`` while the bundle runs keeps ``window.Plotly`` in both worlds.
    """
    from plotly.offline import get_plotlyjs

    return (
        "<script>window.__agentlabDefine = window.define; window.define = undefined;</script>\n"
        f"<script type=\"text/javascript\">{get_plotlyjs()}</script>\n"
        "<script>window.define = window.__agentlabDefine;</script>\n"
    )


def figure_html(fig: go.Figure, *, with_plotlyjs: bool = False) -> str:
    """An HTML fragment drawing ``fig`` with a global ``Plotly`` (inlined if asked)."""
    w, h = figure_size(fig)
    div = fig.to_html(
        include_plotlyjs=False,
        full_html=False,
        default_width=f"{w}px",
        default_height=f"{h}px",
        config={"displaylogo": False, "responsive": True},
    )
    return (plotlyjs_script() if with_plotlyjs else "") + div


def figure_bundle(fig: go.Figure, *, with_plotlyjs: bool = False, name: str = "figure") -> dict[str, Any]:
    """The display bundle: plotly JSON for live Jupyter, HTML for static exports, plain text."""
    import plotly.io as pio

    return {
        "application/vnd.plotly.v1+json": json.loads(pio.to_json(fig, validate=False)),
        "text/html": figure_html(fig, with_plotlyjs=with_plotlyjs),
        "text/plain": f"<plotly figure '{name}': {len(fig.data)} trace(s)>",
    }


def _safe_name(name: str | None) -> str:
    _STATE.counter += 1
    base = _NAME_RE.sub("_", name).strip("_") if name else ""
    return base or f"figure_{_STATE.counter:02d}"


def write_figure(fig: go.Figure, folder: str | Path, name: str, *, readme: bool = False) -> ExportedFigure:
    """Write ``<folder>/<name>.html`` (plotly.js shared in the folder) and list it in the manifest."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    w, h = figure_size(fig)
    html = fig.to_html(
        include_plotlyjs="directory",
        full_html=True,
        default_width=f"{w}px",
        default_height=f"{h}px",
        config={"displaylogo": False, "displayModeBar": False},
    )
    target = folder / f"{name}.html"
    atomic_write_text(target, html)
    bundle = folder / "plotly.min.js"
    if not bundle.exists():
        from plotly.offline import get_plotlyjs

        atomic_write_text(bundle, get_plotlyjs())
    rec = ExportedFigure(name=name, html=target.name, width=w, height=h, readme=readme)
    append_jsonl(folder / MANIFEST, asdict(rec))
    return rec


def show(fig: go.Figure, name: str | None = None, *, readme: bool = False) -> None:
    """Display ``fig`` (interactive in Jupyter, static-export safe) and write it to the figures
    folder if one is set. ``readme=True`` marks it for copying into ``docs/img`` by the runner.

    Returns nothing, so a cell ending in ``show(...)`` does not display the figure twice; the
    written files are listed in the folder's manifest (:func:`read_manifest`)."""
    from IPython.display import display

    safe = _safe_name(name)
    bundle = figure_bundle(fig, with_plotlyjs=not _STATE.plotlyjs_emitted, name=safe)
    _STATE.plotlyjs_emitted = True
    display(bundle, raw=True)
    if _STATE.figures_dir is not None:
        write_figure(fig, _STATE.figures_dir, safe, readme=readme)


def show_image(img: Image.Image, name: str | None = None, *, readme: bool = False, max_width: int = 1000) -> None:
    """Display a PIL image and, when a figures folder is set, save it as ``<name>.png``
    (listed in the manifest with its PNG already present, so no browser is needed)."""
    import io

    from IPython.display import Image as IPImage
    from IPython.display import display

    safe = _safe_name(name)
    if img.width > max_width:
        img = img.resize((max_width, round(img.height * max_width / img.width)))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    display(IPImage(data=buf.getvalue(), format="png", alt=safe.replace("_", " ")))
    if _STATE.figures_dir is not None:
        from agentlab.fileio import atomic_write_bytes

        atomic_write_bytes(_STATE.figures_dir / f"{safe}.png", buf.getvalue())
        rec = ExportedFigure(name=safe, html="", width=img.width, height=img.height, readme=readme, png=f"{safe}.png")
        append_jsonl(_STATE.figures_dir / MANIFEST, asdict(rec))


def read_manifest(folder: str | Path) -> list[ExportedFigure]:
    """Figures listed in ``<folder>/manifest.jsonl`` (last entry per name wins)."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        return []
    by_name: dict[str, ExportedFigure] = {}
    for rec in read_jsonl(path):
        fields: dict[str, Any] = {k: rec.get(k) for k in ExportedFigure.__dataclass_fields__ if k in rec}
        by_name[rec["name"]] = ExportedFigure(**fields)
    return list(by_name.values())


def export_pngs(folder: str | Path, *, only_readme: bool = False) -> list[ExportedFigure]:
    """Render every listed figure page to ``<name>.png`` with headless Chromium.

    Returns the records with ``png`` filled. Raises
    :class:`~agentlab.errors.EnvironmentUnavailableError` when no browser is available.
    """
    from agentlab.viz.chromium import screenshot

    folder = Path(folder)
    out: list[ExportedFigure] = []
    for rec in read_manifest(folder):
        if (only_readme and not rec.readme) or not rec.html:  # images arrive as PNG already
            out.append(rec)
            continue
        png = folder / f"{rec.name}.png"
        screenshot(folder / rec.html, png, width=rec.width, height=rec.height)
        out.append(ExportedFigure(**{**asdict(rec), "png": png.name}))
    return out
