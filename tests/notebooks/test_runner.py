"""The papermill runner: parameter validation, ordering, stopping at the first failure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from agentlab.errors import ConfigError
from agentlab.notebooks import NotebookFailedError, RunParams, declared_parameters, discover, parameters_for, run_notebooks, select

PARAMS = 'run_dir = None\nfigures_dir = None\nn = 1\n'


def _write(folder: Path, name: str, *cells: str) -> Path:
    nb = new_notebook(cells=[new_code_cell(PARAMS, metadata={"tags": ["parameters"]})] + [new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = folder / name
    nbformat.write(nb, str(path))
    return path


def _yaml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "p.yaml"
    p.write_text(text)
    return p


def test_select_by_prefix_and_stem(tmp_path):
    nbs = [_write(tmp_path, f"0{i}_n{i}.ipynb") for i in (1, 2, 3)]
    assert discover(tmp_path) == nbs
    assert select(nbs, ["3"]) == [nbs[2]]
    assert select(nbs, ["03,01"]) == [nbs[0], nbs[2]]  # always in notebook order
    assert select(nbs, "02_n2") == [nbs[1]]
    with pytest.raises(ConfigError, match="matches no notebook"):
        select(nbs, ["07"])


def test_parameters_merge_common_and_own_and_reject_unknown(tmp_path):
    nb = _write(tmp_path, "01_a.ipynb")
    cfg = RunParams.from_yaml(_yaml(tmp_path, 'common: {n: 2, other: 5}\nnotebooks: {1: {n: 3}}\n'))
    p = parameters_for(nb, cfg, tmp_path / "run")
    assert p["n"] == 3 and "other" not in p  # own wins; undeclared common keys are not injected
    assert p["figures_dir"].endswith("figures/01_a")
    cfg = RunParams.from_yaml(_yaml(tmp_path, 'notebooks: {"01": {m: 3}}\n'))
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) m for 01_a.ipynb"):
        parameters_for(nb, cfg, tmp_path)


def test_bad_parameter_files_name_the_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        RunParams.from_yaml(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"p.yaml:\d+: not valid YAML"):
        RunParams.from_yaml(_yaml(tmp_path, "common:\n  a: [1\n"))
    with pytest.raises(ConfigError, match="export_pgn"):
        RunParams.from_yaml(_yaml(tmp_path, "export_pgn: true\n"))


def test_shipped_parameter_files_fit_the_notebooks(tmp_path):
    from agentlab.notebooks import PARAMS_DIR

    for name in ("tiny", "default", "full"):
        cfg = RunParams.from_yaml(PARAMS_DIR / f"{name}.yaml")
        for nb in discover():
            parameters_for(nb, cfg, tmp_path)  # raises on a misspelt key


def test_runs_in_order_and_stops_at_the_first_failing_cell(tmp_path):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    _write(nbs, "01_ok.ipynb", "from pathlib import Path\nPath(run_dir, 'order.txt').open('a').write('01 %d\\n' % n)")
    _write(nbs, "02_bad.ipynb", "x = 1", "raise ValueError(f'broken on purpose n={n}')", "y = 2")
    _write(nbs, "03_never.ipynb", "from pathlib import Path\nPath(run_dir, 'order.txt').open('a').write('03\\n')")
    cfg = RunParams(common={"n": 7}, export_png=False)
    out = tmp_path / "run"
    with pytest.raises(NotebookFailedError) as err:
        run_notebooks(params=cfg, out=out, notebooks_dir=nbs, progress_bar=False)
    e = err.value
    assert "ValueError: broken on purpose n=7" in str(e)
    assert e.where.endswith("02_bad.ipynb: cell 2")  # parameters cell 0, x = 1, then the failing one
    assert "raise ValueError" in e.cell_source
    assert (out / "order.txt").read_text() == "01 7\n"  # 03 never ran
    assert (out / "02_bad.ipynb").exists() and (out / "02_bad.html").exists()
    report = json.loads((out / "report.json").read_text())
    assert [n["status"] for n in report["notebooks"]] == ["ok", "failed"]
    assert "broken on purpose" in report["notebooks"][1]["error"]


def test_every_parameter_says_its_type(tmp_path):
    """A None default carries no type: its comment must start with ``TYPE or None:`` so that a
    parameter file's value can be checked (issue #23)."""
    from agentlab.notebooks import declared_kind

    for nb in discover():
        for name, decl in declared_parameters(nb).items():
            default = None if decl["default"] == "None" else "something"
            assert declared_kind(decl, default) is not None, f"{nb.name}: {name} = None needs '# TYPE or None: ...'"


@pytest.mark.parametrize(("body", "says"), [
    ("notebooks:\n  \"03\":\n    per_agent: many\n", "notebooks.03.per_agent: expected int or None"),
    ("notebooks:\n  \"03\":\n    agents: SheetAgent\n", "notebooks.03.agents: expected list or None"),
    ("notebooks:\n  \"04\":\n    per_agent: -3\n", "notebooks.04.per_agent: must not be negative"),
    ("notebooks:\n  \"04\":\n    scale_points: [1, -5]\n", "notebooks.04.scale_points: must not be negative"),
    ("notebooks:\n  \"03\":\n    max_eval_tasks: -1\n", "notebooks.03.max_eval_tasks: must not be negative"),
])
def test_values_of_the_wrong_type_or_sign_are_one_line_naming_the_line(tmp_path, body, says):
    from agentlab.notebooks import check_params

    cfg = RunParams.from_yaml(_yaml(tmp_path, body))
    with pytest.raises(ConfigError, match=r"p.yaml:\d+: " + re.escape(says)):
        check_params(cfg, discover())
