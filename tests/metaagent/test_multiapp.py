"""Multi-application detection by clause routing: the splitter, the best cut, the threshold and its
fit, and the two callers (the manager's candidates, the store policy)."""

from __future__ import annotations

import math

import pytest

from agentlab.errors import ConfigError
from agentlab.llm.base import ChatMessage, LLMBackend
from agentlab.metaagent.manager import HashManager
from agentlab.metaagent.multiapp import (
    CONNECTORS,
    ClauseDetector,
    domain_probs,
    fit_detector,
    split_pieces,
    synthesize_joins,
)
from agentlab.metaagent.store_policy import FallbackPolicy
from agentlab.pool import AgentPool

#: words that make the keyword ranker sure of an agent (a faithful, tiny router: same protocol)
KEYWORDS = {"SheetAgent": ("spreadsheet", "column", "sum"), "WordAgent": ("letter", "document", "paragraph"),
            "SlideAgent": ("slide", "deck"), "GimpAgent": ("photo", "crop"), "MailAgent": ("email", "inbox"),
            "PCAgent": ("computer", "spreadsheet", "letter", "slide")}


class KeywordRanker:
    """Ranks every agent of a pool by how many of its keywords a text holds (softmax over counts)."""

    def __init__(self, pool: AgentPool, sharpness: float = 3.0) -> None:
        self.pool, self.sharpness, self.calls = pool, sharpness, 0

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        self.calls += 1
        out = []
        for t in tasks:
            words = t.lower()
            raw = {n: math.exp(self.sharpness * sum(k in words for k in KEYWORDS.get(n, ()))) for n in self.pool.names}
            z = sum(raw.values())
            out.append(sorted(((n, v / z) for n, v in raw.items()), key=lambda x: -x[1]))
        return out


def test_pieces_cut_at_joints_and_keep_short_fragments_whole() -> None:
    text = "Sum the amounts in the spreadsheet, then paste the total into the letter; rename it and save it as final"
    assert split_pieces(text) == ["Sum the amounts in the spreadsheet", "paste the total into the letter rename it",
                                  "save it as final"]  # "rename it" (2 words) is glued onto the piece before
    assert split_pieces("Crop the photo. After that, email it to Ann.") == ["Crop the photo.", "email it to Ann."]
    assert split_pieces("rows and columns") == ["rows columns"]
    assert split_pieces("   ") == []
    ands = " and ".join(f"do thing number {i}" for i in range(12))
    assert len(split_pieces(ands, max_pieces=10)) == 1  # too many pieces: a plain "and" stops being a joint
    thens = ", then ".join(f"do thing number {i}" for i in range(30))
    parts = split_pieces(thens, max_pieces=10)
    assert len(parts) == 10 and parts[-1].endswith("number 29")  # ... and the tail is glued, nothing dropped


def test_domain_probs_ignore_generalists(pool) -> None:
    probs = domain_probs([("PCAgent", 0.5), ("SheetAgent", 0.3), ("CalcAgent", 0.1), ("WordAgent", 0.1)], pool)
    assert probs == pytest.approx({"calc": 0.8, "writer": 0.2})


def test_two_applications_are_found_in_order(pool) -> None:
    ranker = KeywordRanker(pool)
    det = ClauseDetector(ranker, threshold=0.5)
    found = det.detect("Sum the column in the expenses spreadsheet and then type the total into the letter")
    assert found.multi and found.domains == ["calc", "writer"] and found.agents == ["SheetAgent", "WordAgent"]
    assert found.score > 0.5
    steps = found.steps()
    assert [s.agent for s in steps] == ["SheetAgent", "WordAgent"] and "letter" in steps[1].subtask
    assert "PCAgent" not in found.agents  # a generalist never names a part's application
    # one application, however many clauses: left whole
    single = det.detect("Sum the column in the spreadsheet and sort the spreadsheet by that column")
    assert not single.multi and single.domains == ["calc"] and len(single.segments) == 1


def test_threshold_decides_and_three_parts_are_possible(pool) -> None:
    text = "Crop the photo, then put it on the first slide, then email the deck to Ann"
    three = ClauseDetector(KeywordRanker(pool), threshold=0.3, max_segments=3).detect(text)
    assert three.domains == ["gimp", "impress", "thunderbird"]
    assert len(ClauseDetector(KeywordRanker(pool), threshold=0.3).detect(text).domains) == 2  # default: two parts
    assert not ClauseDetector(KeywordRanker(pool), threshold=0.999).detect(text).multi


def test_detect_many_routes_first_cuts_in_one_batch(pool) -> None:
    ranker = KeywordRanker(pool)
    det = ClauseDetector(ranker, threshold=1.0)  # nothing is ever cut: only the first batch is routed
    det.detect_many(["Sum the spreadsheet and write the letter", "Crop the photo then email it", "one"])
    assert ranker.calls == 1


def test_synthesized_joins_pair_two_domains_of_one_platform() -> None:
    items = [("Sum column B", "calc", "desktop"), ("Bold the title", "writer", "desktop"),
             ("Play jazz", "spotify", "mobile"), ("Sort the rows", "calc", "desktop"), ("Set an alarm", "clock", "mobile")]
    joins = synthesize_joins(items, 40, seed=3)
    assert len(joins) == 40 and joins == synthesize_joins(items, 40, seed=3)
    for text, (a, b) in joins:
        assert a != b and {a, b} in ({"calc", "writer"}, {"spotify", "clock"}) and text.endswith(".")
    assert len({c.split("{a}")[1].split("{")[0] for c in CONNECTORS}) > 5  # many joints, not one
    assert synthesize_joins([("x", "calc", "desktop")], 5) == []


