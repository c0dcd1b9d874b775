"""``benchmarks/figures.py`` (``make figures``): the README pictures show what the results files say."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


@pytest.fixture(scope="module")
def figures():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("figures")
    finally:
        sys.path.remove(str(BENCH))


def test_the_plots_carry_the_numbers_of_the_results_files(figures) -> None:  # type: ignore[no-untyped-def]
    per_domain = figures.routing_per_domain()
    bars = {t.name: dict(zip(t.y, t.x)) for t in per_domain.data}
    assert set(bars) == {"agenttoken", "embedding", "hybrid"}
    assert bars["agenttoken"]["all (313)"] == 57.8 and bars["hybrid"]["all (313)"] == 72.2  # RESULTS.md's headline
    assert bars["embedding"]["calc (47)"] == 93.6 and bars["agenttoken"]["clock (5)"] == 100.0
    overall = {t.name: dict(zip(t.x, t.y)) for t in figures.routing_overall().data}
    assert overall["313 benchmark tasks"]["lora (earlier run)"] == 44.7
    assert overall["134 project tasks, agent level"]["embedding"] == 71.6
    latency = figures.route_latency().data[0]
    assert dict(zip(latency.y, latency.x))["agenttoken, warm"] == 11.6  # the median column of results/route_latency.md


def test_a_table_that_changed_shape_is_one_clear_line(figures, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    md = tmp_path / "r.md"
    md.write_text("| router | n |\n|---|---|\n| a | 1 |\n")
    assert figures.md_tables(md) == [(["router", "n"], [["a", "1"]])]
    with pytest.raises(SystemExit, match="no table starting with"):
        figures.table(md, ["domain", "n"])


def test_run_all_leaves_the_figures_script_out() -> None:
    out = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--list"], capture_output=True, text=True, check=True).stdout.split()
    assert "figures" not in out  # `make bench` must not redraw the README pictures


@pytest.mark.slow
@pytest.mark.skipif(__import__("agentlab.viz.chromium", fromlist=["x"]).find_chromium() is None, reason="no chromium")
def test_make_figures_draws_every_picture_legibly(tmp_path: Path) -> None:
    from PIL import Image, ImageStat

    proc = subprocess.run([sys.executable, str(BENCH / "figures.py"), "--out", str(tmp_path), "--work", str(tmp_path / "work")],
                          cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "figures=4"
    for name in ("routing_per_domain", "routing_overall", "route_latency", "viewer_episode"):
        img = Image.open(tmp_path / f"{name}.png").convert("L")
        assert img.width >= 1000  # wide enough that 15-16 px labels stay legible at README width
        assert ImageStat.Stat(img).stddev[0] > 20, name  # drawn, not blank
