"""Which agents are generalists, and when a task goes to one: the store's explicit policy.

A general agent (Agent S2, PC-Agent on the desktop, AppAgent on the phone) can act in any
application, so its token learns "anything that looks like a desktop task" and, once enrolled,
takes single-application tasks a specialist would do better (``benchmarks/results/desktop_enrolment.md``:
8.9 % of them). The store's policy says what a generalist is *for*:

* **routing** (:class:`FallbackPolicy`): choose among the specialists; hand the task to the best
  generalist only when the best specialist's calibrated probability is below a threshold. The
  threshold is fitted on held-out demonstrations (:func:`fit_threshold`), never on benchmark tasks;
* **planning** (:meth:`agentlab.metaagent.manager.HashManager.candidates`): a plan's steps go to
  specialists (a plan *is* the multi-application answer); generalists take steps only when asked
  (``--generalists``).

A generalist is a GUI agent whose domain is its platform's catch-all (:data:`CATCH_ALL`): not one
application, the whole screen. Tool agents with the catch-all domain (CoderAgent, GoogleDrive,
Searcher, VisionAgent) each serve one tool and stay specialists.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentlab.errors import ConfigError
from agentlab.pool import AgentDocument, AgentPool

log = logging.getLogger(__name__)

#: Each platform's catch-all domain (the last of :data:`agentlab.pool.document.DOMAINS`' lists).
CATCH_ALL: dict[str, str] = {"desktop": "general", "mobile": "mobile"}


def is_generalist(doc: AgentDocument) -> bool:
    """A GUI agent whose domain is its platform's catch-all."""
    return doc.interface == "GUI" and doc.domain == CATCH_ALL.get(doc.platform)


def generalists(pool: AgentPool | Iterable[AgentDocument]) -> list[str]:
    """The names of the generalists among ``pool``'s agents, in pool order."""
    return [d.name for d in pool if is_generalist(d)]


@dataclass(frozen=True)
class PolicyDecision:
    """One task under the policy: the agent, and why."""

    agent: str
    #: the best specialist and its probability (None: no specialist ranked)
    specialist: str | None
    specialist_prob: float
    fell_back: bool


@dataclass(frozen=True)
class FallbackPolicy:
    """Route among specialists; below ``threshold`` (best specialist's probability) go to the best generalist."""

    generalists: tuple[str, ...]
    threshold: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"fallback threshold must be a probability, not {self.threshold}")

    def decide(self, ranking: Sequence[tuple[str, float]], routed: str | None = None) -> PolicyDecision:
        """The agent for one task from its full calibrated ``ranking`` (most probable first).

        ``routed`` is the router's own choice (AgentToken decodes greedily over words and agents,
        which may differ from the ranking's top); it is kept when it is a specialist and the
        policy does not fall back, so the policy changes only what it is about."""
        gen = set(self.generalists)
        spec = [(n, p) for n, p in ranking if n not in gen]
        best_gen = next((n for n, _ in ranking if n in gen), None)
        if not spec:
            if best_gen is None:
                raise ConfigError("empty ranking")
            return PolicyDecision(best_gen, None, 0.0, True)
        name, prob = spec[0]
        if prob < self.threshold and best_gen is not None:
            return PolicyDecision(best_gen, name, prob, True)
        keep = routed if routed is not None and routed not in gen else name
        return PolicyDecision(keep, name, prob, False)


@dataclass(frozen=True)
class ThresholdFit:
    """How the threshold was chosen: from held-out best-specialist probabilities of both kinds."""

    threshold: float
    #: held-out specialist demonstrations that would fall back (the cost), and generalist ones that would
    specialist_fallback: float
    generalist_fallback: float
    n_specialist: int
    n_generalist: int
    max_specialist_fallback: float


def fit_threshold(specialist_probs: Sequence[float], generalist_probs: Sequence[float], *,
                  max_specialist_fallback: float = 0.01) -> ThresholdFit:
    """The largest threshold under which at most ``max_specialist_fallback`` of the held-out
    *specialist* demonstrations fall back (their best specialist's probability is below it).

    Why this rule: the store's promise is that enrolling generalists costs the specialists'
    tasks (almost) nothing, so the budget is set on that side and the generalists get every
    task the budget allows; the generalists' held-out share that falls back is reported
    beside it (no benchmark task is looked at)."""
    if not specialist_probs or not generalist_probs:
        raise ConfigError("fitting a fallback threshold needs held-out demonstrations of specialists and of generalists")
    spec = sorted(float(p) for p in specialist_probs)
    allowed = int(max_specialist_fallback * len(spec))  # how many may fall below the threshold
    threshold = spec[allowed] if allowed < len(spec) else 1.0  # strictly below it fall back: exactly ``allowed`` do
    below = lambda ps: sum(p < threshold for p in ps) / len(ps)  # noqa: E731
    fit = ThresholdFit(threshold, below(spec), below([float(p) for p in generalist_probs]), len(spec),
                       len(generalist_probs), max_specialist_fallback)
    log.info("fallback threshold %.4f: %.1f%% of %d held-out specialist and %.1f%% of %d generalist demonstrations fall back",
             threshold, 100 * fit.specialist_fallback, fit.n_specialist, 100 * fit.generalist_fallback, fit.n_generalist)
    return fit
