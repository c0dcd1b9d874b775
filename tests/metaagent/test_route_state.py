"""The fast cold route (:mod:`agentlab.metaagent.route_state`) decides exactly as the existing path does.

The shipped checkpoint on the embedded SmolLM2-135M routes tasks of the project's routing set twice:
through the fast single-task path (a task alone, disk cache off: what ``benchmarks/route_latency.py``
times as cold) and through the existing batched path (``features``: a padded batch over a deep copy of
the prefix cache, what the routing table uses). Rankings must be identical and probabilities agree to
1e-4; the words the model writes before an agent token (forced here by lowering the agent logits)
must be the same whether they continue the task's cache or re-run the whole prompt.
"""

from __future__ import annotations

import pytest
import torch

from agentlab.eval.benchmarks import load_project_set
from agentlab.experiments.subsets import evenly
from agentlab.metaagent.agenttoken import AgentTokenRouter
from agentlab.metaagent.features import FeatureSpec, Query, TextFeatureExtractor
from agentlab.metaagent.route_state import RouteStates, shared_head
from agentlab.paths import data_dir
from agentlab.tasks.decisions import RouteResult

TOL = 1e-4


@pytest.fixture(scope="module")
def shipped(pool, backend) -> AgentTokenRouter:  # type: ignore[no-untyped-def]
    fx = TextFeatureExtractor(backend)
    return AgentTokenRouter.load(data_dir() / "tokens", pool, use_cache=False, progress=False, extractor=fx)


def _existing(router: AgentTokenRouter, task: str, state: str | None = None) -> RouteResult:
    """The path every batch takes (and a single task took before the fast path)."""
    fast = router.route_states
    fast.supported = False
    try:
        return router.route([task], [state])[0]
    finally:
        fast.supported = True


def _same(a: RouteResult, b: RouteResult) -> None:
    assert a.agent == b.agent and a.raw == b.raw and a.error == b.error
    assert [n for n, _ in a.ranking] == [n for n, _ in b.ranking]
    got = dict(b.ranking)
    assert max(abs(p - got[n]) for n, p in a.ranking) < TOL


def _check(router: AgentTokenRouter, tasks: list[str]) -> None:
    fast = [router.route([t])[0] for t in tasks]
    batched = router.route(tasks)  # several tasks: the batched path
    for t, f, b in zip(tasks, fast, batched):
        _same(f, b)
        _same(f, _existing(router, t))


def test_load_runs_the_shared_head_and_a_route_does_not_change_it(shipped: AgentTokenRouter) -> None:
    fast = shipped.route_states
    assert fast.supported and fast._kv is not None and fast._head_ids is not None  # warmed by load()
    # the head covers the prefix and the start of the rest ("The task is:"), not a task token
    prefix = shipped.extractor.prefix_ids
    assert len(fast._head_ids) > len(prefix) and fast._head_ids[: len(prefix)] == prefix
    before = [(k.clone(), v.clone()) for k, v in fast._kv]
    task = "Set the default zoom in Calc to 125% for every document I open."
    first = shipped.route([task])[0]
    assert all(torch.equal(k, k0) and torch.equal(v, v0) for (k, v), (k0, v0) in zip(fast._kv, before))
    _same(first, shipped.route([task])[0])


def test_a_task_runs_only_its_own_tokens(shipped: AgentTokenRouter) -> None:
    fx, fast = shipped.extractor, shipped.route_states
    assert fast._head_ids is not None
    q = Query("Mute the notifications of the Book Club group.")
    ids = fx.query_ids(q)
    run = fast.run(q)
    assert run.length == len(ids)
    assert shared_head(ids, fast._head_ids) == len(fast._head_ids)  # a state-less task shares the whole head
    assert torch.allclose(run.h, fx.hidden_for_ids([ids[len(fx.prefix_ids):]])[0], atol=1e-4, rtol=0)


def test_routing_set_sample_decides_as_the_existing_path(shipped: AgentTokenRouter) -> None:
    tasks = [t.instruction for t in evenly(load_project_set(), 8)]
    _check(shipped, tasks)


def test_a_state_shares_less_of_the_head_and_still_decides_the_same(shipped: AgentTokenRouter) -> None:
    state = "The file report.xlsx is open in LibreOffice Calc."
    task = "Sum column B into B20."
    _same(shipped.route([task], [state])[0], _existing(shipped, task, state))


def test_words_before_the_agent_token_continue_the_task_cache(shipped: AgentTokenRouter) -> None:
    """Lowered agent logits make the model write words first: each word then extends the task's own
    cache (one token) where the existing path re-runs prefix + task + words; same words, same ranking."""
    head = shipped._require_head()
    old, words = head.logit_bias, shipped.max_word_tokens
    head.logit_bias = old - 19.0  # the agent rows lead the words by ~18 logits on these tasks
    shipped.max_word_tokens = 4
    try:
        tasks = [t.instruction for t in evenly(load_project_set(), 3)]
        fast = [shipped.route([t])[0] for t in tasks]
        assert any(r.raw for r in fast)  # at least one task decoded words
        for t, f in zip(tasks, fast):
            _same(f, _existing(shipped, t))
    finally:
        head.logit_bias, shipped.max_word_tokens = old, words


def test_a_pooled_feature_is_not_served_by_the_shortcut(backend) -> None:  # type: ignore[no-untyped-def]
    fx = TextFeatureExtractor(backend, spec=FeatureSpec(pool="mean"))
    assert not RouteStates(fx).supported


@pytest.mark.slow
def test_the_whole_routing_set_decides_as_the_existing_path(shipped: AgentTokenRouter) -> None:
    _check(shipped, [t.instruction for t in load_project_set()])


def test_the_cold_floor_is_the_larger_of_reading_the_weights_and_the_task_arithmetic() -> None:
    from agentlab.experiments.route_latency import ColdFloor

    floor = ColdFloor(one_token_s=0.04, gflops=100.0, params=100_000_000, tokens=[10, 40])
    assert floor.task_floor_s(10) == pytest.approx(0.04)  # 2e8 * 10 / 1e11 = 0.02 s < one token's read
    assert floor.task_floor_s(40) == pytest.approx(0.08)  # the arithmetic dominates
    assert floor.mean_s == pytest.approx(0.06)
    assert "60.0 ms" in floor.line() and "50 ms goal" in floor.line()


def test_the_cold_floor_counts_the_tokens_a_cold_route_runs(shipped: AgentTokenRouter) -> None:
    from agentlab.experiments.route_latency import cold_floor

    tasks = ["Open the settings.", "Rename the second sheet of the budget workbook to Q3 and save it as xlsx"]
    states = shipped.route_states
    seen: list[int] = []
    base = states.model.base_model
    hook = base.register_forward_pre_hook(lambda _m, args, kwargs: seen.append(kwargs["input_ids"].shape[1]),
                                          with_kwargs=True)
    try:
        for t in tasks:
            states.run(Query(t, None))
    finally:
        hook.remove()
    floor = cold_floor(shipped, tasks, repeats=1)
    assert floor is not None and floor.tokens == seen
    assert floor.one_token_s > 0 and floor.gflops > 0
    assert 100e6 < floor.params < 135e6  # SmolLM2-135M without its token embedding
