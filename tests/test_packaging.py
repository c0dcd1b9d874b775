"""The install is complete by construction: every third-party module the package imports is
declared (in the core dependencies or an optional group), and ``all`` is exactly the union
of the groups, so `make install` (``.[all,test]``) never depends on what a machine happens
to have."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

#: Modules that come from the operating system, not PyPI (installed by scripts/sysdeps.sh).
FROM_THE_OS = {"gi", "pyatspi", "uno"}


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _imported_modules() -> set[str]:
    mods: set[str] = set()
    for path in (ROOT / "agentlab").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                mods.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods.add(node.module.split(".")[0])
    return mods - set(sys.stdlib_module_names) - {"agentlab"} - FROM_THE_OS


def test_every_imported_module_is_declared() -> None:
    declared = {_name(r) for r in PYPROJECT["dependencies"]}
    for group in PYPROJECT["optional-dependencies"].values():
        declared |= {_name(r) for r in group}
    dists = md.packages_distributions()
    missing = {}
    for mod in sorted(_imported_modules()):
        names = {d.lower().replace("_", "-") for d in dists.get(mod, [])}
        assert names, f"agentlab imports '{mod}', which no installed distribution provides"
        if not names & declared:
            missing[mod] = sorted(names)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_all_is_the_union_of_the_groups() -> None:
    groups = {k: v for k, v in PYPROJECT["optional-dependencies"].items() if k not in ("all", "test")}
    union = {r for reqs in groups.values() for r in reqs}
    assert set(PYPROJECT["optional-dependencies"]["all"]) == union


def test_make_install_installs_the_lock_of_every_group_and_the_tests() -> None:
    """`make install` installs the committed lock, hash-checked, and the lock is compiled from
    every group and the tests (tests/test_lock.py checks its contents)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--require-hashes --no-deps -r $(LOCK)" in makefile and "LOCK := requirements.lock" in makefile
    assert "--extra all --extra test" in makefile
    assert "torch==2.13.0" in PYPROJECT["dependencies"]
