"""Run the workbench notebooks unattended, in order, through papermill: the project's main job.

``run_notebooks`` executes ``notebooks/NN_*.ipynb`` one after another in kernel ``python3``
with parameters from one YAML file (``notebooks/params/default.yaml`` unless told), stops at
the first failing notebook and says which cell failed, and leaves in the run folder:

- ``NN_name.ipynb``  the executed copy (also the failed one, up to the failing cell),
- ``NN_name.html``   its static HTML export (offline: plotly.js inlined, no CDN scripts),
- ``NN_name.page.png`` a headless-Chromium screenshot of that page (``page_screenshots``),
- ``figures/NN_name/<figure>.html|.png``  every figure the notebook showed,
- ``report.json``    what ran, how long, which figures, and any failure.

A parameter file names, per notebook, only parameters that notebook's ``parameters`` cell
declares; a misspelt key is an error before anything runs.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agentlab.config import line_of, load_mapping, validate
from agentlab.errors import AgentlabError, ConfigError, EnvironmentUnavailableError
from agentlab.fileio import atomic_write_json, atomic_write_text
from agentlab.paths import REPO_ROOT, runs_dir

log = logging.getLogger(__name__)

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
PARAMS_DIR = NOTEBOOKS_DIR / "params"
#: Parameters the runner injects into every notebook (each parameters cell declares them).
RUNNER_PARAMS = ("run_dir", "figures_dir")


#: set for the notebook kernels only: a tqdm bar in an executed notebook is kept as a stderr stream
#: of carriage-return frames, noise to every reader (the runner reports each notebook's progress)
KERNEL_ENV = {"TQDM_DISABLE": "1"}


@contextmanager
def kernel_env() -> Iterator[None]:
    """:data:`KERNEL_ENV` in the environment while a kernel starts (a variable the user set wins).

    tqdm reads ``TQDM_*`` once, when it is imported, so it is imported here first: the runner's
    own cell bar (papermill's) keeps working."""
    import tqdm  # noqa: F401

    added = {k: v for k, v in KERNEL_ENV.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


@contextmanager
def _skips_recorded(path: Path) -> Iterator[None]:
    """Tell the kernel where to record skipped sections (:data:`agentlab.eval.public_lists.SKIPS_ENV`)."""
    from agentlab.eval.public_lists import SKIPS_ENV

    old = os.environ.get(SKIPS_ENV)
    os.environ[SKIPS_ENV] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(SKIPS_ENV, None)
        else:
            os.environ[SKIPS_ENV] = old


class NotebookFailedError(AgentlabError):
    """A notebook cell raised; the executed copy up to that cell is kept."""

    def __init__(self, message: str, *, where: str | Path | None = None, cell_source: str = "", traceback: str = ""):
        super().__init__(message, where=where)
        self.cell_source = cell_source
        self.traceback = traceback


class RunParams(BaseModel):
    """One run's settings: a parameter file loaded from YAML.

    ``common`` goes to every notebook that declares the key; ``notebooks`` maps a notebook's
    two-digit prefix (``"03"``) to its own parameters, which win over ``common``.
    """

    model_config = ConfigDict(extra="forbid")

    common: dict[str, Any] = Field(default_factory=dict)
    notebooks: dict[str, dict[str, Any]] = Field(default_factory=dict)
    export_png: bool = True
    #: also save a screenshot of each executed notebook's HTML page (``NN_name.page.png``)
    page_screenshots: bool = False
    docs_img: Path | None = None
    cell_timeout_s: int = 1800
    source: str = "<defaults>"
    _text: str | None = PrivateAttr(default=None)

    @classmethod
    def from_yaml(cls, path: str | Path) -> RunParams:
        path = Path(path)
        raw, text = load_mapping(path, what="parameter file", allow_empty=False)
        notebooks = raw.get("notebooks") or {}
        if not isinstance(notebooks, dict):
            raise ConfigError("notebooks: must map notebook prefixes (\"03\") to parameters", where=path)
        raw["notebooks"] = {str(k).zfill(2): v or {} for k, v in notebooks.items()}
        cfg = validate(cls, {**raw, "source": str(path)}, where=path, text=text)
        cfg._text = text
        return cfg

    def where(self, *loc: Any) -> str:
        """``source:line`` of the key at ``loc`` (the line when the file is known)."""
        line = None
        if self._text is not None:
            line = line_of(self._text, loc)
            if line is None and loc[:1] == ("notebooks",) and len(loc) > 1:  # written unquoted: 3:
                line = line_of(self._text, ("notebooks", str(int(loc[1])), *loc[2:]))
        return f"{self.source}:{line}" if line else self.source


@dataclass
class NotebookResult:
    """What happened to one notebook."""

    name: str
    status: str  # ok | failed | skipped
    seconds: float = 0.0
    executed: str | None = None
    html: str | None = None
    figures: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    #: sections the notebook skipped, one line each with the command that fills them
    #: (``agentlab.eval.public_lists.skip``)
    skipped: list[str] = field(default_factory=list)


@dataclass
class RunReport:
    """The whole run; written to ``<out>/report.json``."""

    out: str
    params: str
    started: str
    notebooks: list[NotebookResult] = field(default_factory=list)
    docs_img: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(n.status == "ok" for n in self.notebooks)


def discover(folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The ordered notebooks: ``NN_*.ipynb`` sorted by their prefix."""
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb") if p.is_file())
    if not found:
        raise ConfigError("no notebooks named NN_*.ipynb", where=folder)
    return found


def select(notebooks: list[Path], only: list[str] | str | None) -> list[Path]:
    """Keep notebooks whose prefix or stem matches one of ``only`` ("03", "3", "03_token")."""
    if not only:
        return notebooks
    wanted = [only] if isinstance(only, str) else list(only)
    keep: list[Path] = []
    for w in wanted:
        for part in str(w).split(","):
            part = part.strip()
            key = part.zfill(2) if part.isdigit() else part
            hits = [p for p in notebooks if p.stem.startswith(key)]
            if not hits:
                names = ", ".join(p.stem for p in notebooks)
                raise ConfigError(f"--only {part!r} matches no notebook; have {names}")
            keep.extend(h for h in hits if h not in keep)
    return [p for p in notebooks if p in keep]


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """The names (and defaults) in a notebook's ``parameters`` cell."""
    stat = notebook.stat()
    return dict(_inspect(str(notebook), stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=64)
def _inspect(notebook: str, mtime_ns: int, size: int) -> dict[str, Any]:
    """papermill's reading of a parameters cell (~1 s each), once per version of the file."""
    import papermill as pm

    return dict(pm.inspect_notebook(notebook))


def parameters_for(notebook: Path, params: RunParams, run_dir: Path) -> dict[str, Any]:
    """The parameters to inject: runner paths, then ``common`` keys the notebook declares, then
    its own section (every key of which must be declared)."""
    declared = declared_parameters(notebook)
    key = notebook.stem[:2]
    own = params.notebooks.get(key, {})
    unknown = sorted(k for k in own if k not in declared)
    if unknown:
        raise ConfigError(
            f"notebooks.{key}: unknown parameter(s) {', '.join(unknown)} for {notebook.name}; "
            f"it declares {', '.join(sorted(declared))}",
            where=params.source,
        )
    missing = [k for k in RUNNER_PARAMS if k not in declared]
    if missing:
        raise ConfigError(f"parameters cell lacks {', '.join(missing)}", where=notebook)
    out: dict[str, Any] = {
        "run_dir": str(run_dir),
        "figures_dir": str(run_dir / "figures" / notebook.stem),
    }
    out.update({k: v for k, v in params.common.items() if k in declared})
    out.update(own)
    return out


def literal_default(decl: dict[str, Any], key: str) -> Any:
    """A declared parameter's default as a value (None where the notebook computes it)."""
    import ast

    try:
        return ast.literal_eval(str(decl[key].get("default", "None")))
    except (ValueError, SyntaxError):
        return None


def effective_parameters(params: RunParams, notebooks: list[Path]) -> dict[str, dict[str, Any]]:
    """What each notebook would run with: its declared defaults overlaid by the parameter file
    (runner paths left out). The main job's cost model reads these (:mod:`agentlab.notebooks.jobcost`)."""
    out: dict[str, dict[str, Any]] = {}
    for nb in notebooks:
        decl = declared_parameters(nb)
        vals = {k: literal_default(decl, k) for k in decl if k not in RUNNER_PARAMS}
        vals.update({k: v for k, v in parameters_for(nb, params, runs_dir() / "<run>").items() if k not in RUNNER_PARAMS})
        out[nb.stem[:2]] = vals
    return out


def _kind(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", tuple: "list", dict: "dict"}.get(
        type(value), type(value).__name__)


#: a parameter whose default is None says its type at the start of its comment:
#: ``per_agent = None  # int or None: at most this many ...``
NONE_TYPE = re.compile(r"^(bool|int|float|str|list|dict) or None\b")


def declared_kind(decl: dict[str, Any], default: Any) -> str | None:
    """The kind a parameter takes: its default's, or for a None default the ``TYPE or None`` its
    comment starts with (None when neither says: such a parameter is refused by the tests)."""
    if default is not None:
        return _kind(default)
    m = NONE_TYPE.match(str(decl.get("help", "")).strip())
    return m.group(1) if m else None


def _fits(value: Any, want: str | None) -> bool:
    """Whether ``value`` is of kind ``want`` (None fits any declared kind; an int fits a float)."""
    if value is None or want is None:
        return True
    got = _kind(value)
    return got == want or (want == "float" and got == "int")


def _negative(value: Any) -> bool:
    """Whether a number in ``value`` (or in a list or mapping of it) is below zero: counts, sizes,
    seeds, rates and temperatures of the notebooks are never negative."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value < 0
    if isinstance(value, (list, tuple)):
        return any(_negative(v) for v in value)
    if isinstance(value, dict):
        return any(_negative(v) for v in value.values())
    return False


def check_params(params: RunParams, notebooks: list[Path]) -> None:
    """Check the WHOLE parameter file against the notebooks' ``parameters`` cells, before any
    notebook runs: every section names a notebook, every key is declared (by that notebook, or
    for ``common:`` by at least one), and every value has the type of the declared default.
    The first problem raises :class:`ConfigError` as ``file:line: notebooks.04.key: what``."""
    declared = {nb.stem[:2]: (nb, declared_parameters(nb)) for nb in notebooks}

    default = literal_default  # an expression (None): the notebook computes it, no type to compare

    def check(loc: tuple[str, ...], value: Any, decl: dict[str, Any], nb: Path) -> None:
        d = default(decl, loc[-1])
        want = declared_kind(decl[loc[-1]], d)
        shown = repr(value) if len(repr(value)) <= 60 else _kind(value)
        if not _fits(value, want):
            like = f"like the default {d!r}" if d is not None else "as its parameters cell declares"
            raise ConfigError(f"{'.'.join(loc)}: expected {want}{' or None' if d is None else ''} ({like} in {nb.name}), "
                              f"got {shown}", where=params.where(*loc))
        if _negative(value):
            raise ConfigError(f"{'.'.join(loc)}: must not be negative, got {shown}", where=params.where(*loc))

    for key, section in params.notebooks.items():
        if key not in declared:
            raise ConfigError(f"notebooks.{key}: no notebook {key}_*.ipynb; have {', '.join(sorted(declared))}",
                              where=params.where("notebooks", key))
        if not isinstance(section, dict):
            raise ConfigError(f"notebooks.{key}: must be a mapping of parameter names to values",
                              where=params.where("notebooks", key))
        nb, decl = declared[key]
        for name, value in section.items():
            if name not in decl:
                raise ConfigError(f"notebooks.{key}.{name}: unknown parameter for {nb.name}; it declares "
                                  f"{', '.join(sorted(decl))}", where=params.where("notebooks", key, name))
            check(("notebooks", key, name), value, decl, nb)
    for name, value in params.common.items():
        users = [(nb, decl) for nb, decl in declared.values() if name in decl]
        if not users:
            raise ConfigError(f"common.{name}: no notebook declares this parameter; check its spelling",
                              where=params.where("common", name))
        for nb, decl in users:
            check(("common", name), value, decl, nb)


def _json_ready(v: Any) -> Any:
    return str(v) if isinstance(v, Path) else v


def export_html(executed: Path, target: Path) -> Path:
    """Static HTML of an executed notebook that renders offline.

    Outputs that carry both a widget view and an HTML fallback keep only the fallback (no
    widget manager can load offline); widget state and CDN script URLs are dropped.
    """
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(executed), as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data and "text/html" in data:
                data.pop("application/vnd.jupyter.widget-view+json", None)
                data.pop("application/vnd.plotly.v1+json", None)
    exporter = HTMLExporter(template_name="lab")
    empty_js = "data:application/javascript,"
    exporter.require_js_url = empty_js
    exporter.mathjax_url = empty_js
    body, _ = exporter.from_notebook_node(nb)
    atomic_write_text(target, body)
    return target


_INSERTED_TAGS = {"injected-parameters", "papermill-error-cell-tag"}


def _failure(exc: Exception, executed: Path) -> NotebookFailedError:
    """Turn papermill's error into ours, with the failing cell's source."""
    import nbformat

    cell_source, where = "", str(executed)
    try:
        nb = nbformat.read(str(executed), as_version=4)
        # Number cells as in the source notebook: skip what papermill inserted.
        original = [c for c in nb.cells if not set(c.get("metadata", {}).get("tags", [])) & _INSERTED_TAGS]
        for i, cell in enumerate(original):
            if cell.get("cell_type") == "code" and any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
                cell_source, where = cell.source, f"{executed}: cell {i}"
                break
    except Exception:  # the copy may not exist if the kernel never started
        pass
    ename = getattr(exc, "ename", type(exc).__name__)
    # pydantic ends its message with a help URL; keep the field, the bad value and the message
    lines = [ln.strip() for ln in getattr(exc, "evalue", str(exc)).strip().splitlines()]
    lines = [ln for ln in lines if ln and "errors.pydantic.dev" not in ln]
    evalue = ["; ".join(lines[:4])] if "validation error" in " ".join(lines[:1]) else lines
    tb = "\n".join(getattr(exc, "traceback", []) or [])
    return NotebookFailedError(
        f"{ename}: {evalue[-1] if evalue else ''}", where=where, cell_source=cell_source, traceback=tb
    )


def _copy_readme_pngs(figures: list[dict[str, Any]], fig_dir: Path, stem: str, docs_img: Path) -> list[str]:
    copied = []
    for f in figures:
        if f.get("readme") and f.get("png"):
            docs_img.mkdir(parents=True, exist_ok=True)
            dest = docs_img / f"{stem[:2]}_{f['name']}.png"
            shutil.copyfile(fig_dir / f["png"], dest)
            copied.append(str(dest))
    return copied


def run_notebooks(
    only: list[str] | str | None = None,
    params: str | Path | RunParams | None = None,
    out: str | Path | None = None,
    *,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    progress: Callable[[str], None] | None = None,
    progress_bar: bool = True,
    stream_output: bool = False,
) -> RunReport:
    """Execute the notebooks in order; raise :class:`NotebookFailedError` at the first failure
    (after writing the report and the failed notebook's executed copy and HTML)."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    from agentlab.viz.export import export_pngs, read_manifest

    say = progress or (lambda msg: log.info("%s", msg))
    if params is None:
        params = PARAMS_DIR / "default.yaml"
    cfg = params if isinstance(params, RunParams) else RunParams.from_yaml(params)
    found = discover(notebooks_dir)
    chosen = select(found, only)
    # Validate the whole parameter file (every notebook's section, common:) before running anything.
    check_params(cfg, found)
    run_dir = Path(out) if out else runs_dir() / f"notebooks-{datetime.now():%Y%m%d-%H%M%S}"
    run_dir = run_dir.resolve()
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError("--out is a file; expected a run folder", where=run_dir)
    plan = [(nb, parameters_for(nb, cfg, run_dir)) for nb in chosen]
    run_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    report = RunReport(out=str(run_dir), params=cfg.source, started=datetime.now().isoformat(timespec="seconds"))
    docs_img = cfg.docs_img if cfg.docs_img is None or cfg.docs_img.is_absolute() else REPO_ROOT / cfg.docs_img

    def save() -> None:
        atomic_write_json(run_dir / "report.json", asdict(report))

    for i, (nb, nb_params) in enumerate(plan, start=1):
        say(f"[{i}/{len(plan)}] {nb.stem} ...")
        executed = run_dir / nb.name
        fig_dir = Path(nb_params["figures_dir"])
        if fig_dir.exists():
            shutil.rmtree(fig_dir)  # a re-run into the same folder starts the figure list afresh
        result = NotebookResult(
            name=nb.stem, status="failed", executed=str(executed),
            parameters={k: _json_ready(v) for k, v in nb_params.items()},
        )
        report.notebooks.append(result)
        t0 = time.perf_counter()
        failure: NotebookFailedError | None = None
        skips = run_dir / f".{nb.stem}.skipped"
        skips.unlink(missing_ok=True)
        try:
            with kernel_env(), _skips_recorded(skips):
                pm.execute_notebook(
                    str(nb),
                    str(executed),
                    parameters=nb_params,
                    kernel_name="python3",
                    language="python",
                    cwd=str(notebooks_dir),
                    progress_bar=progress_bar,
                    log_output=stream_output,
                    execution_timeout=cfg.cell_timeout_s,
                    request_save_on_cell_execute=True,
                )
            result.status = "ok"
        except PapermillExecutionError as exc:
            failure = _failure(exc, executed)
        except Exception as exc:  # kernel died, timeout, ...
            failure = _failure(exc, executed)
        result.seconds = round(time.perf_counter() - t0, 2)
        if skips.is_file():
            result.skipped = [ln for ln in skips.read_text(encoding="utf-8").splitlines() if ln.strip()]
            skips.unlink()
            for line in result.skipped:
                say(f"  {line}")
        if executed.exists():
            try:
                result.html = str(export_html(executed, executed.with_suffix(".html")))
            except Exception as exc:  # never hide the notebook's own error behind an export error
                report.warnings.append(f"{nb.stem}: HTML export failed: {exc}")
        if cfg.page_screenshots and result.html:
            try:
                from agentlab.viz.chromium import screenshot

                screenshot(result.html, executed.with_suffix(".page.png"), width=1280, height=4000, budget_ms=8000)
            except EnvironmentUnavailableError as exc:
                report.warnings.append(f"{nb.stem}: page screenshot skipped: {exc}")
        figures = [asdict(f) for f in read_manifest(fig_dir)]
        if failure is None and cfg.export_png and figures:
            try:
                figures = [asdict(f) for f in export_pngs(fig_dir)]
            except EnvironmentUnavailableError as exc:
                report.warnings.append(f"{nb.stem}: PNG export skipped: {exc}")
                say(f"  warning: PNG export skipped ({exc})")
        result.figures = figures
        if failure is None and docs_img is not None:
            report.docs_img.extend(_copy_readme_pngs(figures, fig_dir, nb.stem, docs_img))
        if failure is not None:
            result.error = str(failure)
            save()
            say(f"  FAILED after {result.seconds:.0f} s: {failure}")
            raise failure
        say(f"  ok in {result.seconds:.0f} s, {len(figures)} figure(s) -> {executed}")
        save()
    save()
    return report


# ---------------------------------------------------------------- CLI
app = typer.Typer(help="Execute the workbench notebooks through papermill.", no_args_is_help=True)


def _run_cli(only: list[str] | None, params: Path | None, out: Path | None, stream: bool) -> None:
    try:
        report = run_notebooks(only=only, params=params, out=out, progress=typer.echo, stream_output=stream)
    except NotebookFailedError as exc:
        if exc.cell_source:
            typer.echo("failing cell:", err=True)
            for line in exc.cell_source.splitlines():
                typer.echo(f"    {line}", err=True)
        raise
    for w in report.warnings:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(f"done: {len(report.notebooks)} notebook(s) in {report.out}")
    for d in report.docs_img:
        typer.echo(f"  README picture: {d}")


@app.command("run")
def run_cmd(
    only: list[str] = typer.Option(None, "--only", help="Notebook prefix(es) to run, e.g. 03 (repeatable)."),
    params: Path = typer.Option(None, "--params", help="Parameter YAML (default notebooks/params/default.yaml)."),
    out: Path = typer.Option(None, "--out", help="Run folder (default runs/notebooks-<time>/)."),
    stream: bool = typer.Option(False, "--stream", help="Echo the notebooks' own output while they run."),
) -> None:
    """Execute the notebooks in order; stop at the first failing cell."""
    _run_cli(only, params, out, stream)


@app.command("list")
def list_cmd(params: Path = typer.Option(None, "--params", help="Parameter YAML to resolve.")) -> None:
    """List the notebooks and the parameters each would receive."""
    cfg = RunParams.from_yaml(params or PARAMS_DIR / "default.yaml")
    check_params(cfg, discover())
    for nb in discover():
        p = parameters_for(nb, cfg, runs_dir() / "<run>")
        shown = {k: v for k, v in p.items() if k not in RUNNER_PARAMS}
        typer.echo(f"{nb.stem}: {shown}")


@app.command("cost")
def cost_cmd(
    params: Path = typer.Option(None, "--params", help="Parameter YAML (default notebooks/params/default.yaml)."),
    fit: Path = typer.Option(None, "--fit", help="Refit the cost model from this finished run folder (its recorded parameters)."),
    model_path: Path = typer.Option(None, "--model", help="Cost model YAML (default notebooks/params/cost_model.yaml)."),
) -> None:
    """Estimate the main job's time per notebook before running it (or refit the estimate from a run)."""
    from agentlab.notebooks import jobcost

    cfg = RunParams.from_yaml(params or PARAMS_DIR / "default.yaml")
    notebooks = discover()
    check_params(cfg, notebooks)
    values = effective_parameters(cfg, notebooks)
    target = model_path or jobcost.DEFAULT_MODEL
    model = jobcost.CostModel.load(target)
    if fit is not None:  # the run's own recorded parameters over the declared defaults
        model = jobcost.fit(model, fit, effective_parameters(RunParams(), notebooks))
        model.save(target)
        typer.echo(f"cost model refitted from {fit} -> {target}")
    if missing := jobcost.uncosted(model, {k: list(v) for k, v in values.items()}, RUNNER_PARAMS):
        typer.echo(f"warning: parameters with no cost entry: {', '.join(missing)}", err=True)
    secs = jobcost.estimate(model, values)
    for key, s in secs.items():
        typer.echo(f"{key}: {s:6.0f} s")
    total = sum(secs.values())
    typer.echo(f"total: {total:.0f} s ({total / 60:.1f} min; limit {model.limit_s / 60:.0f} min)")
    if total > model.limit_s:
        raise ConfigError(f"the main job would take about {total / 60:.0f} min with {cfg.source}, over the "
                          f"{model.limit_s / 60:.0f} min limit; lower the defaults or move the study to full.yaml")


def main_job(
    params: Path = typer.Option(None, "--params", help="Parameter YAML (default notebooks/params/default.yaml)."),
    out: Path = typer.Option(None, "--out", help="Run folder (default runs/notebooks-<time>/)."),
    stream: bool = typer.Option(False, "--stream", help="Echo the notebooks' own output while they run."),
) -> None:
    """The main job: all notebooks, in order, with the default (CPU-friendly) parameters."""
    _run_cli(None, params, out, stream)
