"""Routing latency and accuracy as the pool grows to 1,000 agents with synthetic distractors: AgentToken vs ICL.

The real agents are extended with synthetic ones: a renamed copy of a real document (cycling
through the pool) with domain ``synthetic``, so choosing it is always wrong; accuracy at scale
measures how well the real tokens hold up against a growing crowd of distractors. A synthetic
AgentToken row is random with the mean norm of the trained rows (``rows="random"``) or a
trained row plus Gaussian noise of 25% of that norm (``rows="perturbed"``, much harder).

AgentToken uses a trained checkpoint (default: the shipped ``data/tokens``) with the disk cache
of hidden states off, so every routed task pays its full forward pass. Latency is wall time per
task of ``route()`` and of ``rank()``. ICL puts every document in the prompt: it is measured
where the documents fit the context, and the largest pool that fits is found by counting tokens
(0 and 1 demonstration per document).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.eval.benchmarks import BenchmarkTask, load_appagent, load_osworld
from agentlab.eval.metrics import routing_accuracy
from agentlab.experiments.markdown import pct, table
from agentlab.experiments.subsets import evenly, stratified
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)


class PoolScaleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: pool sizes; one below the real pool's size is raised to it (the smallest point is the real pool)
    sizes: list[int] = Field(default_factory=lambda: [32, 100, 300, 1000])
    rows: Literal["random", "perturbed"] = "random"
    #: AgentToken checkpoint (default: the shipped one of the configured backbone, ``data/tokens`` for SmolLM2)
    tokens: Path | None = None


@dataclass
class AgentTokenAtSize:
    route_s: float
    rank_s: float
    acc: float
    synthetic_chosen: int
    #: the agent chosen for each task
    chosen: list[str | None] = field(default_factory=list)


@dataclass
class ICLAtSize:
    route_s: float
    prefill_s: float
    acc: float
    tokens: int
    demos: int


@dataclass
class PoolScale:
    """Per pool size: AgentToken's latency and accuracy, ICL's (or why it could not run)."""

    sizes: list[int]
    checkpoint: Path
    mean_row_norm: float
    agenttoken: dict[int, AgentTokenAtSize]
    icl: dict[int, ICLAtSize | str] = field(default_factory=dict)
    #: the largest pools whose ICL prompt fits, and their prompt tokens, with 0 and 1 demonstration each
    icl_max_agents: dict[int, tuple[int, int]] = field(default_factory=dict)
    context_length: int = 0
    reserve_tokens: int = 0
    #: the real agents, the synthetic rows' kind, the tasks routed by AgentToken and by ICL
    real_agents: int = 0
    rows: str = "random"
    tasks: int = 0
    icl_tasks: int = 0

    def latency_ratio(self, what: Literal["route_s", "rank_s"] = "route_s") -> float:
        """AgentToken's latency at the largest size over the smallest."""
        lo, hi = min(self.sizes), max(self.sizes)
        return getattr(self.agenttoken[hi], what) / getattr(self.agenttoken[lo], what)

    def summary(self) -> dict[str, float | int | str | None]:
        lo, hi = min(self.sizes), max(self.sizes)
        return {
            f"latency_ratio_{hi}_vs_{lo}": self.latency_ratio("route_s"),
            f"rank_latency_ratio_{hi}_vs_{lo}": self.latency_ratio("rank_s"),
            f"agenttoken_acc_{lo}": self.agenttoken[lo].acc,
            f"agenttoken_acc_{hi}": self.agenttoken[hi].acc,
            "icl_max_agents": self.icl_max_agents[0][0],
        }

    def title(self) -> str:
        return f"Pool scale: latency and accuracy from {min(self.sizes)} to {max(self.sizes):,} agents"

    def markdown(self) -> list[str]:
        rows = []
        for n in self.sizes:
            a, i = self.agenttoken[n], self.icl.get(n, "not run")
            icl_cells = ([f"{i.route_s:.1f} (+{i.prefill_s:.0f} s prefill once)", pct(i.acc), f"{i.tokens} ({i.demos} demo/doc)"]
                         if isinstance(i, ICLAtSize) else [i, "-", "-"])
            rows.append([n, f"{a.route_s * 1000:.0f}", f"{a.rank_s * 1000:.0f}", pct(a.acc), a.synthetic_chosen, *icl_cells])
        lo, hi = min(self.sizes), max(self.sizes)
        (fit0, tok0), (fit1, tok1) = self.icl_max_agents[0], self.icl_max_agents[1]
        return [
            f"Pool = {self.real_agents} real agents + synthetic distractors (renamed document copies, domain `synthetic`, "
            f"AgentToken rows: {self.rows}). {self.tasks} test tasks (OSWorld + AppAgent, spread over domains) for "
            f"AgentToken, {self.icl_tasks} of them for ICL. Backbone: SmolLM2-135M on CPU; hidden-state disk cache off.",
            "",
            *table(["agents", "AgentToken route ms/task", "AgentToken rank ms/task", "AgentToken acc %", "synthetic chosen",
                    "ICL s/task", "ICL acc %", "ICL prompt tokens"], rows),
            "",
            f"AgentToken latency ratio {hi} vs {lo} agents: route **{self.latency_ratio('route_s'):.2f}x**, rank "
            f"{self.latency_ratio('rank_s'):.2f}x (goal <= 1.3). The head adds one {hi}x576 matrix product per decoding "
            "step; the frozen forward pass dominates.",
            "",
            f"ICL: the documents fit the {self.context_length}-token context (with {self.reserve_tokens} tokens kept for "
            f"the task and answer) for at most **{fit0} agents** without demonstrations ({tok0} tokens) and {fit1} agents "
            f"with one demonstration each ({tok1} tokens); beyond that ICL cannot route at all.",
        ]


