"""The README's pictures, drawn from the full benchmark results and from the trajectory viewer.

`make figures` runs this. It never measures anything: every number comes from the results files
the benchmarks wrote (``benchmarks/results/*.md``, collected in RESULTS.md), so the pictures
always show what RESULTS.md says, at a size where every label reads:

- ``routing_per_domain.png``: routing accuracy per domain on the 313 OSWorld + AppAgent tasks,
  AgentToken vs the MiniLM embedding router vs the hybrid (``results/routing.md``), with 95 %
  Wilson intervals (most AppAgent domains have 5 tasks: the bars say how little that is);
- ``routing_overall.png``: every router's overall accuracy on the 313 tasks and on the 134
  project tasks (``routing.md``), and the baselines of the earlier all-baselines run
  (``routing_baselines.md``: LoRA, prompt tuning, ICL);
- ``route_latency.png``: routing latency per task, cold and warm (``route_latency.md``);
- ``viewer_episode.png``: a page of ``agentlab view``, the static trajectory viewer, for the
  phone task ``clock-add-dentist-alarm`` carried out on the protocol-level fake device with the
  task's reference actions (replayed through ClockAgent's reply format; no model is involved, so
  the picture shows every kind of mark: taps, typed text, swipes, and the verdict).

Plots are plotly figures rendered to PNG by headless Chromium (``agentlab.viz.chromium``, as the
notebooks' figures are): kaleido is not installed and matplotlib is not a declared dependency.

    python benchmarks/figures.py [--out docs/img] [--parts plots,viewer] [--work runs/figures]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

from _common import RESULTS, ROOT

from agentlab.eval.variance import wilson_interval
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams

COLOURS = {"agenttoken": "#4c72b0", "embedding": "#dd8452", "hybrid": "#55a868", "lora": "#8172b3", "prompt": "#937860",
           "icl": "#c44e52"}
FONT = {"family": "DejaVu Sans, Arial, sans-serif", "size": 16, "color": "#222"}
VIEWER_TASK = "clock-add-dentist-alarm"


# ----------------------------------------------------------------------------- reading the results


def md_tables(path: Path) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of a results file as (header, rows), cells stripped of ``**``."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    block: list[list[str]] = []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip().replace("**", "") for c in line.strip().strip("|").split("|")])
            continue
        if len(block) >= 2:
            tables.append((block[0], [r for r in block[2:]]))
        block = []
    return tables


def table(path: Path, first_headers: list[str]) -> tuple[list[str], list[list[str]]]:
    """The first table of ``path`` whose header starts with ``first_headers``."""
    for head, rows in md_tables(path):
        if head[: len(first_headers)] == first_headers:
            return head, rows
    raise SystemExit(f"{path}: no table starting with {first_headers}; was the file rewritten in another shape?")


def number(cell: str) -> float | None:
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", cell)
    return float(m.group(1)) if m else None


def interval(pct: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval of an accuracy in percent over ``n`` tasks, as (minus, plus) error bars."""
    wins = round(pct / 100 * n)
    lo, hi = wilson_interval(wins, n)
    return pct - 100 * lo, 100 * hi - pct


# ----------------------------------------------------------------------------- the plots


def _layout(fig, title: str, source: str, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    fig.update_layout(
        title={"text": f"{title}<br><sup>source: {source}</sup>", "x": 0.01, "xanchor": "left", "font": {"size": 21}},
        font=FONT, width=width, height=height, plot_bgcolor="white", paper_bgcolor="white",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0, "font": {"size": 16}},
        margin={"l": 20, "r": 30, "t": 120, "b": 70}, bargap=0.25, bargroupgap=0.05,
    )
    fig.update_xaxes(gridcolor="#e5e5e5", zerolinecolor="#999", ticks="outside", automargin=True)
    fig.update_yaxes(automargin=True, ticks="outside")


def routing_per_domain():  # type: ignore[no-untyped-def]
    import plotly.graph_objects as go

    src = RESULTS / "routing.md"
    head, rows = table(src, ["domain", "n"])
    routers = [h for h in head[2:] if h in COLOURS]
    per_domain = [r for r in rows if number(r[1]) is not None]  # the aggregate rows have no n
    labels = [f"{r[0]} ({int(number(r[1]) or 0)})" for r in per_domain]
    total = next(r for r in rows if r[0] == "all")
    n_all = sum(int(number(r[1]) or 0) for r in per_domain)
    labels.append(f"all ({n_all})")
    fig = go.Figure()
    for router in routers:
        i = head.index(router)
        vals = [number(r[i]) or 0.0 for r in per_domain] + [number(total[i]) or 0.0]
        ns = [int(number(r[1]) or 0) for r in per_domain] + [n_all]
        bars = [interval(v, n) for v, n in zip(vals, ns)]
        fig.add_trace(go.Bar(y=labels, x=vals, name=router, orientation="h", marker_color=COLOURS[router],
                             error_x={"type": "data", "symmetric": False, "array": [b[1] for b in bars],
                                      "arrayminus": [b[0] for b in bars], "color": "#555", "thickness": 1.2, "width": 3}))
    _layout(fig, "Routing accuracy per domain, 313 OSWorld + AppAgent tasks (95 % Wilson intervals)",
            "benchmarks/results/routing.md (domain in parentheses: tasks)", 1100, 1350)
    fig.update_yaxes(autorange="reversed", tickfont={"size": 16})
    fig.update_xaxes(title="tasks routed to an agent of the right domain (%)", range=[0, 101])
    return fig


