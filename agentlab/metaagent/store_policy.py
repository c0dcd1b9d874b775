"""Which agents are generalists, and when a task goes to one: the store's explicit policy.

A general agent (Agent S2, PC-Agent on the desktop, AppAgent on the phone) can act in any
application, so its token learns "anything that looks like a desktop task" and, once enrolled,
takes single-application tasks a specialist would do better (``benchmarks/results/desktop_enrolment.md``:
8.9 % of them). The store's policy says what a generalist is *for*:

* **routing** (:class:`FallbackPolicy`): choose among the specialists; hand the task to the best
  generalist only when a signal says no specialist fits (:data:`SIGNALS`: the best specialist's
  calibrated probability is low, or the generalists' summed probability is high) beyond a
  threshold fitted on held-out demonstrations (:func:`fit_threshold`), never on benchmark tasks;
* **several applications** (``decide(..., multi_app=True)``): a request whose parts land in
  different applications (:class:`agentlab.metaagent.multiapp.ClauseDetector`, fitted on held-out
  data) is no one specialist's: it goes to the best generalist. Why not the signals alone: the
  router scores the whole request and one application dominates, so the token probabilities
  barely tell a two-application task from a single-application one;
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


#: What says "no specialist fits": ``specialist`` -- one minus the best specialist's probability;
#: ``generalist_mass`` -- the generalists' summed probability. Higher means "fall back".
SIGNALS: tuple[str, ...] = ("specialist", "generalist_mass")


def fallback_score(ranking: Sequence[tuple[str, float]], generalists: Iterable[str], signal: str) -> float:
    """The policy's signal for one task's full calibrated ``ranking`` (higher: fall back)."""
    gen = set(generalists)
    if signal == "specialist":
        return 1.0 - next((p for n, p in ranking if n not in gen), 0.0)
    if signal == "generalist_mass":
        return float(sum(p for n, p in ranking if n in gen))
    raise ConfigError(f"unknown fallback signal '{signal}'; choose one of {', '.join(SIGNALS)}")


@dataclass(frozen=True)
class PolicyDecision:
    """One task under the policy: the agent, and why."""

    agent: str
    #: the best specialist (None: no specialist ranked)
    specialist: str | None
    score: float
    fell_back: bool
    #: the request was detected as needing several applications (and so went to a generalist)
    multi_app: bool = False


@dataclass(frozen=True)
class FallbackPolicy:
    """Route among specialists; when the signal exceeds ``threshold``, go to the best generalist."""

    generalists: tuple[str, ...]
    threshold: float
    signal: str = "specialist"

    def __post_init__(self) -> None:
        if self.signal not in SIGNALS:
            raise ConfigError(f"unknown fallback signal '{self.signal}'; choose one of {', '.join(SIGNALS)}")

    def decide(self, ranking: Sequence[tuple[str, float]], routed: str | None = None, *,
               multi_app: bool = False) -> PolicyDecision:
        """The agent for one task from its full calibrated ``ranking`` (most probable first).

        ``routed`` is the router's own choice (AgentToken decodes greedily over words and agents,
        which may differ from the ranking's top); it is kept when it is a specialist and the
        policy does not fall back, so the policy changes only what it is about. ``multi_app``:
        the request needs several applications (a clause detector said so): it goes to the best
        generalist whatever the signal says."""
        gen = set(self.generalists)
        spec = next((n for n, _ in ranking if n not in gen), None)
        best_gen = next((n for n, _ in ranking if n in gen), None)
        score = fallback_score(ranking, gen, self.signal)
        if multi_app and best_gen is not None:
            return PolicyDecision(best_gen, spec, score, True, multi_app=True)
        if spec is None or (score > self.threshold and best_gen is not None):
            if best_gen is None:
                raise ConfigError("empty ranking")
            return PolicyDecision(best_gen, spec, score, True)
        keep = routed if routed is not None and routed not in gen else spec
        return PolicyDecision(keep, spec, score, False)


@dataclass(frozen=True)
class ThresholdFit:
    """How the threshold was chosen: from held-out signals of both kinds."""

    threshold: float
    #: held-out specialist demonstrations that would fall back (the cost), and generalist ones that would
    specialist_fallback: float
    generalist_fallback: float
    n_specialist: int
    n_generalist: int
    max_specialist_fallback: float


def fit_threshold(specialist_scores: Sequence[float], generalist_scores: Sequence[float], *,
                  max_specialist_fallback: float = 0.01) -> ThresholdFit:
    """The lowest threshold at which at most ``max_specialist_fallback`` of the held-out
    *specialist* demonstrations fall back (their signal is above it).

    Why this rule: the store's promise is that enrolling generalists costs the specialists'
    tasks (almost) nothing, so the budget is set on that side and the generalists get every
    task the budget allows; the generalists' held-out share that falls back is reported
    beside it (no benchmark task is looked at)."""
    if not specialist_scores or not generalist_scores:
        raise ConfigError("fitting a fallback threshold needs held-out demonstrations of specialists and of generalists")
    if not 0.0 <= max_specialist_fallback <= 1.0:
        raise ConfigError(f"the fallback budget must be a share, not {max_specialist_fallback}")
    spec = sorted((float(x) for x in specialist_scores), reverse=True)
    allowed = int(max_specialist_fallback * len(spec))  # how many may lie strictly above the threshold
    threshold = spec[allowed] if allowed < len(spec) else spec[-1] - 1e-9
    above = lambda xs: sum(x > threshold for x in xs) / len(xs)  # noqa: E731
    fit = ThresholdFit(threshold, above(spec), above([float(x) for x in generalist_scores]), len(spec),
                       len(generalist_scores), max_specialist_fallback)
    log.info("fallback threshold %.4f: %.1f%% of %d held-out specialist and %.1f%% of %d generalist demonstrations fall back",
             threshold, 100 * fit.specialist_fallback, fit.n_specialist, 100 * fit.generalist_fallback, fit.n_generalist)
    return fit


def separation(specialist_scores: Sequence[float], generalist_scores: Sequence[float]) -> float:
    """AUC: the chance a generalist demonstration's signal exceeds a specialist one's (ties half)."""
    import bisect

    spec = sorted(specialist_scores)
    if not spec or not generalist_scores:
        return 0.0
    total = 0.0
    for g in generalist_scores:
        lo, hi = bisect.bisect_left(spec, g), bisect.bisect_right(spec, g)
        total += lo + 0.5 * (hi - lo)
    return total / (len(spec) * len(generalist_scores))
