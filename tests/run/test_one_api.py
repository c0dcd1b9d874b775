"""One way to run tasks, one models object.

Why these checks: the studies, benchmarks and notebook 05 used to call the suite loop
(``run_suite``, 19 keyword parameters) and the kernel directly, each assembling a run its own way,
and the models travelled as three parallel arguments ``(llm, roles, sides)`` through seven
signatures. Now a :class:`~agentlab.run.RunSpec` given to :func:`~agentlab.run.execute` is the
only way in, and :class:`~agentlab.llm.roles.Backends` carries the models.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlab.llm.roles import Backends, load_models_file
from agentlab.pool import AgentPool
from agentlab.run import RunSpec, execute
from agentlab.run.episode import ExecOptions
from agentlab.run.worker import EpisodeRecipe, Worker
from agentlab.tasks.spec import load_task, tasks_dir

from ..episode.conftest import ScriptedBackend, py

ROOT = Path(__file__).resolve().parents[2]
#: the run package's own entry points: nobody outside it calls them (``agentlab.run.run_task``, a
#: spec's one-task debug, is public; the kernel ``agentlab.run.episode.run_task`` is not)
KERNEL = frozenset({"run_suite", "_run_suite", "run_item"})


@functools.cache
def trees(root: Path) -> list[tuple[str, ast.AST]]:
    """(where, parsed source) of :func:`sources`, parsed once for the checks below."""
    return [(where, ast.parse(src)) for where, src in sources(root)]


def sources(root: Path) -> Iterator[tuple[str, str]]:
    """(where, Python source) of every module of agentlab/ outside the run package, every benchmark
    script and every code cell of the notebooks (shell and magic lines blanked)."""
    run_pkg = root / "agentlab" / "run"
    for path in sorted((root / "agentlab").rglob("*.py")) + sorted((root / "benchmarks").rglob("*.py")):
        if run_pkg not in path.parents:
            yield path.relative_to(root).as_posix(), path.read_text()
    for nb in sorted((root / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(nb.read_text())["cells"]):
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                yield f"{nb.name} cell {i}", "\n".join("" if ln.lstrip()[:1] in ("%", "!") else ln for ln in lines)


def kernel_uses(src: str | ast.AST) -> list[str]:
    """The kernel names ``src`` uses in code (imported, called, looked up): docstrings do not count."""
    out = []
    for node in ast.walk(ast.parse(src) if isinstance(src, str) else src):
        names = ({node.id} if isinstance(node, ast.Name) else {node.attr} if isinstance(node, ast.Attribute)
                 else {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else set())
        kernel = set(KERNEL)
        if (isinstance(node, ast.ImportFrom) and node.module == "agentlab.run.episode") or (
                isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith("episode")):
            kernel.add("run_task")
        out += [f"{name} (line {node.lineno})" for name in sorted(names & kernel)]  # type: ignore[attr-defined]
    return out


def roles_and_sides(src: str | ast.AST) -> list[str]:
    """Every function of ``src`` whose parameters include both ``roles`` and ``sides`` (however its
    signature is laid out over lines)."""
    out = []
    for node in ast.walk(ast.parse(src) if isinstance(src, str) else src):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            if {"roles", "sides"} <= names:
                out.append(f"{getattr(node, 'name', 'lambda')} (line {node.lineno})")
    return out


def test_only_the_run_package_calls_the_kernel() -> None:
    found = [f"{where}: {use}" for where, tree in trees(ROOT) for use in kernel_uses(tree)]
    assert found == [], "run tasks through agentlab.run.execute(RunSpec(...)):\n" + "\n".join(found)


def test_no_signature_takes_roles_and_sides() -> None:
    found = [f"{where}: {fn}" for where, tree in trees(ROOT) if where.startswith("agentlab/")
             for fn in roles_and_sides(tree)]
    found += [f"agentlab/run/{p.name}: {fn}" for p in sorted((ROOT / "agentlab" / "run").glob("*.py"))
              for fn in roles_and_sides(p.read_text())]
    assert found == [], "pass one agentlab.llm.roles.Backends instead:\n" + "\n".join(found)


def test_the_checks_see_what_they_look_for() -> None:
    """The walkers catch a multi-line signature and an aliased import, and skip a docstring."""
    assert roles_and_sides("def f(\n    llm,\n    *,\n    roles=None,\n    sides=None,\n): pass") == ["f (line 1)"]
    assert roles_and_sides("def f(llm, roles): pass") == []
    assert kernel_uses("from agentlab.run.episode import run_suite as go\ngo()") == ["run_suite (line 1)"]
    assert kernel_uses("'''calls run_task'''\nfrom agentlab.run import episode\nepisode.run_task(1)") == ["run_task (line 3)"]
    assert kernel_uses("from agentlab.run.episode import run_task\nfrom agentlab.run import run_task") == ["run_task (line 1)"]


def test_the_folder_is_checked_once_and_the_serial_path_uses_the_recipe(tmp_path, monkeypatch) -> None:
    """``check_out_dir`` runs once per run (in :func:`execute`), and a serial run's episodes come
    from the same :meth:`EpisodeRecipe.episodes` a Ray worker calls."""
    import agentlab.run.episode as episode
    import agentlab.run.worker as worker

    checks: list[Path] = []
    real_check = worker.check_out_dir

    def counted(out: Path, resume: bool) -> None:
        checks.append(out)
        real_check(out, resume)

    monkeypatch.setattr(worker, "check_out_dir", counted)
    monkeypatch.setattr(episode, "check_out_dir", counted)
    built: list[int] = []

    class Recorded(EpisodeRecipe):
        def episodes(self, w, index, ask=None):  # type: ignore[no-untyped-def]
            built.append(index)
            return super().episodes(w, index, ask)

    task = load_task(tasks_dir() / "csv-sales-summary.json")
    assert task.reference_solution is not None
    llm = ScriptedBackend([py(task.reference_solution.code, "DONE")])
    summary = execute(RunSpec(Recorded(tmp_path / "run", ExecOptions(max_steps=2))), [task],
                      worker=Worker(AgentPool.from_dir(None), Backends(llm)), progress=False)
    assert summary.execution_acc == 1.0 and checks == [tmp_path / "run"] and built == [0]


def test_a_models_file_is_read_once_and_loads_into_one_object(tmp_path, monkeypatch) -> None:
    import agentlab.config as config

    reads: list[Path] = []
    real_read = config.read_text

    def counted(path, **kw):  # type: ignore[no-untyped-def]
        reads.append(Path(path))
        return real_read(path, **kw)

    monkeypatch.setattr(config, "read_text", counted)
    path = tmp_path / "models.yaml"
    path.write_text("llm: {kind: local, max_image_side: 1280}\n"
                    "roles:\n  grounder: {kind: local, max_image_side: 640}\n  router: {kind: local}\n")
    models = load_models_file(path)
    assert reads == [path]
    assert models.llm.max_image_side == 1280 and set(models.roles) == {"grounder", "router"}
    plain = tmp_path / "plain.yaml"
    plain.write_text("kind: local\n")
    assert load_models_file(plain).roles == {} and reads == [path, plain]


@pytest.mark.parametrize("text", ["llm: {kind: local}\nrole: {}\n", "roles: {}\n"])
def test_a_broken_models_file_is_still_one_line(tmp_path, text) -> None:
    from agentlab.errors import ConfigError

    path = tmp_path / "models.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_models_file(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_run_task_is_one_task_of_a_spec_and_writes_no_results(tmp_path) -> None:
    from agentlab.run import run_task

    task = load_task(tasks_dir() / "csv-sales-summary.json")
    assert task.reference_solution is not None
    llm = ScriptedBackend([py(task.reference_solution.code, "DONE")])
    spec = RunSpec(EpisodeRecipe(tmp_path / "debug", ExecOptions(max_steps=2), agent="CoderAgent"))
    row = run_task(spec, task, worker=Worker(AgentPool.from_dir(None), Backends(llm)))
    assert (row["success"], row["agents"], row["router"]) == (True, ["CoderAgent"], "forced")
    assert (tmp_path / "debug" / row["trajectory"] / "traj.jsonl").is_file()
    assert not (tmp_path / "debug" / "results.jsonl").exists()
