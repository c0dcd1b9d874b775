"""The store's decision for one routed task: its device, specialists first, generalists as the fallback.

Why: a router ranks every enrolled agent by what the request says, so once Agent S2 and PC-Agent
joined the store their tokens took single-application tasks whenever they scored highest
(``benchmarks/results/generalist_fallback.md``: 9.9 % of them, 5.1 points of accuracy), while
requests that really need two applications stayed with one specialist. The pieces that fix this
were measured one by one (:mod:`agentlab.metaagent.device`, :mod:`~agentlab.metaagent.store_policy`,
:mod:`~agentlab.metaagent.mentions`); this module is where a command applies them together, so
``agentlab route`` (``--policy store``, the default) and ``agentlab exec`` decide as the benchmark
measured:

1. only agents of the task's device may take it (:func:`~agentlab.metaagent.device.on_platform`);
2. a request that names two applications of that device goes to the best-ranked generalist
   (:func:`~agentlab.metaagent.mentions.names_two_applications`);
3. otherwise the router's choice stands if it is a specialist, else the best specialist takes it,
   unless the fallback signal passes ``threshold`` (:class:`~agentlab.metaagent.store_policy.FallbackPolicy`;
   the default ``inf`` never falls back on the signal: at 135M its held-out AUC is 0.74 and the
   fitted threshold sent no two-application task to a generalist).

A pool without generalists is left as the router decided (step 1 still applies). ``open`` is the
ablation: every agent competes, as in the paper's routing tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from agentlab.errors import ConfigError
from agentlab.metaagent.device import on_platform
from agentlab.metaagent.mentions import ApplicationLexicon, names_two_applications
from agentlab.metaagent.spans import SpanDetector
from agentlab.metaagent.store_policy import FallbackPolicy, generalists
from agentlab.pool import AgentPool
from agentlab.tasks.decisions import RouteResult

#: ``store``: the store's policy (this module); ``open``: every agent competes (the ablation)
POLICIES: tuple[str, ...] = ("store", "open")


def check_policy(name: str, *, option: str = "--policy") -> str:
    """``name`` when it is a policy; one clear :class:`ConfigError` otherwise."""
    if name not in POLICIES:
        raise ConfigError(f"{option} must be one of {', '.join(POLICIES)}, not '{name}'")
    return name


@dataclass
class StoreRule:
    """The store's policy over one pool (see the module docstring)."""

    pool: AgentPool
    #: the fallback signal's threshold (``inf``: the signal never sends a task to a generalist)
    threshold: float = math.inf
    signal: str = "generalist_mass"
    #: the phrase detector of two-application requests (:mod:`~agentlab.metaagent.spans`), beside
    #: named applications; None (the default): named applications only
    spans: SpanDetector | None = None
    lexicon: ApplicationLexicon = field(init=False)
    policy: FallbackPolicy | None = field(init=False)

    def __post_init__(self) -> None:
        self.lexicon = ApplicationLexicon.from_pool(self.pool)
        gen = tuple(generalists(self.pool))
        self.policy = FallbackPolicy(gen, self.threshold, self.signal) if gen else None

    def decide(self, result: RouteResult, text: str, platform: str | None = None) -> RouteResult:
        """``result`` (a router's decision for ``text``) under the store's policy on ``platform``'s device."""
        result = on_platform(result, self.pool, platform)
        if self.policy is None or result.agent is None or not result.ranking:
            return result
        gen = set(self.policy.generalists)
        if not any(n in gen for n, _ in result.ranking) and result.agent not in gen:
            return result
        multi = names_two_applications(self.lexicon, text, platform) or (
            self.spans is not None and self.spans.is_multi(text, platform))
        decision = self.policy.decide(result.ranking, result.agent, multi_app=multi)
        if decision.agent == result.agent:
            return result
        return RouteResult(agent=decision.agent, ranking=result.ranking, plan=result.plan, error=result.error,
                           raw=result.raw)
