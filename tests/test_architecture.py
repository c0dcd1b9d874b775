"""docs/architecture.md says how the package is built; these tests hold the code to it (issue #28):
every package sits on a floor and imports only its own floor or lower ones, no two packages
import each other, and every row of "Where a new … goes" names files that exist and a registry
that holds its example."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PKG = ROOT / "agentlab"


def _floors() -> dict[str, int]:
    block = DOC.split("<!-- floors:", 1)[1].split("```", 2)[1]
    out: dict[str, int] = {}
    for line in block.strip().splitlines():
        m = re.match(r"floor (\d+) \([^)]*\): (.+)", line.strip())
        assert m, f"unreadable floor line: {line!r}"
        for unit in m.group(2).split(","):
            out[unit.strip()] = int(m.group(1))
    return out


def _unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "agentlab" else None


def _edges() -> dict[tuple[str, str], str]:
    """(importer unit, imported unit) -> a file that does it (imports inside functions count)."""
    edges: dict[tuple[str, str], str] = {}
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(ROOT).with_suffix("")
        me = _unit(".".join(rel.parts))
        pkg = ".".join(rel.parts[:-1])
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    targets = [".".join(base + ([node.module] if node.module else []))]
                elif node.module:
                    targets = [node.module]
            for t in targets:
                u = _unit(t)
                if me and u and u != me:
                    edges.setdefault((me, u), str(rel))
    return edges


UNITS = sorted({p.stem if p.is_file() else p.name for p in PKG.iterdir()
                if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p.is_dir() and (p / "__init__.py").exists())})


def test_every_package_has_a_floor() -> None:
    floors = _floors()
    assert sorted(floors) == UNITS, (f"on no floor: {sorted(set(UNITS) - set(floors))}; "
                                     f"named but absent: {sorted(set(floors) - set(UNITS))}")


def test_no_package_imports_a_higher_floor_or_one_that_imports_it() -> None:
    floors, edges = _floors(), _edges()
    climbs = [f"{a} (floor {floors[a]}) -> {b} (floor {floors[b]}) in {where}"
              for (a, b), where in sorted(edges.items()) if floors[b] > floors[a]]
    two_way = sorted({tuple(sorted(p)) for p in edges if (p[1], p[0]) in edges})
    assert not climbs and not two_way, f"climbs: {climbs}; two-way: {two_way}"


def _rows() -> list[list[str]]:
    table = DOC.split("<!-- where-table:", 1)[1].split("-->", 1)[1]
    rows = [ln for ln in table.strip().splitlines() if ln.startswith("|")][2:]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in rows]


ROWS = _rows()


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_where_a_new_thing_goes_names_real_files_and_registries(row: list[str]) -> None:
    _what, _goes, registered, example = row
    for name, module_path in re.findall(r"`([A-Z_]+)` in `(agentlab/[\w/]+\.py)`", registered):
        assert (ROOT / module_path).is_file(), module_path
        module = importlib.import_module(module_path[:-3].replace("/", ".").removesuffix(".__init__"))
        registry = getattr(module, name)
        key = re.match(r"`([^`]+)` →", example)
        if key:
            keys = [k[0] for k in registry] if isinstance(registry, list) else list(registry)
            assert key.group(1) in keys, f"{name} holds no {key.group(1)!r}"
    for path in re.findall(r"`((?:agentlab|data)/[^`<>]+\.(?:py|md|txt))`", example):
        assert (ROOT / path).is_file(), f"{row[0]}: {path} does not exist"
    assert re.search(r"`(?:agentlab|data)/", example), f"{row[0]}: the example names no file"
