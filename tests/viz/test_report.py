"""``agentlab report``: ExecutionAcc with intervals, cost, harness errors and reproduction across runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentlab.cli import exit_status
from agentlab.viz.chromium import dump_dom, find_chromium, screenshot
from agentlab.viz.report import build_report, write_report

from .conftest import make_run
from .test_site import _not_blank


@pytest.fixture(scope="module")
def runs(exec_run: Path, viz_pool, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    """The same configuration with another seed, one with another option, and one over two seeds."""
    root = tmp_path_factory.mktemp("report-runs")
    return {"a": exec_run, "b": make_run(root / "b", viz_pool, seed=1), "c": make_run(root / "c", viz_pool, max_steps=3),
            "seeds": make_run(root / "seeds", viz_pool, seeds=2)}


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_status(argv)
    return (code, *capsys.readouterr())


def test_one_run_report_beside_the_run(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["a"], run, ignore=shutil.ignore_patterns("view"))
    code, out, err = _run_cli(["report", str(run)], capsys)
    assert code == 0, err
    assert out.split() == ["report:", str(run / "report.md"), "report:", str(run / "report.html")]
    md = (run / "report.md").read_text()
    for domain in ("calc", "clock", "multi_apps", "os", "overall"):
        assert f"| {domain} |" in md
    assert "| overall | 4 | 1 | 4 | 75.0 | [30.1, 95.4] | Wilson over 4 tasks |" in md  # 3 of 4, Wilson interval
    assert "### Cost per task" in md and "| clock | 1 | 3.0 |" in md  # the phone episode's 3 model calls
    assert "### Harness errors: 0" in md and "| done | 3 |" in md and "| failed | 1 |" in md
    assert "reproduces" not in md  # one run: nothing to compare
    page = (run / "report.html").read_text()
    assert "<table>" in page and "75.0" in page and "http" not in page


@pytest.mark.skipif(find_chromium() is None, reason="no chromium installed (scripts/sysdeps.sh installs it)")
def test_a_second_seed_reproduces_the_first_and_the_page_shows_it(runs: dict[str, Path], tmp_path: Path) -> None:
    md, page = write_report([runs["a"], runs["b"]], tmp_path / "two.md")
    assert (md, page) == (tmp_path / "two.md", tmp_path / "two.html")
    text = md.read_text()
    assert "| reproduces run 1 |" in text and "- seeds changed ([0] -> [1])" in text
    assert "| overall | 75.0 [30.1, 95.4] | 75.0 [30.1, 95.4] | yes |" in text
    dom = dump_dom(page)
    assert "reproduces run 1" in dom and '<td class="yes">yes</td>' in dom
    _not_blank(screenshot(page, tmp_path / "two.png", width=1100, height=900))


def test_runs_that_differ_in_an_option_are_compared_not_reproduced(runs: dict[str, Path]) -> None:
    text = build_report([runs["a"], runs["c"]]).markdown()
    assert "- option max_steps changed (4 -> 3)" in text
    assert "so this is a comparison, not a reproduction" in text
    assert "| 2 | " in text and "| not comparable |" in text


def test_several_seeds_get_the_t_interval_and_pass_at_k(runs: dict[str, Path]) -> None:
    text = build_report([runs["seeds"]]).markdown()
    assert "pass@2" in text and "pass^2" in text and "t over 2 seeds" in text
    # the scripted model answers alike for both seeds: every seed scores 75 %, the interval has no width
    assert "| overall | 4 | 2 | 8 | 75.0 | [75.0, 75.0] | t over 2 seeds | 75.0 | 75.0 |" in text


def test_old_rows_and_harness_errors_without_a_manifest(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    rows = [{"id": "a", "success": True}, {"id": "b", "domain": "calc", "success": False, "error": "harness: calc is not installed"},
            {"id": "c", "domain": "calc", "llm_calls": 4, "seconds": 2.5, "success": False}]
    (old / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    other = tmp_path / "other"
    shutil.copytree(old, other)
    text = build_report([old, other]).markdown()
    assert text.count("| (no domain) | 1 |") == 4 and "| calc | 2 |" in text  # a row without a domain is its own group
    assert "### Harness errors: 1" in text and "- b (seed 0): harness: calc is not installed" not in text
    assert "- b: harness: calc is not installed" in text
    assert "| calc | 2 | 4.0 | — | — | — | 2.5 |" in text  # absent costs (tokens, USD) are absent, not zero
    assert "cannot tell" in text and "no manifest.json" in text


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["report", "{a}", "{b}"], "2 runs: say where the report goes with --out FILE"),
        (["report", "{missing}"], "run folder not found"),
        (["report", "{empty}"], "no results.jsonl here"),
        (["report", "{mixed}"], "results.jsonl: task x has two rows for seed 0; the results mix two runs"),
    ],
    ids=["several-without-out", "missing", "no-results", "mixed-runs"],
)
def test_bad_input_is_one_error_line(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     argv: list[str], says: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "results.jsonl").write_text('{"id": "x", "seed": 0}\n{"id": "x", "seed": 0}\n')
    paths = {"a": runs["a"], "b": runs["b"], "missing": tmp_path / "missing", "empty": tmp_path / "empty", "mixed": tmp_path / "mixed"}
    code, out, err = _run_cli([a.format(**paths) for a in argv], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert not list(runs["a"].glob("report.*"))  # nothing written
