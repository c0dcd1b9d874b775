"""The benchmark scripts run end to end on their ``--quick`` path and end with a key=value summary line.

Each test calls the script's ``main(argv)`` in this process (the embedded models load once per
session, not once per script) with ``--quick`` and only smaller counts than quick's (tasks,
examples) and a results path of its own: the options that choose what a benchmark measures
(sizes, routers, parts) are the ones ``make bench`` runs, so a script cannot drift from its
smoke test.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
_LOADED: dict[str, ModuleType] = {}


@pytest.fixture(scope="module", autouse=True)
def _benchmarks_importable():  # type: ignore[no-untyped-def]
    """The scripts import their helpers as ``_common`` (their folder is on the path when run)."""
    sys.path.insert(0, str(BENCH))
    yield
    sys.path.remove(str(BENCH))


def script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (imported by path, once)."""
    if name not in _LOADED:
        spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while the script runs
        spec.loader.exec_module(module)
        _LOADED[name] = module
    return _LOADED[name]


def run(capsys: pytest.CaptureFixture[str], name: str, *args: str) -> str:
    """``main(args)`` of the script: it must succeed; its stdout."""
    capsys.readouterr()
    code = script(name).main(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    return captured.out


def summary(stdout: str) -> dict[str, str]:
    last = [ln for ln in stdout.splitlines() if ln.strip()][-1]
    return dict(kv.split("=", 1) for kv in last.split())


def test_run_all_discovers_every_benchmark():
    out = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--list"], capture_output=True, text=True, check=True).stdout.split()
    for name in ("routing", "training_cost", "pool_scale", "manager_mode", "multi_agent", "execution"):
        assert name in out
    assert "_common" not in out and "run_all" not in out and "collect_results" not in out
    bad = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--only", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown benchmark" in bad.stderr


def test_every_benchmark_is_main_argv_to_exit_status():
    """What run_all runs is importable and callable in-process: ``main(argv) -> int``."""
    import inspect

    names = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    for name in names:
        sig = inspect.signature(script(name).main)
        assert list(sig.parameters) == ["argv"] and sig.return_annotation == "int", name


@needs_lists
@pytest.mark.slow
def test_routing_smoke(tmp_path, capsys):
    res = tmp_path / "routing.md"
    out = run(capsys, "routing", "--quick", "--routers", "embedding,agenttoken", "--limit", "3", "--per-agent", "2",
              "--results", str(res))
    s = summary(out)
    assert set(s) == {"agenttoken", "embedding"}
    assert all(0.0 <= float(v) <= 1.0 for v in s.values())
    text = res.read_text()
    assert "Command: `python benchmarks/routing.py --quick" in text and "| **all** |" in text


@pytest.mark.slow
def test_training_cost_smoke(tmp_path, capsys):
    res = tmp_path / "tc.md"
    out = run(capsys, "training_cost", "--quick", "--agents", "3", "--per-agent", "1", "--results", str(res))
    s = summary(out)
    assert float(s["speedup_vs_lora"]) > 0 and float(s["memory_ratio_vs_lora"]) > 0
    assert "| agenttoken | 1,728 |" in res.read_text()  # 3 agents x 576 dims


@needs_lists
@pytest.mark.slow
def test_pool_scale_smoke(tmp_path, capsys, pool):
    """--quick's sizes (the real pool and 1,000 agents), fewer tasks."""
    res = tmp_path / "ps.md"
    out = run(capsys, "pool_scale", "--quick", "--tasks", "2", "--icl-tasks", "0", "--results", str(res))
    s = summary(out)
    n = len(pool)
    assert float(s[f"latency_ratio_1000_vs_{n}"]) > 0 and 0.0 <= float(s[f"agenttoken_acc_{n}"]) <= 1.0
    # the paper's 30 agents' full documents fit without demonstrations (the 36-agent store's only in
    # their brief form, AgentDocument.render), 1,000 do not
    assert 30 <= int(s["icl_max_agents"]) < 1000
    text = res.read_text()
    assert f"## Pool scale: latency and accuracy from {n} to 1,000 agents" in text and f"Pool = {n} real agents" in text
    assert f"| {n} | " in text and "| 1000 | " in text


@needs_lists
@pytest.mark.slow
def test_manager_mode_smoke(tmp_path, capsys):
    res = tmp_path / "ma.md"
    out = run(capsys, "manager_mode", "--quick", "--tasks", "1", "--methods", "agenttoken", "--max-new-tokens", "12",
              "--results", str(res))
    s = summary(out)
    assert 0.0 <= float(s["agenttoken_top5_recall"]) <= 1.0
    assert set(s) == {"agenttoken_agentmatch", "agenttoken_top5_recall", "agenttoken_failures"}
    text = res.read_text()
    assert "AgentMatch" in text and "| agenttoken | top-5 | 3 |" in text


@pytest.mark.slow
def test_multi_agent_table2_smoke(tmp_path, capsys):
    """The Table 2 analog, plans only, two plan items: the gold row is perfect, the clause row measured,
    the calibration shown, the command recorded."""
    res = tmp_path / "t2.md"
    out = run(capsys, "multi_agent", "--quick", "--methods", "gold,clauses,single", "--out", str(tmp_path / "runs"),
              "--results", str(res))
    s = summary(out)
    assert float(s["gold_agentmatch"]) == 1.0 and 0.0 <= float(s["clauses_agentmatch"]) <= 1.0
    assert 0.0 < float(s["subtask_threshold"]) < 1.0
    text = res.read_text()
    assert "Command: `python benchmarks/multi_agent.py --quick" in text and "| gold | 2 | 100.0 | 100.0 |" in text
    assert "| single | skipped" in text and "non-matching pairs" in text


def test_execution_smoke(tmp_path, capsys):
    res = tmp_path / "ex.md"
    out = run(capsys, "execution", "--part", "overhead", "--tasks", "2", "--quick", "--results", str(res))
    s = summary(out)
    assert s["tasks"] == "2" and float(s["overhead_ms_none"]) > 0 and 0 < float(s["overhead_share_none"]) < 1
    assert s["goal"] == "PASS" or s["goal"].startswith("FAIL(")
    text = res.read_text()
    assert "Command: `python benchmarks/execution.py --part overhead --tasks 2" in text and "not a model" in text
    assert "| none | 2 (2, 0) | 2 |" in text  # both reference solutions solve their task in one step


@pytest.mark.slow
def test_execution_accuracy_smoke(tmp_path, capsys):
    """The Table 1 analog with the real embedded model on one task, two arms (tiny replies)."""
    res = tmp_path / "acc.md"
    out = run(capsys, "execution", "--part", "accuracy", "--tasks", "1", "--arms", "gt,generalist", "--envs", "workspace",
              "--max-steps", "1", "--max-new-tokens", "16", "--quick", "--out", str(tmp_path / "run"), "--acc-results", str(res))
    s = summary(out)
    assert s["tasks"] == "1" and set(s) >= {"acc_gt", "acc_generalist"} and float(s["acc_gt"]) in (0.0, 1.0)
    text = res.read_text()
    assert "SmolLM2-135M-Instruct" in text and "### Table 1 analog" in text and "| **all** |" in text
    rows = (tmp_path / "run" / "table1" / "arms" / "gt" / "results.jsonl").read_text().splitlines()
    assert len(rows) == 1 and '"router": "gt"' in rows[0]


@pytest.mark.slow
def test_table1_smoke(tmp_path, capsys):
    """Table 1 with the real embedded model on two dev2 tasks, ground truth and one generalist arm;
    run again, it resumes (nothing new runs) and rebuilds the same table; --report-only reads it."""
    res, rec, out_dir = tmp_path / "t1.md", tmp_path / "t1.json", tmp_path / "run"
    args = ("--quick", "--max-new-tokens", "16", "--out", str(out_dir), "--results", str(res), "--record", str(rec))
    first = summary(run(capsys, "table1", *args))
    assert first["tasks"] == "2" and set(first) >= {"acc_gt", "acc_generalist-s2"}
    text = res.read_text()
    assert "Command: `python benchmarks/table1.py --quick" in text and "SmolLM2-135M-Instruct" in text
    assert "| method |" in text and "| **gt** |" in text and "lost to routing" in text
    rows = (out_dir / "dev2" / "arms" / "gt" / "results.jsonl").read_text().splitlines()
    assert len(rows) == 2
    again = summary(run(capsys, "table1", *args))
    assert again == first
    assert summary(run(capsys, "table1", *args, "--report-only")) == first
    import json

    record = json.loads(rec.read_text())
    assert record["cells"]["gt"]["all"][1] == 2
    # each row's outcome is in the record: [set, task, agent, success], one per task of the arm
    assert len(record["outcomes"]["gt"]) == 2 and all(o[0] == "dev2" and isinstance(o[3], bool)
                                                       for o in record["outcomes"]["gt"])
    assert sum(o[3] for o in record["outcomes"]["gt"]) == record["cells"]["gt"]["all"][0]
    # the folder elsewhere (as a Ray run's would be) is the same run row for row
    import shutil

    shutil.copytree(out_dir, tmp_path / "copy")
    same = summary(run(capsys, "table1", *args[:-6], "--out", str(tmp_path / "copy"), "--results", str(res),
                       "--record", str(rec), "--report-only", "--same-as", str(out_dir)))
    assert (same["rows_compared"], same["rows_same"]) == ("4", "4")
    assert f"### Row for row against `{out_dir}`" in res.read_text()


@needs_lists
@pytest.mark.slow
def test_routing_smoke_hybrid_and_project_set(tmp_path, capsys):
    res = tmp_path / "routing.md"
    out = run(capsys, "routing", "--quick", "--routers", "embedding,hybrid", "--limit", "3", "--per-agent", "2",
              "--project", "--results", str(res))
    s = summary(out)
    assert {"embedding", "hybrid", "hybrid_v2_domain", "hybrid_v2_agent", "embedding_v2_agent"} <= set(s)
    assert float(s["hybrid_v2_agent"]) <= float(s["hybrid_v2_domain"])
    text = res.read_text()
    assert "Project set (`data/benchmarks/routing_set_v2.jsonl`, 3 tasks" in text
    assert "| router | tasks | domain % | agent % | gold CLI -> GUI agent |" in text and "| hybrid | 3 |" in text


@needs_lists
@pytest.mark.slow
def test_route_latency_smoke(tmp_path, capsys):
    res = tmp_path / "lat.md"
    out = run(capsys, "route_latency", "--quick", "--tasks", "3", "--routers", "agenttoken", "--results", str(res))
    got = summary(out)
    assert set(got) == {"agenttoken_cold_s", "agenttoken_warm_s", "agenttoken_cold_floor_s"}
    assert all(float(v) > 0 for v in got.values())
    assert "| agenttoken | cold | 3 |" in res.read_text()


def test_route_latency_refuses_an_unknown_router_in_one_line(tmp_path, capsys):
    from agentlab.metaagent.router import ROUTERS

    assert script("route_latency").main(["--routers", "agenttoken,nope", "--results", str(tmp_path / "x.md")]) == 1
    assert capsys.readouterr().err.strip() == f"unknown router 'nope'; choose one of {', '.join(ROUTERS)}"
    assert not (tmp_path / "x.md").exists()


@pytest.mark.slow
def test_android_agent_smoke(tmp_path, capsys, monkeypatch, chat_server):
    """--quick on the fake clock app, the model a loopback endpoint that finishes at once (the
    embedded model takes minutes per reply on these prompts)."""
    url = chat_server(lambda body, k: "Thought: nothing to do\nAction: FINISH\nSummary: done")
    for key, value in {"KIND": "openai", "BASE_URL": url, "MODEL": "loopback-finisher"}.items():
        monkeypatch.setenv(f"AGENTLAB_LLM_{key}", value)
    res = tmp_path / "android.md"
    out = run(capsys, "android_agent", "--quick", "--out", str(res))
    s = summary(out)
    assert float(s["observe_over_raw"]) > 0 and {s["solved_none"], s["solved_auto_exploration"], s["solved_manual"]} == {"0"}
    text = res.read_text()
    assert text.startswith("## AndroidEnv and the AppAgent agent (fake adb server)\n\nCommand: `python benchmarks/android_agent.py "
                           "--quick --out ")
    assert "(LLM: `loopback-finisher`; 2 task(s) on the fake clock app, max 3 actions" in text
    assert "| manual | 0/2 | 0.0 | 0/2 (0%) | done 2 |" in text and "Summary line" not in text


@pytest.mark.slow
def test_selfinstruct_smoke(tmp_path, capsys):
    """--quick without the live generation sample (the embedded generator: a minute)."""
    res = tmp_path / "si.md"
    out = run(capsys, "selfinstruct", "--quick", "--no-live", "--results", str(res))
    s = summary(out)
    assert float(s["naive_over_cold_8x12"]) > 0 and float(s["batched_over_warm_16x50"]) > 0 and float(s["greedy_ms"]) > 0
    assert "live_acceptance" not in s
    text = res.read_text()
    assert "| 8 | 12 | 96 |" in text and "| 16 | 50 | 800 | not run |" in text and "| calc |" in text
    assert "Live sample" not in text and "Summary line" not in text


def test_routing_refuses_an_unknown_backbone_in_one_line(tmp_path, capsys):
    code = script("routing").main(["--quick", "--backbone", "embedded:gemma-7b", "--results", str(tmp_path / "r.md")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "gemma3-270m" in err and not (tmp_path / "r.md").exists()


def test_backbones_report_reads_the_records(tmp_path, capsys):
    """The side-by-side report measures nothing: it reads routing.py's records (or says how to make them)."""
    import json

    code = script("backbones").main(["--records", str(tmp_path), "--results", str(tmp_path / "b.md")])
    assert code == 1 and "routing.py --backbone NAME --record" in capsys.readouterr().err
    for name, params, acc in (("small", 135_000_000, 0.5), ("big", 270_000_000, 0.6)):
        row = {"acc_313": acc, "tasks_313": 313, "acc_v2_domain": acc, "acc_v2_agent": acc, "tasks_v2": 134, "train_examples": 9,
               "fit_seconds": 1.0, "fit_peak_rss_mib": 1.0, "trainable_parameters": 1, "route_seconds_per_task": 0.1}
        rec = {"backbone": {"name": f"embedded:{name}", "model_id": name, "fingerprint": "f", "parameters": params, "hidden_size": 8,
                            "vocab_size": 10, "layers": 2, "load_seconds": 1.0, "load_rss_mib": 1.0},
               "command": "python benchmarks/routing.py --backbone " + name, "settings": {}, "routers": {"agenttoken": row, "embedding": row},
               "probe": None, "peak_rss_mib": 10.0}
        (tmp_path / f"{name}.json").write_text(json.dumps(rec))
    out = run(capsys, "backbones", "--quick", "--records", str(tmp_path), "--results", str(tmp_path / "b.md"))
    assert summary(out) == {"small_agenttoken": "0.5000", "small_embedding": "0.5000", "big_agenttoken": "0.6000", "big_embedding": "0.6000"}
    text = (tmp_path / "b.md").read_text()
    assert "`python benchmarks/routing.py --backbone big`" in text and "Goal 1" in text


@pytest.mark.slow
def test_two_app_detection_smoke(tmp_path, capsys):
    """The quick fit (10 demonstrations per domain) runs end to end on the blind sets and says what it measured."""
    res = tmp_path / "two_app_detection.md"
    out = run(capsys, "two_app_detection", "--quick", "--results", str(res))
    s = summary(out)
    assert 0.0 <= float(s["blind_two_spans"]) <= 1.0 and 0.0 <= float(s["blind_one_either"]) <= 1.0
    assert float(s["blind_two_either"]) >= float(s["blind_two_spans"])  # either detector flags at least what one does
    text = res.read_text()
    assert "Command: `python benchmarks/two_app_detection.py --quick" in text and "| mentions or spans |" in text


@pytest.mark.slow
@pytest.mark.xvfb
@pytest.mark.timeout(900)
def test_gui_route_smoke(tmp_path, capsys):
    """The GUI-route benchmark with the real embedded model on one web task (Chromium under Xvfb),
    typed actions with skills, one step; run again, it reuses the arm's folder."""
    import shutil

    from agentlab.envs.a11y import pyatspi_available
    from agentlab.envs.testing.system import missing_system
    from agentlab.envs.xdisplay import xvfb_available

    reason = xvfb_available() or pyatspi_available()
    if reason or not shutil.which("chromium"):
        missing_system(f"no desktop with Chromium here: {reason or 'chromium not installed'}")
    res, out_dir = tmp_path / "gr.md", tmp_path / "run"
    args = ("--quick", "--max-new-tokens", "32", "--out", str(out_dir), "--results", str(res))
    first = summary(run(capsys, "gui_route", *args))
    assert first["tasks"] == "1" and "acc_typed-skills" in first
    text = res.read_text()
    assert "Command: `python benchmarks/gui_route.py --quick" in text and "| GUI, typed actions + app skills (" in text
    (row,) = [r for r in (out_dir / "typed-skills" / "results.jsonl").read_text().splitlines() if r.strip()]
    assert '"route": "gui"' in row
    assert summary(run(capsys, "gui_route", *args)) == first
