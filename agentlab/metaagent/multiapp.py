"""Multi-application detection by clause routing: which applications a request needs, part by part.

Why: a router scores a whole request, and the application with more words in it dominates the
ranking. On plain-word two-application requests the router's two best specialists of different
domains match the gold pair only 39 % of the time (``benchmarks/results/two_app_plans.md``), and
no two-application desktop task reaches a general agent under the store's fallback policy
(``benchmarks/results/generalist_fallback.md``). Routing each part of the request on its own gives
each application its own say.

How (:class:`ClauseDetector`):

1. the request is cut at every *joint* (:func:`split_pieces`: sentence ends and ``;``, ``then``,
   ``and then``, ``after that``, ``finally``, ``, and``, and any plain ``and``) into pieces; a
   piece of fewer than :data:`MIN_WORDS` words is glued back onto its neighbour;
2. every cut of the pieces into two contiguous halves is routed (each half on its own, with the
   store's router: any object with a ``pool`` and ``rank``), each half's ranking summed per
   domain over the *specialists* (:func:`domain_probs`). A cut's score is the best
   ``sqrt(P_left(a) * P_right(b))`` over two *different* domains a, b of one platform (a
   request runs on one device: no phone app beside a desktop one): both sides must land in
   their own application (taking each side's top domain instead, and no cut when they agree,
   matched the pair less often on held-out synthesized requests: 34 vs 41 %);
3. the best cut wins; the request is multi-application when its score exceeds ``threshold``
   (fitted on held-out data only: :func:`fit_detector` -- held-out single-application
   demonstrations must stay whole, synthesized joins of two of them (:func:`synthesize_joins`)
   should be cut). Each accepted half is cut again the same way, up to ``max_segments``
   (default 2: on held-out synthesized requests, 3 matched the applications less often, even on
   the three-application templates, because a half is cut again whenever it can be).

No list of application words or verbs: the router decides what a piece is about, and a fragment
that names no application ("columns starting at A1") is never confidently anything, so cutting
at every ``and`` costs little. Callers: the hash-manager's candidates
(:class:`~agentlab.metaagent.manager.HashManager` ``clauses=``) and the store policy
(:meth:`~agentlab.metaagent.store_policy.FallbackPolicy.decide` ``multi_app=``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentlab.pool import AgentPool
from agentlab.metaagent.store_policy import ThresholdFit, fit_threshold, is_generalist, separation
from agentlab.tasks.decisions import PlanStep
from agentlab.tasks.requests import MAX_PIECES, MIN_WORDS, cut_at_joints, split_pieces  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)


class Ranker(Protocol):
    """What the detector needs of a router (:class:`~agentlab.metaagent.router.Router` has it)."""

    pool: AgentPool

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]: ...


def domain_probs(ranking: Sequence[tuple[str, float]], pool: AgentPool) -> dict[str, float]:
    """The specialists' probability summed per domain, renormalised over the specialists
    (generalists say nothing about *which* application a part is about)."""
    out: dict[str, float] = {}
    for name, p in ranking:
        doc = pool.get(name)
        if not is_generalist(doc):
            out[doc.domain] = out.get(doc.domain, 0.0) + float(p)
    total = sum(out.values())
    return {d: p / total for d, p in out.items()} if total > 0 else out


@dataclass(frozen=True)
class Segment:
    """One part of a request and the application it landed in."""

    text: str
    domain: str
    #: the best-ranked specialist of ``domain`` for this part
    agent: str
    #: ``domain``'s share of the specialists' probability for this part
    confidence: float


@dataclass(frozen=True)
class Detection:
    """A request, cut into parts of different applications (one segment: a single application)."""

    text: str
    segments: tuple[Segment, ...]
    #: the best first cut's score (0: no cut put the halves in different domains)
    score: float
    threshold: float
    pieces: tuple[str, ...] = field(default=())

    @property
    def multi(self) -> bool:
        """Whether the request needs more than one application."""
        return len({s.domain for s in self.segments}) > 1

    @property
    def domains(self) -> list[str]:
        """The applications' domains, in the order the request names them."""
        return list(dict.fromkeys(s.domain for s in self.segments))

    @property
    def agents(self) -> list[str]:
        """Each part's agent, first mention first, without repeats."""
        return list(dict.fromkeys(s.agent for s in self.segments))

    def steps(self) -> list[PlanStep]:
        """The plan the request's own order writes: one step per part (same agent in a row: merged)."""
        out: list[PlanStep] = []
        for s in self.segments:
            if out and out[-1].agent == s.agent:
                out[-1] = PlanStep(s.agent, f"{out[-1].subtask}; {s.text}")
            else:
                out.append(PlanStep(s.agent, s.text))
        return out

    def describe(self) -> str:
        """One line per part, for a prediction's ``raw``."""
        return "\n".join(f"[{s.text}] -> {s.agent} ({s.domain} {s.confidence:.2f})" for s in self.segments) + \
            f"\nmulti-application score {self.score:.3f} (threshold {self.threshold:.3f})"


