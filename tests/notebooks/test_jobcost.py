"""The main job's cost model: the guard that keeps `make run` within its limit (issue #27).

The committed model (notebooks/params/cost_model.yaml) is fitted from a measured `make run`;
these tests check that the default parameters stay under the limit by that model, that every
notebook parameter says what it costs, that the markers still find their cells, and that the
estimate reacts to the parameters it claims to scale with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.notebooks import jobcost
from agentlab.errors import ConfigError, DataError
from agentlab.notebooks import PARAMS_DIR, RUNNER_PARAMS, RunParams, discover, effective_parameters


@pytest.fixture(scope="module")
def defaults() -> dict[str, dict]:
    return effective_parameters(RunParams.from_yaml(PARAMS_DIR / "default.yaml"), discover())


@pytest.fixture(scope="module")
def model() -> jobcost.CostModel:
    return jobcost.CostModel.load()


def test_the_committed_model_is_fitted_and_its_markers_find_one_cell_each(model):
    assert model.fitted_from and model.fitted_at, "fit it: make run, then agentlab notebooks cost --fit RUN"
    notebooks = {p.stem[:2]: p for p in discover()}
    assert set(model.fixed) == set(notebooks)
    for s in model.sections:
        assert s.seconds is not None, s.cell
        jobcost.match(s, jobcost.cell_durations(notebooks[s.notebook]))


def test_every_notebook_parameter_says_what_it_costs(model, defaults):
    assert jobcost.uncosted(model, {k: list(v) for k, v in defaults.items()}, RUNNER_PARAMS) == []


def test_the_default_parameters_fit_the_main_jobs_limit(model, defaults):
    secs = jobcost.estimate(model, defaults)
    assert set(secs) == {"01", "02", "03", "04", "05"}
    assert sum(secs.values()) <= model.limit_s, {k: round(v) for k, v in secs.items()}


def test_the_estimate_scales_with_a_sections_workload(model, defaults):
    base = jobcost.estimate(model, defaults)["04"]
    section = next(s for s in model.sections if s.cell.startswith("executed = execution_acc.run("))
    doubled = {**defaults, "04": {**defaults["04"], "exec_tasks": 2 * defaults["04"]["exec_tasks"]}}
    assert jobcost.estimate(model, doubled)["04"] == pytest.approx(base + section.seconds * defaults["04"]["exec_tasks"]
                                                                   / section.measured["exec_tasks"])
    none_run = {**defaults, "05": {**defaults["05"], "gui_replay_task": None}}  # None means off there
    assert jobcost.estimate(model, none_run)["05"] < jobcost.estimate(model, defaults)["05"]


def test_a_section_the_measured_run_left_off_cannot_be_estimated(model, defaults):
    on = {**defaults, "04": {**defaults["04"], "exec_docs_ablation": True}}
    with pytest.raises(ConfigError, match="did no work in the measured run"):
        jobcost.estimate(model, on)
    all_tasks = {**defaults, "04": {**defaults["04"], "max_eval_tasks": None}}
    with pytest.raises(ConfigError, match="means 'all'"):
        jobcost.estimate(model, all_tasks)


def _executed(path: Path, cells: list[tuple[str, float]]) -> Path:
    nb = {"cells": [{"cell_type": "code", "source": src, "metadata": {"papermill": {"duration": d}}, "outputs": []}
                    for src, d in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def test_fit_reads_the_cells_of_a_finished_run(tmp_path):
    nb = _executed(tmp_path / "01_x.ipynb", [("import x", 2.0), ("out = heavy(n)", 30.0), ("show(out)", 1.0)])
    (tmp_path / "report.json").write_text(json.dumps(
        {"started": "2026-11-25T07:00:00", "notebooks": [{"name": "01_x", "status": "ok", "seconds": 40.0, "executed": str(nb),
                                                          "parameters": {"run_dir": str(tmp_path), "n": 3}}]}))
    spec = jobcost.CostModel(sections=[jobcost.Section(notebook="01", cell="heavy(", workload=["n", "flag"])],
                             free={"01": ["seed"]})
    # the run's recorded n=3 wins over the declared default n=1
    fitted = jobcost.fit(spec, tmp_path, {"01": {"n": 1, "flag": True, "seed": 0}})
    assert fitted.sections[0].seconds == 30.0 and fitted.sections[0].measured == {"n": 3, "flag": True}
    assert fitted.fixed == {"01": 10.0} and fitted.fitted_at == "2026-11-25T07:00:00"
    assert jobcost.estimate(fitted, {"01": {"n": 6, "flag": True, "seed": 1}}) == {"01": 70.0}
    assert jobcost.estimate(fitted, {"01": {"n": 6, "flag": False, "seed": 1}}) == {"01": 10.0}
    assert jobcost.uncosted(fitted, {"01": ["n", "flag", "seed", "newcomer"]}, ()) == ["01.newcomer"]
    (tmp_path / "report.json").write_text(json.dumps({"notebooks": [{"name": "01_x", "status": "failed", "seconds": 5}]}))
    with pytest.raises(DataError, match="did not finish"):
        jobcost.fit(spec, tmp_path, {"01": {"n": 3, "flag": True}})
    spec.sections[0].cell = "nowhere("
    (tmp_path / "report.json").write_text(json.dumps(
        {"notebooks": [{"name": "01_x", "status": "ok", "seconds": 40.0, "executed": str(nb)}]}))
    with pytest.raises(ConfigError, match="finds 0 cells"):
        jobcost.fit(spec, tmp_path, {"01": {"n": 3, "flag": True}})


def test_the_cost_command_prints_the_estimate_and_refuses_an_over_long_job(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "agentlab.cli", "notebooks", "cost"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "total:" in ok.stdout and "04:" in ok.stdout
    import yaml

    params = yaml.safe_load((PARAMS_DIR / "default.yaml").read_text())
    params["notebooks"]["04"]["exec_tasks"] = 200  # the defaults with one section made much bigger
    big = tmp_path / "big.yaml"
    big.write_text(yaml.safe_dump(params))
    bad = subprocess.run([sys.executable, "-m", "agentlab.cli", "notebooks", "cost", "--params", str(big)],
                         capture_output=True, text=True)
    assert bad.returncode != 0
    errors = [ln for ln in bad.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "over the 11 min limit" in errors[0], bad.stderr