def benchmark_tasks(n: int, n_icl: int) -> tuple[list[BenchmarkTask], list[BenchmarkTask]]:
    """``n`` test tasks spread over the domains (8 OSWorld, 5 AppAgent per domain at most), and
    ``n_icl`` of them spread over those for ICL."""
    tasks = evenly(stratified(load_osworld(), 8) + stratified(load_appagent(), 5), n)
    return tasks, evenly(tasks, n_icl)


def grown_pool(pool: AgentPool, n: int) -> AgentPool:
    """The real pool plus ``n - len(pool)`` synthetic agents (renamed copies, domain 'synthetic');
    its first ``n`` agents when ``n`` is smaller."""
    base = list(pool.agents)
    extra = [replace(base[i % len(base)], name=f"Synth{i:04d}Agent", domain="synthetic") for i in range(max(0, n - len(base)))]
    return AgentPool(base[:n] + extra)


def icl_fit_limit(pool: AgentPool, demos: int) -> tuple[int, int]:
    """Largest pool size whose ICL prompt fits the context (token counts only), and its tokens.

    Prompt length grows by one document per agent, so a linear scan from the real pool size
    finds the limit in a few tokenizations.
    """
    from agentlab.metaagent.baselines.icl import ICLRouter

    def tokens(n: int) -> int:
        return ICLRouter(grown_pool(pool, n), max_demos=demos, progress=False).prompt_tokens(demos)

    r = ICLRouter(pool, progress=False)
    budget = r.backend.context_length - r.cfg.reserve_tokens
    n = len(pool)
    if tokens(n) <= budget:
        while tokens(n + 1) <= budget:
            n += 1
    else:
        while n > 0 and tokens(n) > budget:
            n -= 1
    return n, tokens(n) if n else 0


