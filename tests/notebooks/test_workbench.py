"""Every shipped notebook runs end to end with tiny parameters and leaves its outputs."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from agentlab.notebooks import discover

pytestmark = pytest.mark.slow


def _outputs(nb):
    for cell in nb.cells:
        yield from cell.get("outputs", [])


def test_every_notebook_ran_and_left_copies_and_figures(tiny_run):
    report = json.loads((tiny_run / "report.json").read_text())
    names = [n["name"] for n in report["notebooks"]]
    assert names == [p.stem for p in discover()]
    for entry in report["notebooks"]:
        assert entry["status"] == "ok", entry
        nb = nbformat.read(entry["executed"], as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "python3"
        assert not [o for o in _outputs(nb) if o.get("output_type") == "error"]
        html = (tiny_run / f"{entry['name']}.html").read_text()
        assert "window.__agentlabDefine" in html  # plotly.js inlined for offline rendering
        assert not re.findall(r"<script[^>]+src=\"https?:", html)  # nothing fetched from a CDN
        assert entry["figures"], f"{entry['name']} exported no figures"
        for fig in entry["figures"]:
            assert (tiny_run / "figures" / entry["name"] / fig["html"]).is_file()


def test_exploration_notebook_shows_pool_benchmarks_and_scores(tiny_run):
    report = json.loads((tiny_run / "report.json").read_text())
    nb01 = next(n for n in report["notebooks"] if n["name"].startswith("01"))
    assert {f["name"] for f in nb01["figures"]} >= {"pool_overview", "benchmark_tasks", "bertscore_by_domain"}
    nb = nbformat.read(nb01["executed"], as_version=4)
    text = "".join(o.get("text", "") for o in _outputs(nb))
    assert "pool: 30 agents" in text
    assert "scored 18 pairs in 3 domains" in text  # tiny: 4 demos x 3 domains -> 6 pairs each
