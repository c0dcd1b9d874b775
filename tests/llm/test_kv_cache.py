"""The key/value cache reaches the model under the name its forward declares: no deprecation noise
on the installed transformers, the old name where only the old one exists (issue #29)."""

from __future__ import annotations

import logging
import warnings

import pytest
import torch

from agentlab.llm.kv_cache import NEW_NAME, OLD_NAME, cache_arg, returned_cache, with_cache


class OldModel:
    """A model as transformers 5.0 declared it: the cache is ``past_key_values``."""

    def forward(self, input_ids=None, past_key_values=None, use_cache=None):  # type: ignore[no-untyped-def]
        return {"past_key_values": past_key_values}


class Wrapper:
    """A peft-style wrapper: ``forward(**kwargs)`` passes everything to the model it wraps."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def forward(self, **kwargs):  # type: ignore[no-untyped-def]
        return kwargs

    def get_base_model(self) -> object:
        return self.inner


def test_the_declared_name_is_used_and_read_back() -> None:
    assert cache_arg(OldModel()) == OLD_NAME and with_cache(OldModel(), "c") == {OLD_NAME: "c"}
    assert cache_arg(Wrapper(OldModel())) == OLD_NAME
    assert returned_cache({OLD_NAME: "old"}) == "old" and returned_cache({NEW_NAME: "new", OLD_NAME: None}) == "new"


@pytest.fixture
def no_cache_noise(caplog: pytest.LogCaptureFixture):  # type: ignore[no-untyped-def]
    """Fails the test on any FutureWarning or a transformers log line about the cache's old names."""
    caplog.set_level(logging.WARNING, logger="transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        yield
    noise = [r.getMessage() for r in caplog.records if "past_key_values" in r.getMessage() or "deprecated" in r.getMessage()]
    assert not noise, noise


def test_the_installed_models_take_the_cache_without_a_warning(backend, no_cache_noise) -> None:  # type: ignore[no-untyped-def]
    from agentlab.llm.prefix_cache import PrefixLM
    from agentlab.metaagent.features import Query, TextFeatureExtractor

    tok = backend.tokenizer
    prefix = tok("Agents: CalcAgent edits spreadsheets. VLCAgent plays media.\n", add_special_tokens=False)["input_ids"]
    lm = PrefixLM(backend, prefix)
    suffix = tok("Task: play a movie. Agent:", add_special_tokens=False)["input_ids"]
    scores = lm.score(suffix, [tok(f"###{n}###", add_special_tokens=False)["input_ids"] for n in ("CalcAgent", "VLCAgent")])
    assert scores.shape == (2,) and torch.isfinite(scores).all()
    assert isinstance(lm.generate(suffix, 3), str)
    feats = TextFeatureExtractor(backend).features([Query("Play the next song on Spotify")])  # the prefix cache of the router prompt
    assert feats.h.shape[0] == 1
    assert cache_arg(backend.model) == NEW_NAME or cache_arg(backend.model) == OLD_NAME  # whichever this transformers declares
