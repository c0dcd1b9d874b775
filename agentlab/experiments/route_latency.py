"""Routing latency per task, one task at a time, as ``agentlab route`` sees a new task.

A routing table's "route s/task" divides a batched call by the task count and may hit the
hidden-state disk cache; this study measures what a single new task costs instead:

- **cold**: the hidden-state cache is off, so the frozen backbone runs on the task's prompt
  (and, for AgentToken, on every vocabulary token it decodes before an agent token);
- **warm**: the same task again with the cache on (its first forward pass read from disk).

What is not per task is paid before the clock starts and reported as load: the weights, and the
key/value cache of the prompt head every task shares (:meth:`AgentTokenRouter.warm_up`, run by
``load``); then one route of a fixed sentence that is not among the measured tasks (allocator and
BLAS start-up, MiniLM's first call). Every measured task is one the process has never routed.

A router without a hidden-state cache (the embedding router) has one row, cache ``-``. Every
router is built the way the CLI builds it (:func:`~agentlab.metaagent.router.build_router`: the
shipped checkpoint for AgentToken and the hybrid, seed demonstrations for the others), and all
route the same tasks, spread over the OSWorld + AppAgent list.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from agentlab.eval.benchmarks import load_appagent, load_osworld
from agentlab.experiments.markdown import table
from agentlab.experiments.subsets import evenly
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.hybrid import HybridRouter
from agentlab.metaagent.router import Router, build_router, router_class
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)

#: issue 16's goal for AgentToken, seconds per task (warm)
GOAL_S = 0.02
#: issue 43's goal for AgentToken's cold route (a task never seen), seconds
COLD_GOAL_S = 0.05
#: the warm-up route before the clock starts: task-independent, and not in the OSWorld / AppAgent lists
WARM_UP_TASK = "Open the settings."


class RouteLatencyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    routers: list[str] = Field(default_factory=lambda: ["agenttoken", "hybrid", "embedding"])
    #: tasks, spread evenly over the OSWorld + AppAgent list
    tasks: int = Field(60, ge=1)


@dataclass
class LatencyRow:
    """One router in one cache mode: the wall time of each task, routed alone."""

    router: str
    #: "cold", "warm", or "-" for a router without a hidden-state cache
    cache: str
    seconds: list[float]

    @property
    def mean_s(self) -> float:
        return statistics.mean(self.seconds)

    def cells(self, reference_s: float | None = None) -> list[str]:
        """The table row; ``reference_s``: the mean the ratio column divides by (the embedding router's)."""
        ms = sorted(x * 1000 for x in self.seconds)
        p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
        ratio = f"{self.mean_s / reference_s:.2f}" if reference_s else "-"
        return [self.router, self.cache, str(len(ms)), f"{statistics.mean(ms):.1f}", f"{statistics.median(ms):.1f}",
                f"{p95:.1f}", ratio]

    @property
    def key(self) -> str:
        """The summary key of this row's mean: ``<router>_<cache>_s``, ``<router>_s`` without a cache."""
        return f"{self.router}_s" if self.cache == "-" else f"{self.router}_{self.cache}_s"


@dataclass
class ColdFloor:
    """What no exact fp32 implementation of AgentToken's cold route can go below on this machine.

    A cold route runs the task's own tokens (``tokens``) through the frozen backbone once, so it
    (1) reads every weight of the backbone from memory at least once -- measured as the fastest
    forward pass of ONE token, which is nothing but that read -- and (2) does ``2 * params * n``
    floating-point operations for ``n`` tokens, at best at the rate the machine reaches on the
    backbone's largest matrix product with the weights already in cache (``gflops``). The floor of
    a task is the larger of the two; the study reports their mean over the measured tasks beside
    the measured cold route, so a goal below it is visibly out of reach without a smaller dtype
    (which changes decisions: ``docs/metaagent.md``)."""

    one_token_s: float
    gflops: float
    #: the backbone's parameters outside the token embedding (what every token multiplies)
    params: int
    tokens: list[int]

    def task_floor_s(self, n: int) -> float:
        return max(self.one_token_s, 2 * self.params * n / (self.gflops * 1e9))

    @property
    def mean_s(self) -> float:
        return statistics.mean(self.task_floor_s(n) for n in self.tokens)

    def line(self) -> str:
        ms = self.mean_s * 1000
        return (f"Floor of an exact fp32 cold route on this machine, from the same run: one token through the "
                f"backbone (every weight read once) takes {self.one_token_s * 1000:.1f} ms; its largest matrix "
                f"product reaches {self.gflops:.0f} GFLOP/s with the weights in cache; a task runs "
                f"{statistics.mean(self.tokens):.1f} tokens of its own on average ({min(self.tokens)}-{max(self.tokens)}), "
                f"{2 * self.params / 1e6:.0f} MFLOP each; so the mean floor over these tasks is **{ms:.1f} ms** "
                f"(max of the two per task), against the {COLD_GOAL_S * 1000:.0f} ms goal.")


def cold_floor(router: AgentTokenRouter, tasks: list[str], repeats: int = 5) -> ColdFloor | None:
    """Measure :class:`ColdFloor` for ``router``'s backbone (None when its cold route is the batched path)."""
    import torch

    from agentlab.metaagent.features import Query

    states = router.route_states
    states.warm()
    if not states.supported:
        return None
    model = states.model.base_model
    embed = model.get_input_embeddings().weight
    params = sum(int(p.numel()) for p in model.parameters() if p is not embed)
    tokens = [states.tokens_to_run(Query(t, None)) for t in tasks]
    one = torch.tensor([[int(states.fx.prefix_ids[-1])]], device=states.fx.device)
    with torch.no_grad():
        model(input_ids=one, use_cache=False)  # allocator warm-up
        best_one = min(_timed(lambda: model(input_ids=one, use_cache=False)) for _ in range(repeats))
    biggest = max((m for m in model.modules() if isinstance(m, torch.nn.Linear)), key=lambda m: m.weight.numel())
    n = int(statistics.median(tokens))
    x = torch.randn(n, biggest.in_features)
    with torch.no_grad():
        biggest(x)
        per = min(_timed(lambda: [biggest(x) for _ in range(20)]) for _ in range(repeats)) / 20
    return ColdFloor(one_token_s=best_one, gflops=2 * n * biggest.weight.numel() / per / 1e9, params=params, tokens=tokens)


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@dataclass
class RouteLatency:
    tasks: int
    torch_threads: int
    rows: list[LatencyRow] = field(default_factory=list)
    #: seconds to build (load or fit) each router
    load_seconds: dict[str, float] = field(default_factory=dict)
    #: the floor of AgentToken's cold route on this machine (None: AgentToken did not run)
    floor: ColdFloor | None = None

    def summary(self) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {r.key: r.mean_s for r in self.rows}
        if self.floor is not None:
            out["agenttoken_cold_floor_s"] = self.floor.mean_s
        return out

    def reference_s(self) -> float | None:
        """The embedding router's mean, which the ratio column divides by (None when it did not run)."""
        return next((r.mean_s for r in self.rows if r.router == "embedding"), None)

    def markdown(self) -> list[str]:
        ref = self.reference_s()
        loads = ", ".join(f"{k} {v:.1f} s" for k, v in self.load_seconds.items())
        return [f"{self.tasks} OSWorld + AppAgent tasks (spread over the list), routed one at a time; "
                f"torch threads {self.torch_threads}; backbone SmolLM2-135M on CPU. cold: hidden-state cache off, "
                "a task the process has never routed; warm: the task's first forward pass read from the disk cache. "
                "x embedding: mean over the embedding router's mean, same run.", "",
                *table(["router", "cache", "tasks", "mean ms", "median ms", "p95 ms", "x embedding"],
                       [r.cells(ref) for r in self.rows]),
                "", f"Load (weights, and for AgentToken the shared prompt head, before the clock): {loads}.",
                "", f"Goals: AgentToken warm <= {GOAL_S * 1000:.0f} ms (issue 16); cold <= {COLD_GOAL_S * 1000:.0f} ms (issue 43).",
                *(["", self.floor.line()] if self.floor is not None else [])]


def _one_at_a_time(route: Callable[[list[str]], object], tasks: list[str]) -> list[float]:
    out = []
    for t in tasks:
        t0 = time.perf_counter()
        route([t])
        out.append(time.perf_counter() - t0)
    return out


def _cached_part(router: Router) -> AgentTokenRouter | None:
    """The AgentToken router whose hidden-state cache serves ``router`` (the hybrid's token half), if any."""
    if isinstance(router, HybridRouter):
        return router.token
    return router if isinstance(router, AgentTokenRouter) else None


def run(pool: AgentPool, config: RouteLatencyConfig) -> RouteLatency:
    """Every configured router on the same tasks, one task per call, cold and warm where it caches.

    An unknown router name is a :class:`~agentlab.errors.ConfigError` before any model loads."""
    import torch

    for kind in config.routers:
        router_class(kind)
    tasks = [t.instruction for t in evenly(load_osworld() + load_appagent(), config.tasks)]
    out = RouteLatency(tasks=len(tasks), torch_threads=torch.get_num_threads())
    for kind in config.routers:
        t0 = time.perf_counter()
        router = build_router(kind, pool, progress=False)
        out.load_seconds[kind] = time.perf_counter() - t0
        router.route([WARM_UP_TASK])  # one-off work (allocator, BLAS, MiniLM's first call), no measured task
        cached = _cached_part(router)
        if cached is None:
            out.rows.append(LatencyRow(kind, "-", _one_at_a_time(router.route, tasks)))
        else:
            cached.use_cache = False
            cold = _one_at_a_time(router.route, tasks)
            cached.use_cache = True  # its disk cache is opened on the next call
            router.route(tasks)  # fill the cache
            out.rows += [LatencyRow(kind, "cold", cold), LatencyRow(kind, "warm", _one_at_a_time(router.route, tasks))]
            if kind == "agenttoken":
                out.floor = cold_floor(cached, tasks)
        log.info("%s: built in %.1f s", kind, out.load_seconds[kind])
        del router
    return out
