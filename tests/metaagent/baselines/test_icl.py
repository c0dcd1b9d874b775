"""ICL router: answer parsing, context limits, cached-prefix ranking on the real backbone."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from agentlab.llm.base import ChatMessage
from agentlab.llm.scoring import candidate_logprobs, forward_packed, pack
from agentlab.metaagent.baselines.icl import ContextOverflowError, ICLRouter, parse_agent_name
from agentlab.pool import AgentPool

NAMES = ["SheetAgent", "VLCAgent", "VSAgent", "VSGUIAgent"]


@pytest.mark.parametrize(
    ("text", "agent", "problem"),
    [
        ("###VLCAgent###", "VLCAgent", None),
        ("  ### vlcagent ###\n", "VLCAgent", None),
        ("###Foo### then ###VSGUIAgent###", "VSGUIAgent", None),
        ("###VSAgent", "VSAgent", "closing"),
        ("I would pick VSGUIAgent here.", "VSGUIAgent", "not in ###Name### form"),
        ("###AgentName###", None, "unknown agent(s): AgentName"),
        ("###\n\nThe task is hard", None, "no ###Name###"),
        ("", None, "no ###Name###"),
        ("\x00\x01 ### ###", None, "no ###Name###"),
    ],
)
def test_parse_agent_name(text, agent, problem):
    got = parse_agent_name(text, NAMES)
    assert got.agent == agent
    if problem is None:
        assert got.problem is None
    else:
        assert problem in got.problem


def test_context_overflow_is_reported(pool):
    # 40 copies of the pool's documents cannot fit 8,192 tokens even without demonstrations.
    docs = [replace(d, name=f"{d.name}{i}") for i in range(2) for d in pool.agents]
    router = ICLRouter(AgentPool(docs), max_demos=0)
    with pytest.raises(ContextOverflowError, match=rf"{2 * len(pool)} agent documents need \d+ prompt tokens"):
        router.lm  # noqa: B018  (building the prompt cache is what raises)


def test_demos_shrink_to_fit(pool):
    router = ICLRouter(pool)
    k, ids, _ = router._choose_demos()
    assert len(ids) + router.cfg.reserve_tokens <= router.backend.context_length
    if k < router.cfg.max_demos_cap:  # one more demonstration would not have fitted
        assert router.prompt_tokens(k + 1) + router.cfg.reserve_tokens > router.backend.context_length


@pytest.mark.slow
def test_rank_and_route_on_cached_prefix(pool, backend):
    small = pool.subset(["SheetAgent", "VLCAgent", "ClockAgent"])
    router = ICLRouter(small, max_demos=1, progress=False)
    tasks = ["Play the video on the desktop", "Set an alarm for 7 am"]
    ranks = router.rank(tasks)
    for r in ranks:
        assert sorted(n for n, _ in r) == sorted(small.names)
        probs = [p for _, p in r]
        assert probs == sorted(probs, reverse=True) and math.isclose(sum(probs), 1.0, abs_tol=1e-6)
    # The cached-prefix scores equal scoring the whole prompt with no cache.
    got = router.scores(tasks[:1])[0]
    tok = backend.tokenizer
    full = router.prefix_ids + router._suffix_ids(tasks[0], None)
    answers = [tok(f"###{n}###", add_special_tokens=False)["input_ids"] for n in small.names]
    packed = pack([full], [answers], pad_id=tok.pad_token_id)
    with torch.no_grad():
        ref = candidate_logprobs(forward_packed(backend.model, packed), packed)[0].numpy()
    # Scores differ by log P("###"), the same for every candidate.
    assert np.allclose(got - got.max(), ref - ref.max(), atol=5e-3)
    # The cache is back to the prefix after use, and route() parses a generation.
    assert router.lm.cache.get_seq_length() == len(router.prefix_ids)
    res = router.route(tasks[:1])[0]
    assert res.raw is not None and (res.agent in small.names or res.error)
    assert router.lm.cache.get_seq_length() == len(router.prefix_ids)


def test_manager_for_all_fits_the_context(pool, backend):
    from agentlab.metaagent.manager import HashManager

    router = ICLRouter(pool)
    manager = HashManager(backend, max_new_tokens=64)
    full = router.manager_for_all(manager)
    prompt = backend.chat_prompt([ChatMessage("user", full.prompt("x", list(pool.agents)))])
    assert backend.count_tokens(prompt) + 2 * 64 + 200 <= backend.context_length
    assert full.max_demos < 3  # three demonstrations per document cannot fit for the whole pool
    assert router.manager_for_all(manager) is full  # built once, reused
    big = ICLRouter(AgentPool([replace(d, name=f"{d.name}{i}") for i in range(2) for d in pool.agents]))
    with pytest.raises(ContextOverflowError, match=f"{2 * len(pool)} documents"):
        big.manager_for_all(manager)


@pytest.mark.slow
def test_icl_manager_plans_over_all_documents(pool, backend):
    from agentlab.metaagent.manager import HashManager

    small = pool.subset(["SheetAgent", "VLCAgent", "ClockAgent"])
    router = ICLRouter(small, progress=False)
    manager = HashManager(backend, max_new_tokens=12)
    res = router.plan(["Play the video, then set an alarm for 7 am"], manager)[0]
    assert sorted(n for n, _ in res.ranking) == sorted(small.names)
    assert res.plan or res.error  # a parsed plan or a stated failure, never silence
    cached = router.manager_for_all(manager).backend
    assert cached.hits >= 1 and cached.misses == 0  # the documents prefix was reused
    assert router.manager_demos == 3  # three short documents fit with all demonstrations
