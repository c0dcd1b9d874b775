"""Figure display and export: files, manifest, offline plotly.js, PNG via headless Chromium."""

from __future__ import annotations

import pytest

from agentlab.viz import export as ex
from agentlab.viz.chromium import find_chromium


def _fig():
    import plotly.graph_objects as go

    return go.Figure(go.Bar(x=["a", "b"], y=[1, 3]), layout={"width": 400, "height": 300})


def test_show_writes_html_and_manifest_and_inlines_plotlyjs_once(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    monkeypatch.setattr(ex, "_STATE", ex._State())
    ex.set_figures_dir(tmp_path)
    ex.show(_fig(), "first plot!", readme=True)
    ex.show(_fig())
    assert len(shown) == 2
    assert "window.__agentlabDefine" in shown[0]["text/html"]  # plotly.js inlined, AMD-safe
    assert "__agentlabDefine" not in shown[1]["text/html"]
    assert shown[1]["application/vnd.plotly.v1+json"]["data"][0]["type"] == "bar"
    recs = ex.read_manifest(tmp_path)
    assert [r.name for r in recs] == ["first_plot", "figure_02"]
    assert recs[0].readme and (recs[0].width, recs[0].height) == (400, 300)
    page = (tmp_path / "first_plot.html").read_text()
    assert 'src="plotly.min.js"' in page and "cdn" not in page.lower()
    assert (tmp_path / "plotly.min.js").stat().st_size > 1_000_000


def test_show_without_folder_only_displays(tmp_path, monkeypatch):
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: None)
    monkeypatch.setattr(ex, "_STATE", ex._State())
    ex.set_figures_dir(None)
    ex.show(_fig(), "x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(find_chromium() is None, reason="no chromium installed (scripts/sysdeps.sh installs it)")
def test_export_pngs_renders_the_figure(tmp_path):
    from PIL import Image

    ex.write_figure(_fig(), tmp_path, "bars")
    recs = ex.export_pngs(tmp_path)
    assert recs[0].png == "bars.png"
    img = Image.open(tmp_path / "bars.png").convert("RGB")
    assert img.size == (400, 300)
    # plotly's default bar colour must be on the picture: the figure really was drawn
    colors = {c for _, c in img.getcolors(maxcolors=1 << 16)}
    assert any(abs(r - 0x63) < 12 and abs(g - 0x6E) < 12 and b > 0xE0 for r, g, b in colors)


def test_show_image_saves_png_listed_in_manifest(tmp_path, monkeypatch):
    from PIL import Image

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setattr(ex, "_STATE", ex._State())
    ex.set_figures_dir(tmp_path)
    ex.show_image(Image.new("RGB", (2000, 100), (255, 0, 0)), "wide shot", readme=True)
    rec = ex.read_manifest(tmp_path)[0]
    assert (rec.name, rec.png, rec.html, rec.readme) == ("wide_shot", "wide_shot.png", "", True)
    assert Image.open(tmp_path / "wide_shot.png").size == (1000, 50)  # downscaled to max_width
    assert ex.export_pngs(tmp_path)[0].png == "wide_shot.png"  # nothing to render, kept as is
    assert shown and shown[0].format == "png"
