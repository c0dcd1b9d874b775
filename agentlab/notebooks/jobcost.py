"""How long the main job will take with given parameters, known before it runs.

``make run`` must finish in about 15 minutes on the 2-core machine, and a new notebook section
or a larger default can silently push it past that (it happened: notebook 04 once stopped on
the 1,800 s cell limit). Running all five notebooks inside the test suite costs too much, so
the suite checks a *cost model* instead:

- every expensive cell is a :class:`Section`: a marker string that finds the cell, and the
  parameters whose product the cell's work grows with (``[exec_arms, exec_tasks]``: lists count
  their items, numbers their value, booleans 0/1);
- its seconds and the workload it had were measured in one real run (``fit``), and an estimate
  scales them linearly with the workload the new parameters give; the rest of each notebook is a
  fixed cost from the same run;
- every parameter a notebook declares is in some section's workload, or listed as free (it
  changes no cost), or as unmodelled (it changes the cost in a way the model does not scale:
  said, not hidden), so a new parameter cannot be added without saying what it costs.

Linear scaling ignores per-cell overheads (a model load), so the estimate is a guard, not a
promise: refit from a fresh ``make run`` whenever the sections change (``agentlab notebooks cost
--fit RUN``). This module is pure (dicts in, numbers out); :mod:`agentlab.notebooks` resolves a
parameter file into the per-notebook values it needs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.config import load_config
from agentlab.errors import ConfigError, DataError
from agentlab.fileio import atomic_write_text
from agentlab.paths import REPO_ROOT

#: the committed model: fitted from the last measured ``make run``
DEFAULT_MODEL = REPO_ROOT / "notebooks" / "params" / "cost_model.yaml"


class Section(BaseModel):
    """One expensive cell: found by ``cell`` (a substring of its source) in notebook ``notebook``."""

    model_config = ConfigDict(extra="forbid")

    notebook: str
    cell: str
    #: parameters whose product the cell's work grows with
    workload: list[str]
    #: measured in the fitted run (None until fitted)
    seconds: float | None = None
    #: the workload's parameter values in the fitted run
    measured: dict[str, Any] = Field(default_factory=dict)
    #: what a ``None`` parameter means to this cell: every item (``all``) or nothing to do (``off``)
    none_means: Literal["all", "off"] = "all"


class CostModel(BaseModel):
    """Sections, free parameters and per-notebook fixed costs of the main job."""

    model_config = ConfigDict(extra="forbid")

    #: the run the figures come from, and when
    fitted_from: str | None = None
    fitted_at: str | None = None
    #: the notebooks' share of `make run`'s 15 minutes: on a fresh clone of the 2-core machine the
    #: install, the embedded model's conversion and the runner's own work took 231 s (2026-11-26),
    #: so the notebooks get 11 minutes
    limit_s: float = 660.0
    #: seconds of each notebook outside its sections (kernel start, imports, small cells)
    fixed: dict[str, float] = Field(default_factory=dict)
    sections: list[Section]
    #: per notebook: parameters that change no cost (paths, titles, seeds, display options)
    free: dict[str, list[str]] = Field(default_factory=dict)
    #: per notebook: parameters that change the cost in ways the sections do not scale
    unmodelled: dict[str, list[str]] = Field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = DEFAULT_MODEL) -> CostModel:
        return load_config(cls, path, what="cost model")

    def save(self, path: Path = DEFAULT_MODEL) -> None:
        import yaml

        atomic_write_text(path, yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False, width=110))


def size(value: Any, none_means: str = "all") -> float:
    """How much work one parameter value stands for: items of a list, a number, 0/1 for a flag or
    a name; ``None`` is NaN where it means "all" (unknown without the data) and 0 where "off"."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return float(bool(value))
    if isinstance(value, (list, tuple, dict, set)):
        return float(len(value))
    if value is None:
        return math.nan if none_means == "all" else 0.0
    raise ConfigError(f"cannot size parameter value {value!r} for the cost model")


def workload(section: Section, values: Mapping[str, Any]) -> float:
    """The product of the section's parameter sizes under ``values``."""
    out = 1.0
    for name in section.workload:
        if name not in values:
            raise ConfigError(f"cost model: notebook {section.notebook} has no parameter {name!r} "
                              f"(section {section.cell!r})")
        out *= size(values[name], section.none_means)
    return out