def run(
    pool: AgentPool, tasks: Sequence[BenchmarkTask], icl_tasks: Sequence[BenchmarkTask], config: PoolScaleConfig
) -> PoolScale:
    """AgentToken at every size on ``tasks``; the ICL token limits; ICL at every size on ``icl_tasks`` (if any)."""
    import torch

    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.baselines.icl import ContextOverflowError, ICLRouter
    from agentlab.metaagent.head import AgentHead
    from agentlab.metaagent.shipped import shipped_tokens

    # a size below the real pool cannot be reached by adding distractors: it starts at the pool
    sizes = sorted({max(n, len(pool)) for n in config.sizes})
    if sizes != sorted(set(config.sizes)):
        log.warning("pool sizes %s below the %d real agents were raised to it: %s", config.sizes, len(pool), sizes)
        config = config.model_copy(update={"sizes": sizes})
    texts, gold = [t.instruction for t in tasks], [t.domain or "" for t in tasks]
    ckpt = config.tokens or shipped_tokens()
    trained = AgentTokenRouter.load(ckpt, pool, use_cache=False, progress=False)
    assert trained.head is not None  # a loaded checkpoint always has its head
    head = trained.head
    w0 = head.weight.detach()
    norm = float(w0.norm(dim=1).mean())
    gen = torch.Generator().manual_seed(0)
    log.info("%d tasks; AgentToken rows from %s (mean row norm %.3f); synthetic rows: %s", len(tasks), ckpt, norm, config.rows)

    out = PoolScale(sizes=list(config.sizes), checkpoint=ckpt, mean_row_norm=norm, agenttoken={}, real_agents=len(pool),
                    rows=config.rows, tasks=len(tasks), icl_tasks=len(icl_tasks))
    for n in config.sizes:
        big = grown_pool(pool, n)
        extra = n - len(pool)
        if config.rows == "random":
            rows = torch.randn(extra, w0.shape[1], generator=gen)
            rows = rows / rows.norm(dim=1, keepdim=True) * norm
        else:  # synthetic agent i copies the document of pool agent i (cycling): its row perturbs that agent's row
            copied = [trained.agents.index(pool.names[i % len(pool)]) for i in range(extra)]
            noise = torch.randn(extra, w0.shape[1], generator=gen)
            rows = w0[copied] + 0.25 * norm * noise / noise.norm(dim=1, keepdim=True)
        router = AgentTokenRouter(big, template=trained.template_name, feature=trained.feature, use_cache=False, progress=False)
        # the checkpoint's rows keep their own agent order (it need not be the pool's); the synthetic rows follow
        router.head = AgentHead(len(trained.agents) + extra, w0.shape[1], logit_bias=head.logit_bias, init=torch.cat([w0, rows]))
        router.agents = list(trained.agents) + big.names[len(pool):]
        router.temperature = trained.temperature
        router.route(texts[:1])  # warm-up (prefix cache, allocations)
        t0 = time.perf_counter()
        res = router.route(texts)
        route_s = (time.perf_counter() - t0) / len(texts)
        t0 = time.perf_counter()
        router.rank(texts)
        rank_s = (time.perf_counter() - t0) / len(texts)
        acc = routing_accuracy([r.agent for r in res], gold, big).accuracy
        synth = sum(r.agent is not None and r.agent.startswith("Synth") for r in res)
        out.agenttoken[n] = AgentTokenAtSize(route_s, rank_s, acc, synth, [r.agent for r in res])
        log.info("agenttoken n=%d: route %.0f ms/task, rank %.0f ms/task, acc %.3f, synthetic chosen %d",
                 n, route_s * 1000, rank_s * 1000, acc, synth)

    out.icl_max_agents = {d: icl_fit_limit(pool, d) for d in (0, 1)}
    (fit0, tok0), (fit1, tok1) = out.icl_max_agents[0], out.icl_max_agents[1]
    log.info("ICL fits at most %d agents with 0 demonstrations (%d tokens), %d with 1 (%d tokens)", fit0, tok0, fit1, tok1)
    for n in config.sizes if icl_tasks else []:
        router_i = ICLRouter(grown_pool(pool, n), progress=False)
        try:
            lm = router_i.lm
        except ContextOverflowError as exc:
            out.icl[n] = f"does not fit ({exc.message.split(';')[0]})"
            log.info("icl n=%d: %s", n, out.icl[n])
            continue
        t0 = time.perf_counter()
        lm.cache  # noqa: B018 - prefill, reported separately
        prefill = time.perf_counter() - t0
        t0 = time.perf_counter()
        res_i = router_i.route([t.instruction for t in icl_tasks])
        per = (time.perf_counter() - t0) / len(icl_tasks)
        acc_i = routing_accuracy([r.agent for r in res_i], [t.domain or "" for t in icl_tasks], router_i.pool).accuracy
        out.icl[n] = ICLAtSize(per, prefill, acc_i, len(lm.prefix_ids), router_i.demos_used or 0)
        log.info("icl n=%d: %.1f s/task (+%.0f s prefill, %d tokens), acc %.3f on %d",
                 n, per, prefill, len(lm.prefix_ids), acc_i, len(icl_tasks))
        del router_i
    ref = ICLRouter(pool, progress=False)
    out.context_length, out.reserve_tokens = int(ref.backend.context_length), ref.cfg.reserve_tokens
    return out
