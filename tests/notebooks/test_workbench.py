"""Every shipped notebook runs end to end with tiny parameters and leaves its outputs."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from agentlab.eval import public_lists
from agentlab.notebooks import discover
from agentlab.paths import REPO_ROOT as REPO

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
        for fig in entry["figures"]:  # a plotly page, or a picture written as PNG directly
            assert (tiny_run / "figures" / entry["name"] / (fig["html"] or fig["png"])).is_file()


def test_exploration_notebook_shows_pool_benchmarks_and_scores(tiny_run):
    report = json.loads((tiny_run / "report.json").read_text())
    nb01 = next(n for n in report["notebooks"] if n["name"].startswith("01"))
    figures = {f["name"] for f in nb01["figures"]}
    assert figures >= {"pool_overview", "bertscore_by_domain", "explored_screen"}
    if public_lists.available():
        assert "benchmark_tasks" in figures and not nb01["skipped"]
    else:  # a clone without the public lists: one line says what was skipped and how to fill it
        assert "benchmark_tasks" not in figures
        assert [ln.split(" --")[0] for ln in nb01["skipped"]] == ["skipped: the benchmark overview (OSWorld and AppAgent tasks per domain)"]
    nb = nbformat.read(nb01["executed"], as_version=4)
    text = "".join(o.get("text", "") for o in _outputs(nb))
    assert "pool: 37 agents" in text
    # tiny: calc and writer have 24 demonstrations each, clock 12: 276 + 276 + 66 same-domain pairs
    assert "scored 618 pairs in 3 domains" in text
    assert "exploration: " in text or "exploration stopped with an error" in text
    assert (tiny_run / "exploration" / "gtk_demo" / "traj.jsonl").is_file()


def test_trajectories_notebook_recorded_and_replayed_real_episodes(tiny_run):
    from agentlab.envs.trajectory import list_episodes

    episodes = {e.episode: e for e in list_episodes(tiny_run / "trajectories")}
    assert {"demonstration", "appagent_00"} <= set(episodes)
    assert episodes["demonstration"].status == "done" and episodes["demonstration"].steps == 5
    assert (tiny_run / "trajectories" / "demonstration" / "step_000_som.png").is_file()
    nb = nbformat.read(tiny_run / "05_trajectories.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in _outputs(nb))
    assert "'greeting': 'Hello, Ada!'" in text  # the app's own state after the scripted demonstration
    assert "same as the demonstration's: True" in text
    # an execution episode ran through the store's episode runner and is listed by the inspector
    from agentlab.fileio import read_jsonl

    rows = {r["id"]: r for r in read_jsonl(tiny_run / "05_exec" / "results.jsonl")}
    assert rows["csv-sales-summary"]["agents"] == ["SheetAgent"] and rows["clock-vibrate-off"]["agents"] == ["ClockAgent"]
    assert all(r["error"] is None for r in rows.values())  # both envs (workspace, fake phone) were built
    assert "execution_acc=" in text and set(rows) <= {e.episode for e in list_episodes(tiny_run / "05_exec" / "episodes")}
    assert list((tiny_run / "05_exec" / "episodes" / "clock-vibrate-off").glob("*.png"))  # the phone agent's screenshots
    # PC-Agent carried a desktop task out (tiny: one step) and its role messages were printed
    (arch_row,) = read_jsonl(tiny_run / "05_arch" / "variants" / "pc_agent" / "results.jsonl")
    assert arch_row["agents"] == ["PCAgent"] and arch_row["error"] is None and arch_row["subtasks"] >= 1
    assert "manager:" in text and ("decision:" in text or "no role messages recorded" not in text)
    # the specialist's calls were shown, and a Chromium GUI solution was replayed and recorded
    assert "csv-sales-summary by SheetAgent" in text
    assert "ok   chrome-g-show-home-button: start 0.00, solved 1.00" in text
    assert list((tiny_run / "05_gui_replay" / "replay").glob("*.png"))


def test_token_training_notebook_enrolled_the_new_agents_without_touching_the_old_tokens(tiny_run):
    nb = nbformat.read(tiny_run / "03_token_training.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in _outputs(nb))
    assert "old token rows bit-identical after enrolment: True" in text
    assert "'AgentS2': {'train_acc'" in text and "pc-attendees-to-roster" in text


@pytest.mark.skipif(__import__("agentlab.viz.chromium", fromlist=["x"]).find_chromium() is None,
                    reason="no chromium installed (scripts/sysdeps.sh installs it)")
def test_trajectories_html_renders_figures_and_screenshots_in_chromium(tiny_run):
    from PIL import Image

    from agentlab.viz.chromium import dump_dom, screenshot

    page = tiny_run / "05_trajectories.html"
    dom = dump_dom(page, budget_ms=8000)
    graphs = dom.count('class="plotly-graph-div')
    drawn = dom.count('class="main-svg"')
    assert graphs >= 4  # inspector timelines (2) + exported timelines (2)
    assert drawn >= graphs  # plotly drew every figure (it adds its svg layers only when it runs)
    steps = dom.count('class="agentlab-step"')
    assert steps >= 5  # the demonstration's screenshots, with actions drawn, embedded in the page
    assert dom.count('src="data:image/png;base64,') >= steps + 1  # + the close-up image
    shot = screenshot(page, tiny_run / "05_trajectories.page.png", width=1280, height=4000, budget_ms=8000)
    img = Image.open(shot).convert("L")
    assert img.size == (1280, 4000)
    assert len(img.resize((64, 200)).getcolors(1 << 16)) > 20  # a rendered page, not a blank one


def _curve_figures() -> set[str]:
    """The Figure 3 / 5 curves notebook 04 draws from the committed Table 1 record (those it has arms for)."""
    from agentlab.experiments.table1 import record_curves

    record = REPO / "benchmarks" / "results" / "table1_record.json"
    if not record.is_file():
        return set()
    return {name for axis, name in (("store", "table1_fig3_store"), ("demos", "table1_fig5_demos"))
            if record_curves(record, axis)}


def test_routing_notebook_measured_every_router_it_was_given(tiny_run):
    report = json.loads((tiny_run / "report.json").read_text())
    nb04 = next(n for n in report["notebooks"] if n["name"].startswith("04"))
    assert {f["name"] for f in nb04["figures"]} == {"table4_accuracy", "overall_accuracy", "table5_cost", "figure3_scaling", "figure5_data_size",
                                                   "table1_execution_acc", "table7_exec_cost",
                                                   "project_domain_accuracy", "project_agent_accuracy",
                                                   "backbones_acc_313", "backbones_acc_v2_domain",
                                                   "heldout_execution_acc", "generalist_fallback"} | (
        {"heldout_v2_execution_acc"} if (REPO / "benchmarks" / "results" / "heldout_v2_record.json").is_file() else set()) | (
        {"table1_store"} if (REPO / "benchmarks" / "results" / "table1_record.json").is_file() else set()) | _curve_figures()
    # the last four (and table1_store and its curves) read committed records
    page = (tiny_run / "figures" / nb04["name"] / "table4_accuracy.html").read_text()
    for router in nb04["parameters"]["routers"]:
        assert f'"{router}"' in page  # one row per router in the Table 4 heatmap
    nb = nbformat.read(nb04["executed"], as_version=4)
    text = "".join(o.get("text", "") for o in _outputs(nb))
    assert "GUI first: 1:" in text and "CLI first: 1:" in text  # the Figure 3 orders ran
    if public_lists.available():
        assert "'top-3 recall'" in text  # manager-mode metrics were computed
    else:
        assert any(ln.startswith("skipped: manager mode on OSWorld's multi-app tasks") for ln in nb04["skipped"])
    # the Table 1 analog executed its task with each arm: rows on disk, one per arm
    for arm in nb04["parameters"]["exec_arms"]:
        rows = (tiny_run / "04_exec" / "table1" / "arms" / arm / "results.jsonl").read_text().splitlines()
        assert len(rows) == nb04["parameters"]["exec_tasks"]


#: what a warning looks like in an output: Python's ``path:line: FutureWarning: ...``, transformers'
#: ``[transformers] ... deprecated``, a logger's ``WARNING`` line
NOISE = re.compile(r"\b[A-Z]\w*Warning\b|\[transformers\]|\bis deprecated\b|^WARNING\b", re.MULTILINE)


def test_executed_notebooks_carry_no_warnings_and_no_stderr(tiny_run):
    """Library noise (deprecations, progress bars) and stray stderr make an executed notebook hard
    to read; every output must be what the notebook meant to show (issue #29)."""
    report = json.loads((tiny_run / "report.json").read_text())
    noisy = []
    for entry in report["notebooks"]:
        nb = nbformat.read(entry["executed"], as_version=4)
        for i, cell in enumerate(nb.cells):
            for out in cell.get("outputs", []):
                text = out.get("text", "") if out.get("output_type") == "stream" else out.get("data", {}).get("text/plain", "")
                if out.get("output_type") == "stream" and out.get("name") == "stderr":
                    noisy.append(f"{entry['name']} cell {i}: stderr: {text[:200]!r}")
                elif NOISE.search(text):
                    noisy.append(f"{entry['name']} cell {i}: {NOISE.search(text).group(0)} in {text[:200]!r}")
    assert not noisy, "\n".join(noisy)
    # notebook 05 wrote the static viewer of its execution run and said where
    assert (tiny_run / "05_exec" / "view" / "index.html").is_file()
    nb05 = nbformat.read(tiny_run / "05_trajectories.ipynb", as_version=4)
    assert "static viewer of 05_exec: " in "".join(o.get("text", "") for o in _outputs(nb05))
