"""FastBertScore is exact BERTScore (same model/layer/weights) and calibration reads it right."""

from __future__ import annotations

import numpy as np
import pytest

from agentlab.errors import ConfigError
from agentlab.selfinstruct.calibrate import acceptance_curve, calibrate, pairwise_distribution
from agentlab.selfinstruct.config import Band, Thresholds

A = [
    "Freeze the first row so the column headers stay visible.",
    "Remove the chart.",
    "Play my Discover Weekly playlist on shuffle.",
]
B = ["Hide the gridlines of the current sheet.", "Skip to the next song in the queue, please."]


def test_fast_matrix_equals_bert_score_pair_by_pair(scorer, fast) -> None:  # type: ignore[no-untyped-def]
    mat = fast.matrix(A, B)
    assert mat.shape == (3, 2)
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            # one pair per bert-score call: no padding, so no batch-dependent zeros
            assert mat[i, j] == pytest.approx(float(scorer.pairs([a], [b])[0]), abs=1e-5)
    assert np.allclose(mat, fast.matrix(B, A).T, atol=1e-6)  # F1 is symmetric
    assert fast.matrix(["same words here"], ["same words here"])[0, 0] == pytest.approx(1.0, abs=1e-5)
    assert fast.matrix([], B).shape == (0, 2)
    assert fast.matrix([""], B)[0].tolist() == [0.0, 0.0]


def test_pairwise_distribution_and_calibrated_band(pool, fast) -> None:  # type: ignore[no-untyped-def]
    sub = pool.subset(["SheetAgent", "CalcAgent", "SpotifyAgent"])
    dists = pairwise_distribution(sub, fast)
    assert set(dists) == {"calc", "spotify"}
    calc = dists["calc"]
    assert calc.n_items == 24 and calc.scores.size == 24 * 23 // 2
    band = calc.band(0.95)
    assert band.tau1 == pytest.approx(np.quantile(calc.scores, 0.025), abs=1e-4)
    assert band.tau2 == pytest.approx(np.quantile(calc.scores, 0.975), abs=1e-4)
    wide, narrow = calc.band(1.0), calc.band(0.9)
    assert wide.tau1 <= band.tau1 <= narrow.tau1 <= narrow.tau2 <= band.tau2 <= wide.tau2
    th = calibrate(sub, fast, coverage=0.95, leakage_tau=0.7, distributions=dists)
    assert th.band("calc") == band and th.leakage_tau == 0.7
    assert th.scorer == fast.describe()["scorer"] and th.num_layers == 6
    # never the paper's 0.8/0.9: MiniLM pairs of real tasks sit far lower
    assert th.tau2 < 0.8


def test_leakage_tau_is_a_quantile_of_seed_to_benchmark_scores(pool, fast) -> None:  # type: ignore[no-untyped-def]
    from agentlab.selfinstruct.calibrate import leakage_calibration

    sub = pool.subset(["SpotifyAgent"])
    tasks = ["Play my liked songs on shuffle.", "Open the alarm tab in the clock app."]
    seeds = [d.text for d in sub.get("SpotifyAgent").demonstrations]
    nearest = fast.matrix(seeds, tasks).max(axis=1)
    assert leakage_calibration(sub, fast, tasks, 0.5) == pytest.approx(np.quantile(nearest, 0.5), abs=1e-4)


def test_acceptance_curve_narrow_band_keeps_fewer(pool, fast) -> None:  # type: ignore[no-untyped-def]
    seeds = [d.text for d in pool.get("SpotifyAgent").demonstrations]
    cands = [
        "Play the newest album by Taylor Swift.",
        "Add this song to my Workout playlist.",
        "Turn on shuffle and repeat for the current playlist.",
        "Show me the lyrics of the song that is playing.",
        "Follow the artist of the current track.",
        "What is the capital of France?",
    ]
    bands = {0.5: Band(tau1=0.2, tau2=0.4), 1.0: Band(tau1=0.0, tau2=1.0)}
    curves = acceptance_curve(seeds, cands, fast, bands, round_size=3)
    by = {c.coverage: c for c in curves}
    assert by[1.0].final_size == len(seeds) + len(cands)  # everything fits the full band
    assert by[0.5].final_size < by[1.0].final_size
    sizes = [p.set_size for p in by[0.5].points]
    assert sizes == sorted(sizes) and by[0.5].points[-1].candidates_seen == len(cands)


def test_inverted_thresholds_are_one_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "thresholds.json"
    bad.write_text('{"scorer": "m", "num_layers": 6, "tau1": 0.6, "tau2": 0.2, "leakage_tau": 0.7}')
    with pytest.raises(ConfigError) as exc:
        Thresholds.load(bad)
    assert str(exc.value) == f"{bad}: tau1=0.6 is greater than tau2=0.2; the band would be empty"
    bad.write_text(
        '{"scorer": "m", "num_layers": 6, "tau1": 0.1, "tau2": 0.2, "leakage_tau": 0.7,'
        ' "per_domain": {"calc": {"tau1": 0.5, "tau2": 0.3}}}'
    )
    with pytest.raises(ConfigError, match=r"per_domain.calc: tau1=0.5 is greater than tau2=0.3"):
        Thresholds.load(bad)


def test_degenerate_pairs_are_reproduced_faithfully_and_flagged(scorer, fast) -> None:  # type: ignore[no-untyped-def]
    # Unrelated sentences whose precision and recall straddle zero: bert-score's F1 = 2PR/(P+R) blows up.
    a = "The reason for the exception is Google Chrome's security and privacy."
    b = "Could you convert all `.doc` files in current directory to PDF all at once in the command line?"
    p, r, f = fast.prf([a], [b])
    _, _, f_bs = scorer._scorer.score([a], [b])
    assert f[0, 0] == pytest.approx(float(f_bs[0]), abs=1e-4) and f[0, 0] > 1.0
    assert p[0, 0] * r[0, 0] < 0
    assert fast.degenerate([a, A[0]], [b, B[0]]).tolist() == [[True, False], [False, False]]
