"""The benchmark scripts run end to end on tiny settings and end with a key=value summary line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def run(script: str, *args: str, timeout: float = 900) -> str:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


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


@pytest.mark.slow
def test_routing_smoke(tmp_path):
    res = tmp_path / "routing.md"
    out = run("routing.py", "--quick", "--routers", "embedding,agenttoken", "--limit", "3", "--per-agent", "2", "--results", str(res))
    s = summary(out)
    assert set(s) == {"agenttoken", "embedding"}
    assert all(0.0 <= float(v) <= 1.0 for v in s.values())
    text = res.read_text()
    assert "Command: `python benchmarks/routing.py --quick" in text and "| **all** |" in text


@pytest.mark.slow
def test_training_cost_smoke(tmp_path):
    res = tmp_path / "tc.md"
    out = run("training_cost.py", "--agents", "3", "--per-agent", "1", "--epochs", "1", "--results", str(res))
    s = summary(out)
    assert float(s["speedup_vs_lora"]) > 0 and float(s["memory_ratio_vs_lora"]) > 0
    assert "| agenttoken | 1,728 |" in res.read_text()  # 3 agents x 576 dims


@pytest.mark.slow
def test_pool_scale_smoke(tmp_path):
    res = tmp_path / "ps.md"
    out = run("pool_scale.py", "--sizes", "32,60", "--tasks", "2", "--icl-tasks", "0", "--results", str(res))
    s = summary(out)
    assert float(s["latency_ratio_60_vs_32"]) > 0
    assert 32 <= int(s["icl_max_agents"]) < 60  # the 32 documents fit without demonstrations, 60 do not


@pytest.mark.slow
def test_manager_mode_smoke(tmp_path):
    res = tmp_path / "ma.md"
    out = run("manager_mode.py", "--tasks", "1", "--methods", "agenttoken", "--max-new-tokens", "12", "--results", str(res))
    s = summary(out)
    assert 0.0 <= float(s["agenttoken_top5_recall"]) <= 1.0
    assert "AgentMatch" in res.read_text()


@pytest.mark.slow
def test_multi_agent_table2_smoke(tmp_path):
    """The Table 2 analog, plans only, two plan items: the gold row is perfect, the clause row measured,
    the calibration shown, the command recorded."""
    res = tmp_path / "t2.md"
    out = run("multi_agent.py", "--quick", "--methods", "gold,clauses,single", "--out", str(tmp_path / "runs"), "--results", str(res))
    s = summary(out)
    assert float(s["gold_agentmatch"]) == 1.0 and 0.0 <= float(s["clauses_agentmatch"]) <= 1.0
    assert 0.0 < float(s["subtask_threshold"]) < 1.0
    text = res.read_text()
    assert "Command: `python benchmarks/multi_agent.py --quick" in text and "| gold | 2 | 100.0 | 100.0 |" in text
    assert "| single | skipped" in text and "non-matching pairs" in text


def test_execution_smoke(tmp_path):
    res = tmp_path / "ex.md"
    out = run("execution.py", "--part", "overhead", "--tasks", "2", "--results", str(res))
    s = summary(out)
    assert s["tasks"] == "2" and float(s["overhead_ms_none"]) > 0 and 0 < float(s["overhead_share_none"]) < 1
    assert s["goal"] == "PASS" or s["goal"].startswith("FAIL(")
    text = res.read_text()
    assert "Command: `python benchmarks/execution.py --part overhead --tasks 2" in text and "not a model" in text
    assert "| none | 2 (2, 0) | 2 |" in text  # both reference solutions solve their task in one step


@pytest.mark.slow
def test_execution_accuracy_smoke(tmp_path):
    """The Table 1 analog with the real embedded model on one task, two arms (tiny replies)."""
    res = tmp_path / "acc.md"
    out = run("execution.py", "--part", "accuracy", "--tasks", "1", "--arms", "gt,generalist", "--envs", "workspace",
              "--max-steps", "1", "--max-new-tokens", "16", "--out", str(tmp_path / "run"), "--acc-results", str(res))
    s = summary(out)
    assert s["tasks"] == "1" and set(s) >= {"acc_gt", "acc_generalist"} and float(s["acc_gt"]) in (0.0, 1.0)
    text = res.read_text()
    assert "SmolLM2-135M-Instruct" in text and "### Table 1 analog" in text and "| **all** |" in text
    rows = (tmp_path / "run" / "table1" / "arms" / "gt" / "results.jsonl").read_text().splitlines()
    assert len(rows) == 1 and '"router": "gt"' in rows[0]


@pytest.mark.slow
def test_routing_smoke_hybrid_and_project_set(tmp_path):
    res = tmp_path / "routing.md"
    out = run("routing.py", "--quick", "--routers", "embedding,hybrid", "--limit", "3", "--per-agent", "2",
              "--project", "--results", str(res))
    s = summary(out)
    assert {"embedding", "hybrid", "hybrid_v2_domain", "hybrid_v2_agent", "embedding_v2_agent"} <= set(s)
    assert float(s["hybrid_v2_agent"]) <= float(s["hybrid_v2_domain"])
    text = res.read_text()
    assert "Project set (`data/benchmarks/routing_set_v2.jsonl`, 3 tasks" in text
    assert "| router | tasks | domain % | agent % | gold CLI -> GUI agent |" in text and "| hybrid | 3 |" in text


@pytest.mark.slow
def test_route_latency_smoke(tmp_path):
    res = tmp_path / "lat.md"
    out = run("route_latency.py", "--tasks", "3", "--routers", "agenttoken", "--results", str(res))
    got = summary(out)
    assert set(got) == {"agenttoken_cold_s", "agenttoken_warm_s"} and all(float(v) > 0 for v in got.values())
    assert "| agenttoken | cold | 3 |" in res.read_text()


def test_route_latency_refuses_an_unknown_router_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, str(BENCH / "route_latency.py"), "--routers", "agenttoken,nope", "--results",
                           str(tmp_path / "x.md")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    from agentlab.metaagent.router import ROUTERS

    assert proc.returncode == 1 and proc.stderr.strip() == f"unknown router 'nope'; choose one of {', '.join(ROUTERS)}"
    assert not (tmp_path / "x.md").exists()