def test_fit_detector_respects_the_budget(pool) -> None:
    det = ClauseDetector(KeywordRanker(pool))
    single = ["Sum the column in the spreadsheet", "Sort the spreadsheet and sum the column", "Bold the letter paragraph",
              "Crop the photo", "Add a slide to the deck and then another slide", "Check the inbox for email"] * 5
    multi = ["Sum the spreadsheet column, then paste it into the letter", "Crop the photo and put it on the slide",
             "Email the deck then add a slide", "Bold the letter and then crop the photo"]
    fit = fit_detector(det, single, multi, max_false_multi=0.0)
    assert det.threshold == fit.fit.threshold and fit.fit.specialist_fallback == 0.0
    assert fit.fit.generalist_fallback == 1.0 and fit.auc == 1.0
    assert not any(d.multi for d in det.detect_many(single)) and all(d.multi for d in det.detect_many(multi))


def test_policy_sends_multi_application_requests_to_a_generalist() -> None:
    policy = FallbackPolicy(("AgentS2", "PCAgent"), threshold=float("inf"))
    ranking = [("SheetAgent", 0.7), ("PCAgent", 0.2), ("WordAgent", 0.1)]
    assert policy.decide(ranking).agent == "SheetAgent"
    d = policy.decide(ranking, multi_app=True)
    assert d.agent == "PCAgent" and d.fell_back and d.multi_app and d.specialist == "SheetAgent"
    assert policy.decide([("SheetAgent", 1.0)], multi_app=True).agent == "SheetAgent"  # no generalist ranked: stay


class _Recorder(LLMBackend):
    """Answers with a fixed plan and keeps the prompt (the unconstrained manager's one call)."""

    model_id = "recorder"

    def __init__(self, answer: str) -> None:
        self.answer, self.prompts = answer, []  # type: ignore[var-annotated]

    def chat(self, messages: list[ChatMessage], params=None):  # type: ignore[no-untyped-def, override]
        self.prompts.append(messages[-1].content)
        return [self.answer]

    def complete(self, prompt, params=None):  # type: ignore[no-untyped-def, override]
        raise AssertionError


def test_manager_plans_over_the_parts_agents(pool) -> None:
    det = ClauseDetector(KeywordRanker(pool), threshold=0.5)
    task = "Sum the column in the expenses spreadsheet, then type the total into the letter"
    llm = _Recorder("###SheetAgent: sum the column###\n###WordAgent: type the total###")
    m = HashManager(llm, constrained=False, clauses=det)
    top_k = [pool.get(n) for n in ("SheetAgent", "CalcAgent", "SlideAgent")]  # the whole request's top-K
    res = m.plan(task, top_k)
    assert [s.agent for s in res.plan] == ["SheetAgent", "WordAgent"]
    assert "WordAgent" in llm.prompts[0] and "SlideAgent" not in llm.prompts[0]  # candidates: the parts' agents
    # a request left whole keeps the top-K
    llm2 = _Recorder("###SlideAgent: add it###")
    HashManager(llm2, constrained=False, clauses=det).plan("Add a slide to the deck", top_k)
    assert "SlideAgent" in llm2.prompts[0] and "WordAgent" not in llm2.prompts[0]


def test_clause_steps_write_the_plan_without_the_model(pool) -> None:
    det = ClauseDetector(KeywordRanker(pool), threshold=0.5)
    m = HashManager(_Recorder("never used"), constrained=False, clauses=det, clause_steps=True)
    res = m.plan("Crop the photo; then put it on the title slide", [pool.get("SlideAgent")])
    assert [s.agent for s in res.plan] == ["GimpAgent", "SlideAgent"] and res.plan[0].subtask == "Crop the photo"
    assert m.backend.prompts == [] and "threshold" in (res.raw or "")  # type: ignore[attr-defined]
    assert m.variant(clause_steps=False).clauses is det
    with pytest.raises(ConfigError):
        HashManager(_Recorder(""), constrained=False, clause_steps=True)


def test_real_embedding_router_splits_a_plain_request(pool) -> None:
    """The MiniLM router (cheap here) on a request no test double has seen: the two halves land in
    the two applications it names."""
    from agentlab.metaagent.data import load_training_set
    from agentlab.metaagent.router import router_class

    router = router_class("embedding")(pool, progress=False)
    router.fit(load_training_set(pool, source="seed"))  # the seeds: what the store policy's detector is fitted on
    det = ClauseDetector(router)
    found = det.detect("Crop the team photo in the image editor, then write an email to Ann with the photo attached")
    assert found.multi and set(found.domains) == {"gimp", "thunderbird"}, found.describe()


def test_the_two_applications_share_a_platform(pool) -> None:
    """A phone app is never paired with a desktop one: one request runs on one device."""

    class PhoneLeaning(KeywordRanker):
        def rank(self, tasks, states=None):  # type: ignore[no-untyped-def]
            out = super().rank(tasks, states)
            # the right half looks more like Spotify (mobile) than like the letter (desktop)
            return [sorted([(n, p * (30.0 if n == "SpotifyAgent" and "letter" in t else 1.0)) for n, p in r],
                           key=lambda x: -x[1]) for t, r in zip(tasks, out)]

    found = ClauseDetector(PhoneLeaning(pool)).detect("Sum the column in the spreadsheet, then type the total into the letter")
    platforms = {pool.get(a).platform for a in found.agents}
    assert found.multi and platforms == {"desktop"}


def test_same_domain_joins_are_long_single_application_requests() -> None:
    items = [("Sum column B", "calc", "desktop"), ("Sort the rows", "calc", "desktop"), ("Bold the title", "writer", "desktop")]
    joins = synthesize_joins(items, 10, seed=0, same_domain=True)
    assert len(joins) == 10 and all(g == ("calc", "calc") for _, g in joins)
    assert all("Sum column B" in t or "sum column B" in t for t, _ in joins)