class ClauseDetector:
    """Cuts requests into single-application parts by routing each part (see the module docstring)."""

    def __init__(self, router: Ranker, threshold: float = 0.0, *, max_segments: int = 2,
                 min_words: int = MIN_WORDS, max_pieces: int = MAX_PIECES) -> None:
        self.router = router
        self.pool = router.pool
        #: a cut counts when its score is above this
        self.threshold = threshold
        self.max_segments = max_segments
        self.min_words, self.max_pieces = min_words, max_pieces
        self._cache: dict[str, list[tuple[str, float]]] = {}
        #: the platforms each domain's agents run on (two parts' domains must share one)
        self._platforms: dict[str, set[str]] = {}
        for doc in self.pool:
            self._platforms.setdefault(doc.domain, set()).add(doc.platform)

    def _rank(self, texts: Sequence[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            for t, r in zip(todo, self.router.rank(todo)):
                self._cache[t] = r

    def _probs(self, text: str) -> dict[str, float]:
        probs = domain_probs(self._cache[text], self.pool)
        if not probs:  # no specialist in the pool: each agent's domain stands for itself
            for name, p in self._cache[text]:
                probs[self.pool.get(name).domain] = probs.get(self.pool.get(name).domain, 0.0) + float(p)
        return probs

    def _segment(self, text: str, domain: str | None = None) -> Segment:
        """``text`` as one part: of ``domain`` (None: its most probable one) and that domain's best agent."""
        probs = self._probs(text)
        dom = domain if domain is not None else max(probs, key=lambda d: probs[d])
        ranking = self._cache[text]
        docs = [self.pool.get(n) for n, _ in ranking]
        agent = next((d.name for d in docs if d.domain == dom and not is_generalist(d)),
                     next(d.name for d in docs if d.domain == dom))
        return Segment(text, dom, agent, probs.get(dom, 0.0))

    @staticmethod
    def _halves(pieces: Sequence[str]) -> list[tuple[str, str]]:
        return [(" ".join(pieces[:i]), " ".join(pieces[i:])) for i in range(1, len(pieces))]

    def _best_cut(self, pieces: Sequence[str]) -> tuple[float, int, str, str]:
        """(score, index, left domain, right domain) of the best cut of ``pieces`` (halves already
        ranked): the cut and the two *different* domains of one platform with the highest ``P_left(a) * P_right(b)``;
        the score is that product's square root (a probability-like number: both sides' share).
        (0, 0, '', '') when there is no cut."""
        best: tuple[float, int, str, str] = (0.0, 0, "", "")
        for i, (left, right) in enumerate(self._halves(pieces), start=1):
            lp, rp = self._probs(left), self._probs(right)
            for a, pa in lp.items():
                for b, pb in rp.items():
                    if a != b and self._platforms[a] & self._platforms[b] and (score := (pa * pb) ** 0.5) > best[0]:
                        best = (score, i, a, b)
        return best

    def _split(self, pieces: list[str], budget: int) -> list[Segment]:
        """``pieces`` as at most ``budget`` segments: cut where the best cut passes the threshold,
        then each half again."""
        whole = " ".join(pieces)
        self._rank([whole])
        if budget < 2 or len(pieces) < 2:
            return [self._segment(whole)]
        self._rank([h for pair in self._halves(pieces) for h in pair])
        score, i, a, b = self._best_cut(pieces)
        if score <= self.threshold:
            return [self._segment(whole)]
        left = self._split(pieces[:i], budget - 1)
        right = self._split(pieces[i:], budget - len(left))
        # a half left whole keeps the domain the cut chose for it (the two were chosen together)
        if len(left) == 1:
            left = [self._segment(left[0].text, a)]
        if len(right) == 1:
            right = [self._segment(right[0].text, b)]
        return _merge([*left, *right])

    def detect_many(self, texts: Sequence[str]) -> list[Detection]:
        """Each request's detection (the first cuts of all requests are routed in one batch)."""
        pieces = [split_pieces(t, min_words=self.min_words, max_pieces=self.max_pieces) for t in texts]
        self._rank([h for ps in pieces for h in (" ".join(ps), *(x for pair in self._halves(ps) for x in pair))])
        out = []
        for text, ps in zip(texts, pieces):
            score = self._best_cut(ps)[0]
            segs = self._split(ps, self.max_segments)
            out.append(Detection(text, tuple(segs), score, self.threshold, tuple(ps)))
        if len(self._cache) > 50_000:  # a long-lived detector keeps memory bounded
            self._cache.clear()
        return out

    def detect(self, text: str) -> Detection:
        """One request's detection."""
        return self.detect_many([text])[0]

    def scores(self, texts: Sequence[str]) -> list[float]:
        """Each request's best first-cut score (what :func:`fit_detector` fits the threshold on)."""
        return [d.score for d in self.detect_many(texts)]


def _merge(segments: list[Segment]) -> list[Segment]:
    """Neighbouring segments of one domain become one (the more confident one names the agent)."""
    out: list[Segment] = []
    for s in segments:
        if out and out[-1].domain == s.domain:
            prev = out[-1]
            lead = prev if prev.confidence >= s.confidence else s
            out[-1] = Segment(f"{prev.text} {s.text}", s.domain, lead.agent, max(prev.confidence, s.confidence))
        else:
            out.append(s)
    return out


#: How synthesized two-application requests join their two parts (``{a}``, ``{b}``): the joints people write.
CONNECTORS: tuple[str, ...] = ("{a}, then {b}", "{a} and then {b}", "{a}; {b}", "{a}. Then {b}", "{a}, and {b}",
                               "{a} and {b}", "First, {a}. Then, {b}", "{a}. After that, {b}", "{a}. {B}")


def synthesize_joins(items: Sequence[tuple[str, str, str]], n: int, *, seed: int = 0,
                     same_domain: bool = False) -> list[tuple[str, tuple[str, str]]]:
    """``n`` two-application requests made of two held-out single-application requests
    (``(text, domain, platform)``) of different domains on one platform, joined by one of
    :data:`CONNECTORS` -- data to fit the threshold on without looking at any benchmark. Each comes
    with its two domains, in order. ``same_domain=True``: two requests of *one* domain instead
    (a long single-application request with joints: what must stay whole)."""
    rng = random.Random(seed)
    by_platform: dict[str, list[tuple[str, str]]] = {}
    for text, dom, plat in items:
        key = f"{plat}/{dom}" if same_domain else plat
        by_platform.setdefault(key, []).append((text.strip().rstrip(".!"), dom))
    platforms = [p for p, xs in by_platform.items() if len(xs) > 1 and (same_domain or len({d for _, d in xs}) > 1)]
    if not platforms:
        return []
    out: list[tuple[str, tuple[str, str]]] = []
    while len(out) < n:
        xs = by_platform[rng.choice(platforms)]
        (a, da), (b, db) = rng.sample(xs, 2)
        if (da == db) != same_domain or not a or not b:
            continue
        form = rng.choice(CONNECTORS)
        out.append((form.format(a=a, b=b[0].lower() + b[1:], B=b[0].upper() + b[1:]) + ".", (da, db)))
    return out


@dataclass(frozen=True)
class DetectorFit:
    """How a detector's threshold was chosen, and how well its score separates the two kinds."""

    fit: ThresholdFit
    #: AUC: a two-application request's score above a single-application one's
    auc: float
    negatives: int
    positives: int


def fit_detector(detector: ClauseDetector, single: Sequence[str], multi: Sequence[str], *,
                 max_false_multi: float = 0.01) -> DetectorFit:
    """Set ``detector.threshold`` so that at most ``max_false_multi`` of the held-out
    single-application requests ``single`` are cut (:func:`~agentlab.metaagent.store_policy.fit_threshold`
    on the detection score); ``multi`` (held-out two-application ones) shows what that threshold catches.

    Why the budget sits on the single side: the store promises that a single-application task
    stays with its specialist, so a false cut is the cost to bound."""
    neg, pos = detector.scores(list(single)), detector.scores(list(multi))
    fit = fit_threshold(neg, pos, max_specialist_fallback=max_false_multi)
    detector.threshold = fit.threshold
    out = DetectorFit(fit, separation(neg, pos), len(neg), len(pos))
    log.info("clause detector threshold %.4f: %.1f%% of %d held-out single-app and %.1f%% of %d two-app requests cut "
             "(AUC %.3f)", fit.threshold, 100 * fit.specialist_fallback, len(neg), 100 * fit.generalist_fallback,
             len(pos), out.auc)
    return out


def held_out_requests(pool: AgentPool, *, n: int = 400, seed: int = 0) -> tuple[list[str], list[str]]:
    """(single, multi): ``n`` held-out single-application requests and ``n`` two-application ones
    to fit a detector on, from data no benchmark uses for scoring: the self-instruct demonstrations
    of ``pool``'s specialists (``data/demos``, source ``generated``: no shipped router was trained on
    them), their joins (:func:`synthesize_joins`), and the synthesized multi-agent task templates
    (``data/tasks/multi-*``) whose gold plan spans two or more of ``pool``'s domains.

    Half the single-application ones are two demonstrations of one domain joined like the
    two-application ones: real single-application tasks are often long, with joints, and the
    best of many cuts scores higher than the best of one (fitted on single demonstrations alone,
    the detector cut 1 % of them but 2.9 % of the 313 single-application benchmark tasks)."""
    from agentlab.metaagent.data import load_training_set
    from agentlab.tasks.spec import load_tasks

    everything = load_training_set(pool, source="all", seed=seed)  # "generated" refuses an agent without any
    seeds = {(d.name, x.text.lower()) for d in pool for x in d.demonstrations}
    items = [(t, doc.domain, doc.platform) for t, y in zip(everything.texts, everything.labels)
             if not is_generalist(doc := pool.get(everything.agents[y])) and (doc.name, t.lower()) not in seeds]
    rng = random.Random(seed)
    single = [t for t, _, _ in rng.sample(items, min(n - n // 2, len(items)))]
    single += [t for t, _ in synthesize_joins(items, n // 2, seed=seed + 1, same_domain=True)]
    templates = [t.instruction for t in load_tasks() if t.id.startswith("multi-") and t.plan
                 and len({pool.get(s.agent).domain for s in t.plan if s.agent in pool}) > 1]
    multi = [t for t, _ in synthesize_joins(items, max(n - len(templates), 0), seed=seed)] + templates
    return single, multi
