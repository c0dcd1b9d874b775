"""The kernel (``agentlab/run``) and the command line (``agentlab/cli``) name no team, no router and
no env kind: their defaults, choices and help texts come from the registries (``TEAMS``,
``ROUTERS``, ``ENV_KINDS``), so a new team, router or env is one registry line and nothing here.

Read from the registries, each name is looked for in the two packages' source as a string literal
(the whole literal, or a choice listed in it: ``"gt: ..."``, ``"a | b"``, ``"--team cola"``) and as
an attribute name (``options.cola``), and no team's own module is imported (a team is reached
through its registry entry); docstrings are prose and left alone. A help text may list choices only
by building them from a registry (an f-string's formatted part is not a literal).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentlab.metaagent.router import ROUTERS
from agentlab.tasks.env_kinds import ENV_KINDS
from agentlab.teams.base import TEAMS

ROOT = Path(__file__).resolve().parents[1] / "agentlab"
CORE = sorted([*ROOT.glob("run/*.py"), *ROOT.glob("cli/*.py")])
NAMES = {**{n: "team" for n in TEAMS}, **{n: "router" for n in ROUTERS}, **{n: "env kind" for n in ENV_KINDS}}


def _choice(name: str) -> re.Pattern[str]:
    """``name`` standing as a choice in a text: alone, before ``:`` or ``|``, after ``|``, or after a flag."""
    n = re.escape(name)
    return re.compile(rf"^\s*{n}\s*$|(?:^|[\s(|]){n}\s*[:|)]|\|\s*{n}\b|--[\w-]+[ =]{n}\b")


PATTERNS = {name: _choice(name) for name in NAMES}
#: the teams' own modules (class and settings model) and, for a team in a package of its own, that package
TEAM_MODULES = {t.partition(":")[0] for e in TEAMS.values() for t in (e.team, e.settings) if t}
TEAM_PACKAGES = {m.rpartition(".")[0] for m in TEAM_MODULES if m.rpartition(".")[0].rpartition(".")[2] in TEAMS}
#: names that are not a choice of the registry they match, with why (file, name)
ALLOWED = {("cli/__init__.py", "desktop"): "the ``agentlab desktop`` command (the desktop env's own tools) is named so"}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (a module's, a class's, a function's first string)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def named(source: str, allowed: frozenset[str] = frozenset()) -> list[str]:
    """Every place ``source`` names a registered team, router or env kind (``line: what``), but ``allowed`` names."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found += [f"{node.lineno}: {NAMES[n]} {n!r} in {node.value[:60]!r}" for n, p in PATTERNS.items()
                      if p.search(node.value) and n not in allowed]
        elif isinstance(node, ast.Attribute) and node.attr in NAMES and node.attr not in allowed:
            found.append(f"{node.lineno}: {NAMES[node.attr]} {node.attr!r} as an attribute")
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module in TEAM_MODULES or node.module.rpartition(".")[0] in TEAM_PACKAGES):
            found.append(f"{node.lineno}: a team's own module {node.module!r} imported")
    return found


def test_the_registries_are_read() -> None:
    """The check has something to look for: every registry holds names, and the detector sees them."""
    assert TEAMS and ROUTERS and ENV_KINDS and CORE
    team, router, kind = next(iter(TEAMS)), next(iter(ROUTERS)), next(iter(ENV_KINDS))
    module = TEAMS[team].team.partition(":")[0]
    caught = named(f'x = "{team}"\nh = "--router {router}: the key"\no.{kind}\ny = "a | {team}"\n'
                   f'from {module} import X\ndef f():\n    "{team} in a docstring"\nz = "a {team}ly word"\n')
    assert len(caught) == 5, caught
    assert named(f'x = "{team}"', allowed=frozenset({team})) == []


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_kernel_and_cli_name_no_team_router_or_env_kind(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    allowed = frozenset(n for (f, n) in ALLOWED if f == rel)
    assert named(path.read_text(encoding="utf-8"), allowed) == [], (
        f"{path.relative_to(ROOT)} names registered teams/routers/env kinds: take defaults and choices from "
        "the registries (agentlab.teams.base.TEAMS, agentlab.metaagent.router.ROUTERS, agentlab.tasks.env_kinds.ENV_KINDS)")
