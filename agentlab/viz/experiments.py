"""Small computations the notebooks need between the package's results and the plots.

Kept here (not in notebook cells) so they are tested: a stratified hold-out split of a
training set, nearest neighbours in token space, the agent orders used to grow a pool, and
scripted demonstrations whose element numbers are looked up on the live screen, and the
cost of fitting a router (time, memory, trainable parameters).
"""

from __future__ import annotations

import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from agentlab.errors import ConfigError, DataError

if TYPE_CHECKING:
    from agentlab.envs.base import Observation
    from agentlab.metaagent.data import TrainingSet
    from agentlab.pool import AgentPool


def holdout_split(train: "TrainingSet", holdout: float, seed: int = 0) -> tuple["TrainingSet", "TrainingSet"]:
    """Hold out ``holdout`` of each agent's examples (rounded up, but never an agent's last one).

    Returns (train, held_out); both keep the full agent list so labels stay comparable.
    """
    if not 0.0 <= holdout < 1.0:
        raise ConfigError(f"holdout must be in [0, 1), got {holdout}")
    rng = random.Random(seed)
    by_agent: dict[int, list[int]] = {}
    for i, y in enumerate(train.labels):
        by_agent.setdefault(y, []).append(i)
    keep: list[int] = []
    out: list[int] = []
    for idx in by_agent.values():
        idx = idx[:]
        rng.shuffle(idx)
        n_out = min(math.ceil(holdout * len(idx)), len(idx) - 1) if holdout > 0 else 0
        out.extend(idx[:n_out])
        keep.extend(idx[n_out:])
    return train.subset(sorted(keep)), train.subset(sorted(out))


def nearest_neighbours(vectors: np.ndarray, names: Sequence[str], k: int = 3) -> dict[str, list[tuple[str, float]]]:
    """For each row, the ``k`` most cosine-similar other rows: ``{name: [(other, cos), ...]}``."""
    x = np.asarray(vectors, dtype=np.float64)
    if len(names) != len(x):
        raise ValueError(f"{len(names)} names for {len(x)} vectors")
    norm = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    sim = norm @ norm.T
    np.fill_diagonal(sim, -np.inf)
    out: dict[str, list[tuple[str, float]]] = {}
    for i, n in enumerate(names):
        order = np.argsort(-sim[i])[: min(k, len(names) - 1)]
        out[n] = [(names[j], float(sim[i, j])) for j in order]
    return out


def addition_order(pool: "AgentPool", strategy: str, seed: int = 0) -> list[str]:
    """The order in which agents join the pool for a scaling curve (the Figure 3 analog).

    ``random``: a seeded shuffle; ``gui_first`` / ``cli_first``: all agents of one interface
    (each group shuffled with the same seed) before the other.
    """
    rng = random.Random(seed)
    names = pool.names
    if strategy == "random":
        order = names[:]
        rng.shuffle(order)
        return order
    firsts = {"gui_first": "GUI", "cli_first": "CLI"}
    if strategy not in firsts:
        raise ConfigError(f"unknown addition strategy '{strategy}'; use random, gui_first or cli_first")
    first = [n for n in names if pool.get(n).interface == firsts[strategy]]
    rest = [n for n in names if n not in first]
    rng.shuffle(first)
    rng.shuffle(rest)
    return first + rest


_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def element_number(obs: "Observation", text: str) -> int:
    """The number of the first element whose visible text starts with ``text`` (case-insensitive)."""
    want = text.strip().lower()
    for el in obs.elements:
        if el.text.strip().lower().startswith(want):
            return el.id
    have = ", ".join(repr(e.text) for e in obs.elements[:20]) or "no labelled elements"
    raise DataError(f"no element whose text starts with {text!r} on this screen ({have})")


def scripted_lines(script: Sequence[str], latest: Callable[[], "Observation"]) -> Iterator[str]:
    """A scripted demonstration for :func:`agentlab.agents.record_demo`: each line is an action
    whose ``{Text}`` placeholders become the number of that element on the screen as it is when
    the line is needed (``latest()`` returns it), e.g. ``"click({Greet})"``, ``'type("Ada")'``."""
    for line in script:
        obs = latest()
        yield _PLACEHOLDER.sub(lambda m: str(element_number(obs, m.group(1))), line)


@dataclass
class FitCost:
    """What one ``router.fit`` cost (the Table 5 analog)."""

    seconds: float
    #: peak growth of the process's resident memory during the fit (MiB; None off Linux). Process
    #: level and sampled every 20 ms: a fair comparison of routers fitted one after another in one
    #: process once the shared backbone is loaded, not an exact allocation count.
    peak_rss_mib: float | None
    trainable_parameters: int


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def trainable_parameters(router: object) -> int:
    """Parameters a router trains: AgentToken's ``W_A`` rows, an adapter's weights, else 0
    (the embedding router stores class centroids; ICL trains nothing)."""
    head = getattr(router, "head", None)
    if head is not None and hasattr(head, "weight"):
        return int(head.weight.numel())
    params = getattr(router, "trainable_parameters", None)
    if callable(params):
        return int(sum(p.numel() for p in params()))
    return 0


def measure_fit(router: Any, train: "TrainingSet") -> tuple[dict[str, float], FitCost]:
    """Fit ``router`` on ``train`` while timing it and sampling the process's memory."""
    base = _rss_bytes()
    peak = [base or 0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            now = _rss_bytes()
            if now is not None and now > peak[0]:
                peak[0] = now

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    try:
        metrics = router.fit(train)
    finally:
        stop.set()
        thread.join()
    seconds = time.perf_counter() - t0
    end = _rss_bytes()
    if end is not None:
        peak[0] = max(peak[0], end)
    mib = (peak[0] - base) / 2**20 if base is not None else None
    return metrics, FitCost(seconds=seconds, peak_rss_mib=mib, trainable_parameters=trainable_parameters(router))


def domain_coverage(agents: Sequence[str], pool: "AgentPool", gold_domains: Sequence[str]) -> float:
    """Share of tasks whose domain some agent of ``agents`` serves (the ceiling of routing accuracy)."""
    served = {pool.get(a).domain for a in agents}
    return sum(d in served for d in gold_domains) / len(gold_domains) if gold_domains else 0.0
