"""Which tasks a study measures: seeded per-domain subsets and evenly spread picks, original order kept."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def stratified(items: Sequence[T], per_domain: int | None, seed: int = 0, key: Callable[[Any], str] | None = None) -> list[T]:
    """At most ``per_domain`` items of each domain (seeded choice, original order kept; all when None)."""
    if per_domain is None:
        return list(items)
    key = key or (lambda t: t.domain)
    rng = random.Random(seed)
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(items):
        groups.setdefault(key(t), []).append(i)
    keep: set[int] = set()
    for idx in groups.values():
        keep.update(rng.sample(idx, min(per_domain, len(idx))))
    return [t for i, t in enumerate(items) if i in keep]


def evenly(items: Sequence[T], n: int | None) -> list[T]:
    """At most ``n`` items spread evenly over the list (all when ``n`` is None)."""
    if n is None or n >= len(items):
        return list(items)
    if n <= 0:
        return []
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]