def section_seconds(section: Section, values: Mapping[str, Any]) -> float:
    """The section's estimated seconds: measured seconds x (workload now / workload measured).

    A parameter that means "all" (``None``) now counts as the measured run's value when the run had
    it as "all" too, and as more than any number otherwise (an error: give a number or refit); a
    number where the measured run had "all" is taken as at most the measured cost."""
    if section.seconds is None:
        raise ConfigError(f"cost model: section {section.cell!r} of notebook {section.notebook} was never "
                          "measured; run `make run` and `agentlab notebooks cost --fit RUN`")
    now = workload(section, values)
    if now == 0:
        return 0.0
    was = workload(section, {**values, **section.measured})
    for name in section.workload:
        cur, old = values.get(name), section.measured.get(name, values.get(name))
        if cur is None and old is not None and section.none_means == "all":
            raise ConfigError(f"cost model: notebook {section.notebook}: {name} = None means 'all' but the "
                              f"measured run had {old!r}; give a number or refit")
    if was == 0:
        raise ConfigError(f"cost model: section {section.cell!r} of notebook {section.notebook} did no work "
                          "in the measured run, so its cost is unknown; refit from a run that enables it")
    if math.isnan(now) or math.isnan(was):
        # the "all" factors are equal (or now smaller): scale by the factors that are numbers
        known = [n for n in section.workload if not math.isnan(size(values[n], section.none_means))
                 and not math.isnan(size(section.measured.get(n, values[n]), section.none_means))]
        sub = section.model_copy(update={"workload": known})
        now, was = workload(sub, values), workload(sub, {**values, **section.measured})
        if was == 0:
            return section.seconds
    return section.seconds * now / was


def estimate(model: CostModel, values: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Estimated seconds per notebook (``{"04": 512.0, ...}``) for per-notebook parameter values."""
    out: dict[str, float] = {}
    for key, vals in values.items():
        secs = model.fixed.get(key, 0.0)
        secs += sum(section_seconds(s, vals) for s in model.sections if s.notebook == key)
        out[key] = secs
    return out


def uncosted(model: CostModel, declared: Mapping[str, list[str]], runner_params: tuple[str, ...]) -> list[str]:
    """``NN.param`` for every declared parameter that is not a section's workload, free or unmodelled."""
    missing = []
    for key, names in declared.items():
        known = {n for s in model.sections if s.notebook == key for n in s.workload}
        known |= set(model.free.get(key, [])) | set(model.unmodelled.get(key, [])) | set(runner_params)
        missing += [f"{key}.{n}" for n in names if n not in known]
    return missing


def cell_durations(executed: Path) -> list[tuple[str, float]]:
    """(source, seconds) of every code cell of a papermill-executed notebook."""
    try:
        nb = json.loads(executed.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read executed notebook ({exc})", where=executed) from None
    out = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        secs = (cell.get("metadata", {}).get("papermill") or {}).get("duration")
        out.append((src, float(secs or 0.0)))
    return out


def match(section: Section, cells: list[tuple[str, float]]) -> tuple[str, float]:
    """The one cell whose source holds the section's marker (a marker that finds 0 or 2 cells is a bug)."""
    hits = [c for c in cells if section.cell in c[0]]
    if len(hits) != 1:
        raise ConfigError(f"cost model: marker {section.cell!r} finds {len(hits)} cells in notebook "
                          f"{section.notebook} (want exactly 1)")
    return hits[0]


def fit(model: CostModel, run_dir: Path, defaults: Mapping[str, Mapping[str, Any]]) -> CostModel:
    """The model refitted from a finished run: each section's measured seconds and workload,
    and each notebook's remaining time as its fixed cost. The workload is what the run itself
    recorded (``report.json``: the parameters injected into each notebook) over ``defaults``,
    the notebooks' declared defaults -- not what a parameter file says now."""
    try:
        report = json.loads((run_dir / "report.json").read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"not a finished run folder ({exc})", where=run_dir) from None
    fitted = model.model_copy(deep=True)
    fitted.fitted_from, fitted.fitted_at = run_dir.name, report.get("started")
    for nb in report.get("notebooks", []):
        key = nb["name"][:2]
        if nb.get("status") != "ok" or not nb.get("executed"):
            raise DataError(f"notebook {nb['name']} did not finish in that run; fit from a complete run", where=run_dir)
        cells = cell_durations(Path(nb["executed"]))
        used = {**defaults.get(key, {}), **(nb.get("parameters") or {})}
        in_sections = 0.0
        for s in fitted.sections:
            if s.notebook != key:
                continue
            _, secs = match(s, cells)
            s.seconds = round(secs, 1)
            s.measured = {n: used[n] for n in s.workload}
            in_sections += secs
        fitted.fixed[key] = round(max(float(nb["seconds"]) - in_sections, 0.0), 1)
    return fitted
