"""Figures for self-instruct runs: where candidates fell against the band, and what became of them.

Inputs are the candidate records of :class:`agentlab.selfinstruct.report.SelfInstructReport`
(plain dicts with ``agent``, ``status``, ``min_existing``, ``max_existing``...), so a figure can
be drawn from a report loaded off disk as well as from a live run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: Statuses in display order, with a colour each (accepted green, band rejects red/orange).
STATUS_COLORS = {
    "accepted": "#2ca02c",
    "surplus": "#98df8a",
    "below_tau1": "#ff7f0e",
    "above_tau2": "#d62728",
    "leak": "#9467bd",
}


def status_counts(candidates: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{agent: {status: count}}`` in first-seen agent order."""
    out: dict[str, Counter[str]] = {}
    for c in candidates:
        out.setdefault(str(c["agent"]), Counter())[str(c["status"])] += 1
    return {a: dict(c) for a, c in out.items()}


def candidate_outcomes(candidates: Sequence[Mapping[str, Any]], *, title: str = "What became of the candidates") -> go.Figure:
    """Stacked bars per agent: accepted, surplus, below τ1, above τ2, leaked (share of candidates)."""
    import plotly.graph_objects as go

    counts = status_counts(candidates)
    agents = list(counts)
    statuses = [s for s in STATUS_COLORS if any(s in c for c in counts.values())]
    statuses += sorted({s for c in counts.values() for s in c} - set(statuses))
    fig = go.Figure()
    for s in statuses:
        ys = [counts[a].get(s, 0) for a in agents]
        fig.add_trace(go.Bar(x=agents, y=ys, name=s, marker_color=STATUS_COLORS.get(s)))
    totals = {a: sum(c.values()) for a, c in counts.items()}
    acc = {a: counts[a].get("accepted", 0) / totals[a] if totals[a] else 0.0 for a in agents}
    fig.update_layout(
        barmode="stack", title=title, yaxis_title="candidates", width=max(600, 120 * len(agents) + 300), height=430,
        xaxis={"ticktext": [f"{a}<br>{acc[a]:.0%} accepted" for a in agents], "tickvals": agents},
    )
    return fig


def candidate_scores(
    candidates: Sequence[Mapping[str, Any]],
    bands: Mapping[str, tuple[float, float]],
    *,
    title: str = "Candidates against the band: lowest vs highest BERTScore to the existing set",
) -> go.Figure:
    """One panel per agent: each scored candidate at (min, max) BERTScore against the agent's
    set at the time, coloured by status; the shaded square is the band [τ1, τ2] on both axes
    (inside it a candidate respects the band against every existing item)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    scored = [c for c in candidates if c.get("min_existing") is not None and c.get("max_existing") is not None]
    agents = list(dict.fromkeys(str(c["agent"]) for c in scored))
    if not agents:
        fig = go.Figure()
        fig.update_layout(title=title + "<br><sup>no scored candidates</sup>", width=700, height=300)
        return fig
    fig = make_subplots(rows=1, cols=len(agents), subplot_titles=agents, shared_yaxes=True)
    shown: set[str] = set()
    for col, agent in enumerate(agents, start=1):
        rows = [c for c in scored if c["agent"] == agent]
        if agent in bands:
            lo, hi = bands[agent]
            fig.add_shape(type="rect", x0=lo, x1=hi, y0=lo, y1=hi, fillcolor="green", opacity=0.12,
                          line_width=1, line_color="green", row=1, col=col)
        for status in dict.fromkeys(str(c["status"]) for c in rows):
            pts = [c for c in rows if c["status"] == status]
            fig.add_trace(
                go.Scatter(
                    x=[c["min_existing"] for c in pts],
                    y=[c["max_existing"] for c in pts],
                    mode="markers",
                    name=status,
                    legendgroup=status,
                    showlegend=status not in shown,
                    marker={"color": STATUS_COLORS.get(status), "size": 8, "opacity": 0.8},
                    text=[str(c.get("text", ""))[:140] for c in pts],
                    hovertemplate="%{text}<br>min %{x:.3f} · max %{y:.3f}<extra>" + status + "</extra>",
                ),
                row=1,
                col=col,
            )
            shown.add(status)
        fig.update_xaxes(title_text="min BERTScore to set", row=1, col=col)
    fig.update_yaxes(title_text="max BERTScore to set", row=1, col=1)
    fig.update_layout(title=title, width=max(650, 380 * len(agents)), height=470)
    return fig


def distinct_n(texts: Sequence[str], n: int = 2) -> float:
    """Distinct-n: unique word n-grams over all word n-grams (higher = more varied wording)."""
    grams: list[tuple[str, ...]] = []
    for t in texts:
        words = t.lower().split()
        grams.extend(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return len(set(grams)) / len(grams) if grams else 0.0


def dataset_composition(rows: Iterable[Mapping[str, Any]], *, title: str = "Demonstrations per agent") -> go.Figure:
    """Stacked bars per agent by ``source`` (seed = hand-written, generated = self-instruct)."""
    import plotly.graph_objects as go

    counts: dict[str, Counter[str]] = {}
    for r in rows:
        counts.setdefault(str(r["agent"]), Counter())[str(r.get("source", "?"))] += 1
    agents = list(counts)
    sources = ["seed", "generated"] + sorted({s for c in counts.values() for s in c} - {"seed", "generated"})
    fig = go.Figure()
    for s in sources:
        ys = [counts[a].get(s, 0) for a in agents]
        if any(ys):
            fig.add_trace(go.Bar(x=agents, y=ys, name=s))
    total = sum(sum(c.values()) for c in counts.values())
    fig.update_layout(barmode="stack", title=f"{title} ({total} in all)", yaxis_title="demonstrations",
                      width=max(700, 28 * len(agents) + 300), height=430)
    return fig
