"""Studies whose benchmark runs too long for a smoke test here: the env overhead (its workspace part
measured for real) and the Ray scale-out (its records and tables), plus the helpers studies share."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.experiments import env_overhead, ray_speedup, scale_out
from agentlab.experiments.markdown import pct, table
from agentlab.experiments.subsets import evenly, stratified


def test_env_overhead_times_workspace_programs_in_each_sandbox_mode():
    from agentlab.envs.workspace import bwrap_available

    res = env_overhead.run(env_overhead.EnvOverheadConfig(repeats=1, desktop=False, tasks=False))
    modes = ["none", "bwrap"] if bwrap_available() else ["none"]
    assert res.workspace is not None and list(res.workspace.times) == modes
    assert all(len(t) == 1 and t[0] > 0 for times in res.workspace.times.values() for t in times.values())
    lines = res.markdown()
    assert lines[0] == "| Workspace program | " + " | ".join(modes) + (" | bwrap / none |" if len(modes) == 2 else " |")
    assert lines[2].startswith("| python `print(1)` | ") and lines[-1] == ""
    assert set(res.summary()) == {f"python_ms_{m}" for m in modes}
    assert res.note() == f" (Xvfb 1280x800, no window manager; bubblewrap {'on' if len(modes) == 2 else 'off'})."


def test_env_overhead_sections_read_like_the_results_file():
    skipped = env_overhead.EnvOverhead(bwrap=False, desktop=env_overhead.DesktopTimes(skipped="no Xvfb"),
                                       workspace=env_overhead.WorkspaceTimes({"none": {k: [0.1] for k in env_overhead.PROGRAMS}}),
                                       tasks_ok=(3, 4))
    assert skipped.markdown() == [
        "DesktopEnv: skipped (no Xvfb)",
        "| Workspace program | none |", "|---|---|",
        "| python `print(1)` | 100 ms (median of 1) |", "| python openpyxl workbook | 100 ms (median of 1) |",
        "| bash `echo` | 100 ms (median of 1) |", "(bubblewrap unavailable: sandboxed timing not measured)", "",
        "Execution tasks: 3/4 score 0 on their start state and 1 after their reference solution ran in the sandbox "
        "(a check of tasks and evaluators, not an agent result).",
    ]
    assert skipped.summary() == {"python_ms_none": pytest.approx(100.0), "tasks_ok": 3, "tasks": 4}
    gtk = env_overhead.DesktopTimes(a11y=[0.2], grid=[0.02], step=[0.5], calc_skipped="not installed, skipped")
    assert gtk.markdown()[4] == "| ratio tree / grid | 10.0x |" and gtk.markdown()[-1] == "LibreOffice: not installed, skipped"


def _scale_out() -> scale_out.ScaleOut:
    ep = scale_out.Episodes(n=4, serial_s=20.0, parallel_s=10.0, acc_serial=1.0, acc_parallel=1.0, same_rows=True,
                            episode_s=5.0, calls=1.0, setup_s=0.01, evaluate_s=0.02)
    si = scale_out.SelfInstructRates(["A", "B"], serial_s=60.0, parallel_s=40.0, cands_serial=30, cands_parallel=30)
    return scale_out.ScaleOut(scale_out.ScaleOutConfig(workers=2, tasks=4, delay=0.5, si_agents=2, si_rounds=1, si_delay=0.1),
                              3.0, ep, si)


def test_scale_out_rates_summary_and_table():
    res = _scale_out()
    assert res.summary() == {"episodes_per_h_1": 720, "episodes_per_h_2": 1440, "episodes_ratio": 2.0, "candidates_per_min_1": 30,
                             "candidates_per_min_2": 45, "candidates_ratio": 1.5, "ray_start_s": 3.0, "episode_s": 5.0,
                             "same_rows": 1}
    body = res.markdown()
    assert body[2:6] == ["| work | 1 worker | 2 workers | ratio |", "|---|---|---|---|",
                         "| workspace episodes per hour | 720 | 1440 | **2.00x** |",
                         "| self-instruct candidates per minute | 30 | 45 | **1.50x** |"]
    assert "identical apart from the timing fields" in body[7] and "2 agents x 1 round(s)" in body[7]
    assert "1,000 such tasks: 1.4 h on one worker, about 0.7 h on 2" in body[9]


def test_ray_speedup_adds_up_the_pairs_and_names_what_differs():
    """benchmarks/ray_speedup.py: the ratio is total serial over total parallel wall time; rows that
    differ beyond timings are named with both values (a step's seconds is a timing)."""
    row = {"id": "t", "success": True, "seconds": 2.0, "step_outcomes": [{"index": 0, "seconds": 1.0}]}

    def run(wall: float, load1: float, **changes) -> ray_speedup.Run:  # type: ignore[no-untyped-def]
        return ray_speedup.Run(["agentlab", "exec"], wall, [{**row, **changes}], load1)

    assert ray_speedup.row_differences([row], [{**row, "seconds": 1.0, "step_outcomes": [{"index": 0, "seconds": 0.5}]}]) == {}
    assert ray_speedup.row_differences([row], [{**row, "success": False}]) == {"t": [("success", "true", "false")]}
    deep = {**row, "verdict": {"checks": [{"found": ["a"]}, {"found": ["b"]}]}}
    other = {**row, "verdict": {"checks": [{"found": ["a"]}, {"found": ["c"]}]}}
    assert ray_speedup.row_differences([deep], [other]) == {"t": [("verdict.checks[1].found[0]", '"b"', '"c"')]}
    missing = {**row, "error": "counts.txt: file not found in /runs/serial-0/episodes/t/workspace"}
    assert ray_speedup.row_differences([missing], [{**missing, "error": missing["error"].replace("serial", "parallel")}],
                                       (Path("/runs/serial-0"), Path("/runs/parallel-0"))) == {}  # the run folder is no difference
    res = ray_speedup.RaySpeedup(ray_speedup.RaySpeedupConfig(tasks=1, repeats=2),
                                 [(run(100.0, 3.0), run(60.0, 2.0)), (run(80.0, 1.0), run(50.0, 4.0))], {})
    assert res.ratio == pytest.approx(180 / 110) and res.same_rows
    summary = res.summary()
    assert summary["serial_s"] == 90.0 and summary["workers_2_s"] == 55.0 and summary["repeats"] == 2
    text = "\n".join(res.markdown())
    assert "| 1 | 100.0 s (load 3.0) | 60.0 s (load 2.0) | 1.00 / 1.00 | 1.67x |" in text and "**1.64x**" in text
    assert "serial first, `--workers 2` first" in text and "identical apart from the timing fields" in text


def test_scale_out_uses_workspace_tasks_with_a_reference_solution():
    tasks = scale_out.workspace_tasks(3)
    assert len(tasks) == 3 and all(t.env == "workspace" and t.reference_solution is not None for t in tasks)


def test_subsets_keep_order_and_bounds():
    class T:
        def __init__(self, i: int, domain: str) -> None:
            self.i, self.domain = i, domain

    items = [T(i, "ab"[i % 2]) for i in range(10)]
    one = stratified(items, 1, seed=3)
    assert sorted(t.domain for t in one) == ["a", "b"] and one == sorted(one, key=lambda t: t.i)
    assert stratified(items, 1, seed=3) == one and stratified(items, None) == items
    assert [t.i for t in evenly(items, 4)] == [0, 2, 5, 7] and evenly(items, 0) == [] and evenly(items, None) == items


def test_markdown_cells():
    assert pct(None) == "-" and pct(0.5) == "50.0"
    assert table(["a", "b"], [[1, "x"]]) == ["| a | b |", "|---|---|", "| 1 | x |"]
