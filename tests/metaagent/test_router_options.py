"""Every router kind takes the same run options in its constructor, and nothing loads a model to do so."""

from __future__ import annotations


import pytest

from agentlab.errors import ConfigError
from agentlab.metaagent.router import ROUTERS, RunOptions, router_class


@pytest.mark.parametrize("kind", list(ROUTERS))
def test_every_router_takes_the_run_options(pool, kind):
    router = router_class(kind)(pool, None, progress=False, use_cache=False, seed=3)
    assert router.run_options == RunOptions(progress=False, use_cache=False, seed=3)
    assert router.trainable_parameters() == 0  # declared by every router; nothing trained yet
    default = router_class(kind)(pool)
    assert default.run_options == RunOptions()


@pytest.mark.parametrize("kind", list(ROUTERS))
def test_unknown_option_names_router_and_option(pool, kind):
    with pytest.raises(ConfigError) as err:
        router_class(kind)(pool, progress=False, no_such_option=1)
    assert kind in str(err.value) and "no_such_option" in str(err.value)


@pytest.mark.parametrize("kind", list(ROUTERS))
def test_bad_run_option_value_is_a_config_error(pool, kind):
    with pytest.raises(ConfigError, match=f"{kind}.*seed"):
        router_class(kind)(pool, seed="not a number")


def test_constructing_routers_loads_no_model(pool, monkeypatch):
    """Cheap construction: the backbone and the encoder are loaded on first use, never in ``__init__``."""

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a model was loaded while constructing a router")

    monkeypatch.setattr("agentlab.llm.load_local", refuse)
    monkeypatch.setattr("agentlab.llm.similarity.default_encoder", refuse)
    for kind in ROUTERS:
        router_class(kind)(pool, progress=False, use_cache=True, seed=0)


def test_seed_reaches_what_each_router_trains(pool):
    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.baselines.lora import LoRARouter
    from agentlab.metaagent.train import TrainConfig

    assert AgentTokenRouter(pool, train=TrainConfig(seed=5)).train_config.seed == 5  # no run seed: the train config's
    assert AgentTokenRouter(pool, train=TrainConfig(seed=5), seed=7).train_config.seed == 7
    assert LoRARouter(pool).seed == 0 and LoRARouter(pool, seed=2).seed == 2
    # The seed changes what an adapter learns, so it is part of its cache key; how it runs is not.
    a, b = LoRARouter(pool, seed=0).cfg.key_fields(0), LoRARouter(pool, seed=1).cfg.key_fields(1)
    assert a != b and "progress" not in a and "cache" not in a and "use_cache" not in a


def test_options_that_moved_to_run_options_are_not_router_options(pool):
    """``cache`` was a LoRA/prompt-tuning option; it is the shared ``use_cache`` now (one name for all)."""
    with pytest.raises(ConfigError, match="lora.*cache"):
        router_class("lora")(pool, cache=False)


@pytest.mark.parametrize("kind", [k for k in ROUTERS if k != "icl"])
def test_routers_plan_with_the_manager_they_are_given(pool, kind):
    """Only the ICL router adapts the manager (all documents); the others prompt it with their top-K."""
    router = router_class(kind)(pool)
    manager = object()
    assert router.manager_for(manager) is manager  # type: ignore[arg-type]
    assert not router.manager_uses_all_documents
    assert router_class("icl").manager_uses_all_documents