def routing_overall():  # type: ignore[no-untyped-def]
    import plotly.graph_objects as go

    cur_head, cur_rows = table(RESULTS / "routing.md", ["domain", "n"])
    cur_all = next(r for r in cur_rows if r[0] == "all")
    proj_head, proj_rows = table(RESULTS / "routing.md", ["router", "tasks", "domain %", "agent %"])
    old_head, old_rows = table(RESULTS / "routing_baselines.md", ["domain", "n"])
    old_all = next(r for r in old_rows if r[0] == "all")
    _, old_counts = table(RESULTS / "routing_baselines.md", ["router", "tasks"])
    old_n = {r[0]: int(number(r[1]) or 0) for r in old_counts}
    n313 = 313
    names: list[str] = []
    series: dict[str, list[tuple[float | None, int]]] = {"313 benchmark tasks": [], "134 project tasks, domain level": [],
                                                           "134 project tasks, agent level": []}
    for router in [h for h in cur_head[2:] if h in COLOURS]:
        names.append(router)
        proj = next(r for r in proj_rows if r[0] == router)
        series["313 benchmark tasks"].append((number(cur_all[cur_head.index(router)]), n313))
        series["134 project tasks, domain level"].append((number(proj[2]), int(number(proj[1]) or 134)))
        series["134 project tasks, agent level"].append((number(proj[3]), int(number(proj[1]) or 134)))
    for router in ("lora", "prompt", "icl"):
        if router in old_head:
            names.append(f"{router} (earlier run)")
            series["313 benchmark tasks"].append((number(old_all[old_head.index(router)]), old_n.get(router, n313)))
            series["134 project tasks, domain level"].append((None, 0))
            series["134 project tasks, agent level"].append((None, 0))
    fig = go.Figure()
    shades = {"313 benchmark tasks": "#4c72b0", "134 project tasks, domain level": "#55a868", "134 project tasks, agent level": "#a6d8b0"}
    for label, points in series.items():
        vals = [p[0] for p in points]
        bars = [interval(v, n) if v is not None and n else (0.0, 0.0) for v, n in points]
        fig.add_trace(go.Bar(x=names, y=vals, name=label, marker_color=shades[label],
                             text=[f"{v:.1f}" if v is not None else "" for v in vals], textposition="auto",
                             insidetextanchor="start",
                             insidetextfont={"size": 15, "color": "#222" if label.endswith("agent level") else "white"},
                             outsidetextfont={"size": 15, "color": "#222"}, textangle=0, cliponaxis=False,
                             error_y={"type": "data", "symmetric": False, "array": [b[1] for b in bars],
                                      "arrayminus": [b[0] for b in bars], "color": "#555", "thickness": 1.2, "width": 3}))
    for name, (v, _) in zip(names, series["313 benchmark tasks"]):
        if v == 0:  # no bar to write in: say the zero above the axis
            fig.add_annotation(x=name, y=0, yshift=12, text="0.0", showarrow=False, font={"size": 15})
    _layout(fig, "Routing accuracy of every router (95 % Wilson intervals)",
            "benchmarks/results/routing.md; LoRA, prompt tuning, ICL: routing_baselines.md (30 agents, ICL on 36 tasks)",
            1100, 650)
    fig.update_yaxes(title="accuracy (%)", range=[0, 100], gridcolor="#e5e5e5")
    fig.update_xaxes(tickfont={"size": 16})
    return fig


