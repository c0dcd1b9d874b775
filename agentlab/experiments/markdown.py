"""The studies' results as Markdown: pipe tables and percentage cells (what ``benchmarks/results/*.md`` hold)."""

from __future__ import annotations

from collections.abc import Sequence


def pct(x: float | None) -> str:
    """A share as a percentage with one decimal; ``-`` when there is none."""
    return "-" if x is None else f"{100 * x:.1f}"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A pipe table: the header, the ``|---|`` rule, one line per row (cells as ``str``)."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)]
