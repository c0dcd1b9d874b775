"""The phrase detector of two-application requests (agentlab.metaagent.spans)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.errors import DataError
from agentlab.metaagent.spans import SIZES, SpanDetector, fit_spans, specialist_domains, windows
from agentlab.pool import AgentPool


class WordEncoder:
    """A deterministic stand-in for MiniLM: a window's vector is the sum of its words' one-hot
    slots (hashed), normalised -- enough for a linear model to tell "slides" from "sheet"."""

    model_id = "test-words"
    dim = 256

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(n == 0, 1, n)


def _detector(threshold: float = 0.5) -> SpanDetector:
    enc = WordEncoder()
    domains = ["calc", "impress", "writer"]
    coef = np.zeros((3, enc.dim), dtype=np.float32)
    for k, words in enumerate((["sheet", "cells"], ["slides", "deck"], ["document", "notes"])):
        for w in words:
            coef[k] += 8 * enc.encode([w])[0]
    return SpanDetector(domains, coef, np.zeros(3, dtype=np.float32), threshold, enc.model_id, {})


def test_windows_cover_every_word_in_short_runs() -> None:
    ws = windows("Turn the notes into slides")
    assert "notes into" in ws and "into slides" in ws and "Turn the notes into" in ws
    assert windows("slides") == ["slides"]


@given(st.lists(st.sampled_from(["a", "b", "notes", "slides", "and", "then"]), min_size=1, max_size=12))
def test_every_word_is_in_some_window(words: list[str]) -> None:
    text = " ".join(words)
    joined = " ".join(windows(text))
    assert all(w in joined for w in words)
    assert len(windows(text)) <= sum(max(1, len(words) - n + 1) for n in SIZES)


def test_two_applications_each_with_a_phrase_score_high_and_one_does_not() -> None:
    det, enc = _detector(), WordEncoder()
    assert det.score("turn the meeting notes into slides", "desktop", enc) > 0.5
    assert det.score("make the slides in the deck blue", "desktop", enc) < 0.5
    assert det.is_multi("copy the sheet cells into the document", "desktop", enc)
    assert not det.is_multi("sort the sheet cells", "desktop", enc)


def test_a_device_scores_only_its_own_domains() -> None:
    det = _detector()
    ev = det.evidence("notes into slides", "desktop", WordEncoder())
    assert set(ev) == {"calc", "impress", "writer"}
    assert set(ev) <= set(specialist_domains("desktop"))
    text = "notes into slides"  # no device given: the better device's score, from one embedding
    assert det.score(text, None, WordEncoder()) == max(det.score(text, p, WordEncoder()) for p in ("desktop", "mobile"))


def test_save_load_round_trip_and_one_line_on_a_corrupt_file(tmp_path) -> None:
    det = _detector(0.42)
    path = det.save(tmp_path / "spans.json")
    back = SpanDetector.load(path)
    assert back.domains == det.domains and back.threshold == pytest.approx(0.42)
    assert np.allclose(back.coef, det.coef, atol=1e-5)
    path.write_text(path.read_text()[:50], encoding="utf-8")  # torn
    with pytest.raises(DataError) as err:
        SpanDetector.load(path)
    assert str(path) in str(err.value.where)
    data = json.loads(det.save(tmp_path / "b.json").read_text())
    data["sizes"] = [3]
    (tmp_path / "b.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="refit"):
        SpanDetector.load(tmp_path / "b.json")


def test_fit_keeps_the_threshold_within_the_held_out_budget() -> None:
    det, held = fit_spans(AgentPool.from_dir(), budget=0.05, encoder=WordEncoder())  # type: ignore[arg-type]
    assert held and det.domains == sorted(det.domains)
    flagged = sum(det.score(t, p, WordEncoder()) > det.threshold for t, _, p in held) / len(held)  # type: ignore[arg-type]
    assert flagged <= 0.05
    assert det.fit["held_out"] == len(held) and det.fit["held_out_flagged"] == pytest.approx(flagged)