def route_latency():  # type: ignore[no-untyped-def]
    import plotly.graph_objects as go

    head, rows = table(RESULTS / "route_latency.md", ["router", "cache"])
    labels = [f"{r[0]}, {r[1]}" if r[1] != "-" else r[0] for r in rows]
    median = [number(r[head.index("median ms")]) or 0.0 for r in rows]
    p95 = [number(r[head.index("p95 ms")]) or 0.0 for r in rows]
    colours = [COLOURS.get(r[0], "#777") if r[1] != "cold" else "#b9c7de" if r[0] == "agenttoken" else "#cfe6d4" for r in rows]
    fig = go.Figure(go.Bar(y=labels, x=median, orientation="h", marker_color=colours, name="median",
                           error_x={"type": "data", "symmetric": False, "array": [p - m for m, p in zip(median, p95)],
                                    "arrayminus": [0.0] * len(median), "color": "#555", "thickness": 1.5, "width": 5}))
    for label, m, p in zip(labels, median, p95):  # the numbers beyond the whisker, clear of the bar
        fig.add_annotation(x=p, y=label, xshift=10, xanchor="left", showarrow=False, font={"size": 16},
                           text=f"<b>{m:.1f} ms</b> (p95 {p:.0f} ms)")
    fig.add_vline(x=20, line_dash="dash", line_color="#c44e52", line_width=2)
    fig.add_annotation(x=20, y=1.0, yref="paper", yshift=14, xanchor="left", xshift=4, showarrow=False,
                       text="goal: 20 ms per task", font={"size": 15, "color": "#c44e52"})
    fig.add_vline(x=50, line_dash="dot", line_color="#c44e52", line_width=2)  # issue 43: a new task's first route
    fig.add_annotation(x=50, y=1.0, yref="paper", yshift=14, xanchor="left", xshift=4, showarrow=False,
                       text="cold goal: 50 ms", font={"size": 15, "color": "#c44e52"})
    _layout(fig, "Routing latency per task, one task at a time (bar: median; whisker: p95)",
            "benchmarks/results/route_latency.md (cold: a new task; warm: its hidden state already cached)", 1100, 540)
    fig.update_xaxes(title="milliseconds per task", range=[0, max(p95) * 1.45])
    fig.update_yaxes(autorange="reversed", tickfont={"size": 16})
    fig.update_layout(showlegend=False)
    return fig


def render(fig, name: str, out: Path, work: Path) -> Path:  # type: ignore[no-untyped-def]
    from agentlab.viz.chromium import screenshot
    from agentlab.viz.export import write_figure

    rec = write_figure(fig, work, name)
    return screenshot(work / rec.html, out / f"{name}.png", width=rec.width, height=rec.height, budget_ms=8000)


# ----------------------------------------------------------------------------- the viewer picture


class ReferenceReplies(LLMBackend):
    """Not a model: answers each turn with the task's next reference action in the AppAgent reply
    format (its ``#`` comment as the thought), then FINISH. Used only to draw the README picture
    of a viewer page with every kind of mark on it."""

    model_id = "reference-actions"

    def __init__(self, script: str) -> None:
        self.turns: list[tuple[str, str]] = []
        note = ""  # the comment above an action line says what it is for
        for line in script.splitlines():
            line = line.strip()
            if line.startswith("#"):
                note = line.lstrip("# ")
            elif line:
                self.turns.append((note or f"reference action {line}", line))
                note = ""

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        if not self.turns:
            return ["Observation: the alarm is saved\nThought: done\nAction: FINISH\nSummary: the task is done"]
        thought, action = self.turns.pop(0)
        return [f"Observation: the Clock app\nThought: {thought}\nAction: {action}\nSummary: {thought}"]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise NotImplementedError("chat only")


def viewer_picture(out: Path, work: Path = ROOT / "runs" / "figures") -> Path:
    from agentlab.llm.roles import Backends
    from agentlab.run.episode import ExecOptions
    from agentlab.run.worker import EpisodeRecipe, RunSpec, Worker, execute
    from agentlab.tasks.spec import load_task, tasks_dir
    from agentlab.pool import AgentPool
    from agentlab.viz.chromium import screenshot
    from agentlab.viz.site import write_site

    task = load_task(tasks_dir() / f"{VIEWER_TASK}.json")
    assert task.reference_solution is not None
    run = work / "viewer-run"
    if run.exists():  # this script's own folder from an earlier call: start afresh
        shutil.rmtree(run)
    execute(RunSpec(EpisodeRecipe(run, ExecOptions(max_steps=10))), [task],
            worker=Worker(AgentPool.from_dir(None), Backends(ReferenceReplies(task.reference_solution.code))), progress=False)
    write_site(run)
    page = run / "view" / "episodes" / f"{VIEWER_TASK}.html"
    return screenshot(page, out / "viewer_episode.png", width=1000, height=1600, budget_ms=3000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNGs (default docs/img)")
    ap.add_argument("--parts", default="plots,viewer", help="plots and/or viewer")
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "figures", help="where the viewer's run folder is made (git-ignored)")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="agentlab-figures-") as tmp:
        work = Path(tmp)
        if "plots" in parts:
            for name, make in (("routing_per_domain", routing_per_domain), ("routing_overall", routing_overall),
                               ("route_latency", route_latency)):
                written.append(render(make(), name, args.out, work))
        if "viewer" in parts:
            written.append(viewer_picture(args.out, args.work))
    for p in written:
        print(f"wrote {p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}")
    print(f"figures={len(written)}")


if __name__ == "__main__":
    sys.exit(main())
