"""The --seeds figure: bars at the means with the intervals as error bars, pass@k / pass^k curves."""

from __future__ import annotations

import pytest

from agentlab.eval.variance import seed_stats
from agentlab.viz.variance import seed_figure


def test_seed_figure_shows_means_intervals_and_curves() -> None:
    rows = [{"id": i, "domain": d, "seed": s, "success": ok}
            for i, d, oks in (("a", "calc", [True, False, True]), ("b", "os", [True, True, True]))
            for s, ok in enumerate(oks)]
    stats = seed_stats(rows)
    fig = seed_figure(stats)
    bars = fig.data[0]
    assert list(bars.x) == ["calc", "os", "overall"]
    assert list(bars.y) == pytest.approx([100 * 2 / 3, 100.0, 100 * 5 / 6])
    calc = stats[0]
    assert bars.error_y.array[0] == pytest.approx(100 * (calc.ci_high - calc.mean))
    assert bars.error_y.arrayminus[0] == pytest.approx(100 * (calc.mean - calc.ci_low))
    names = [t.name for t in fig.data[1:]]
    assert names[:2] == ["calc pass@k", "calc pass^k"] and len(names) == 6
    assert list(fig.data[1].x) == [1, 2, 3] and fig.data[2].y[-1] == 0.0 and fig.data[1].y[-1] == 100.0
    with pytest.raises(ValueError):
        seed_figure([])
