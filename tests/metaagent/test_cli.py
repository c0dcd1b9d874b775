"""`agentlab train / route / eval routing` end to end on a tiny pool and task file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.cli import main
from agentlab.paths import agents_dir

AGENTS = {"SheetAgent": "desktop", "SpotifyAgent": "mobile", "MailAgent": "desktop"}


def _run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    for name, platform in AGENTS.items():
        (root / "agents" / platform).mkdir(parents=True, exist_ok=True)
        shutil.copy(agents_dir() / platform / f"{name}.md", root / "agents" / platform / f"{name}.md")
    (root / "cfg.yaml").write_text("train:\n  epochs: 20\nsource: seed\nper_agent: 4\n")
    tasks = [
        {"id": "t1", "instruction": "Sort budget.xlsx by the Amount column", "extra": 1},
        {"id": "t2", "instruction": "Play some jazz on Spotify"},
        {"id": "t3", "instruction": "Send the minutes to the whole team by email", "state": "Thunderbird is open"},
    ]
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    gold = [{"id": "t1", "domain": "calc"}, {"id": "t2", "domain": "spotify"}, {"id": "t3", "domain": "thunderbird"}]
    (root / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    return root


def test_train_route_eval(workdir: Path, capsys) -> None:
    w = workdir
    rc = _run(["train", "--out", str(w / "ck"), "--agents", str(w / "agents"), "--config", str(w / "cfg.yaml")])
    assert rc == 0, capsys.readouterr().err
    assert "trained 3 agent tokens" in capsys.readouterr().out
    rc = _run(["route", "--tasks", str(w / "tasks.jsonl"), "--tokens", str(w / "ck"), "--agents", str(w / "agents"), "--out", str(w / "pred.jsonl")])
    assert rc == 0, capsys.readouterr().err
    preds = [json.loads(l) for l in (w / "pred.jsonl").read_text().splitlines()]
    assert [p["id"] for p in preds] == ["t1", "t2", "t3"]
    for p in preds:
        assert p["agent"] in AGENTS and p["plan"] == []
        assert abs(sum(prob for _, prob in p["ranking"]) - 1) < 1e-5 and len(p["ranking"]) == 3
    capsys.readouterr()
    rc = _run(["eval", "routing", "--pred", str(w / "pred.jsonl"), "--gold", str(w / "gold.jsonl"), "--json", str(w / "s.json")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "overall" in out and "spotify" in out
    scores = json.loads((w / "s.json").read_text())
    correct = sum(p["agent"] == g for p, g in zip(preds, ["SheetAgent", "SpotifyAgent", "MailAgent"]))
    assert abs(scores["routing"]["accuracy"] - correct / 3) < 1e-9


def test_multi_agent_gold_scores(workdir: Path, capsys) -> None:
    w = workdir
    pred = {"id": "m1", "agent": "SheetAgent", "ranking": [["SheetAgent", 0.6], ["MailAgent", 0.3], ["SpotifyAgent", 0.1]],
            "plan": [{"agent": "SheetAgent", "subtask": "sum the column"}, {"agent": "MailAgent", "subtask": "email the file"}]}
    (w / "mp.jsonl").write_text(json.dumps(pred) + "\n")
    (w / "mg.jsonl").write_text(json.dumps({"id": "m1", "domains": ["calc", "thunderbird"]}) + "\n")
    assert _run(["eval", "routing", "--pred", str(w / "mp.jsonl"), "--gold", str(w / "mg.jsonl"), "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "AgentMatch 100.0%" in out and "top-1 recall 50.0%" in out


def test_bad_task_file_is_one_line_error(workdir: Path) -> None:
    bad = workdir / "bad.jsonl"
    bad.write_text('{"id": "a", "instruction": "ok"}\n{"id": "b"}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "agentlab.cli", "route", "--tasks", str(bad), "--out", str(workdir / "x.jsonl")],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert err.count("\n") == 0 and f"{bad}:2" in err and "instruction" in err
    assert not (workdir / "x.jsonl").exists()


def test_train_hybrid_then_route_with_the_hybrid(workdir: Path, capsys) -> None:
    w = workdir
    rc = _run(["train", "--out", str(w / "hy"), "--agents", str(w / "agents"), "--config", str(w / "cfg.yaml"),
               "--hybrid", "--documents"])
    assert rc == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "trained 3 agent tokens" in out and "hybrid_weight=" in out and "temperature=" in out
    side = json.loads((w / "hy" / "hybrid.json").read_text())
    assert side["kind"] == "hybrid" and side["weight"] > 0 and not (w / "hy" / "embedding").exists()
    meta = json.loads((w / "hy" / "tokens.json").read_text())
    assert meta["temperature"] > 0 and meta["history"][0]["documents"] is True
    rc = _run(["route", "--router", "hybrid", "--tasks", str(w / "tasks.jsonl"), "--tokens", str(w / "hy"),
               "--agents", str(w / "agents"), "--out", str(w / "hpred.jsonl")])
    assert rc == 0, capsys.readouterr().err
    preds = [json.loads(l) for l in (w / "hpred.jsonl").read_text().splitlines()]
    assert [p["agent"] for p in preds][:2] == ["SheetAgent", "SpotifyAgent"]
    assert all(abs(sum(prob for _, prob in p["ranking"]) - 1) < 1e-5 for p in preds)
    assert "with hybrid" in capsys.readouterr().out


def test_unconstrained_is_only_for_manager_mode(workdir: Path, capsys) -> None:
    rc = _run(["route", "--router", "embedding", "--unconstrained", "--tasks", str(workdir / "tasks.jsonl"),
               "--agents", str(workdir / "agents"), "--out", str(workdir / "u.jsonl")])
    err = capsys.readouterr().err
    assert rc != 0 and "--unconstrained is about manager plans" in err
    assert not (workdir / "u.jsonl").exists()
    rc = _run(["route", "--router", "embedding", "--max-plan-steps", "2", "--tasks", str(workdir / "tasks.jsonl"),
               "--agents", str(workdir / "agents"), "--out", str(workdir / "u.jsonl")])
    assert rc != 0 and "--max-plan-steps is about manager plans" in capsys.readouterr().err


def test_manager_mode_is_constrained_unless_told(workdir: Path, monkeypatch, capsys) -> None:
    """A backend that cannot decode inside the plan grammar is refused by default (one line naming
    --unconstrained) before any plan is asked for; nothing is written."""
    monkeypatch.setenv("AGENTLAB_LLM_KIND", "openai")
    monkeypatch.setenv("AGENTLAB_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AGENTLAB_LLM_MODEL", "no-grammar")
    rc = _run(["route", "--mode", "manager", "--router", "embedding", "--tasks", str(workdir / "tasks.jsonl"),
               "--agents", str(workdir / "agents"), "--out", str(workdir / "m.jsonl")])
    err = capsys.readouterr().err
    assert rc != 0 and "cannot constrain decoding to the plan grammar" in err and "--unconstrained" in err
    assert not (workdir / "m.jsonl").exists() or not (workdir / "m.jsonl").read_text().strip()


def test_clause_options_need_clauses_and_manager_mode(workdir: Path, capsys) -> None:
    base = ["route", "--router", "embedding", "--tasks", str(workdir / "tasks.jsonl"), "--agents", str(workdir / "agents"),
            "--out", str(workdir / "c.jsonl")]
    assert _run([*base, "--clauses"]) != 0 and "--clauses is about manager plans" in capsys.readouterr().err
    assert _run([*base, "--mode", "manager", "--clause-steps"]) != 0
    assert "--clause-steps sets up the clause detector; add --clauses" in capsys.readouterr().err
    assert _run([*base, "--mode", "manager", "--clauses", "--clause-router", "nope"]) != 0
    assert "--clause-router must be one of" in capsys.readouterr().err
    assert not (workdir / "c.jsonl").exists()


def test_clause_steps_plan_from_the_parts(workdir: Path, capsys) -> None:
    """``--clauses --clause-steps``: a two-application request's parts, routed one by one, are the
    plan (no generation: the steps are the request's own words)."""
    tasks = workdir / "two.jsonl"
    tasks.write_text(json.dumps({"id": "m1", "instruction": "Sort budget.xlsx by the Amount column, then send the "
                                 "sorted file to the whole team by email"}) + "\n")
    rc = _run(["route", "--mode", "manager", "--router", "embedding", "--clauses", "--clause-steps", "--tasks", str(tasks),
               "--agents", str(workdir / "agents"), "--out", str(workdir / "cs.jsonl")])
    assert rc == 0, capsys.readouterr().err
    assert "clauses routed by embedding" in capsys.readouterr().out
    (pred,) = [json.loads(line) for line in (workdir / "cs.jsonl").read_text().splitlines()]
    assert [s["agent"] for s in pred["plan"]] == ["SheetAgent", "MailAgent"], pred
    assert pred["plan"][0]["subtask"] == "Sort budget.xlsx by the Amount column"


def test_platform_keeps_each_task_on_its_device(workdir: Path, capsys) -> None:
    """``--platform desktop``: only desktop agents may take the tasks, even the phone one (its ranking
    keeps only them, renormalised); a task line's own ``platform`` wins; a bad value is one line."""
    base = ["route", "--router", "embedding", "--agents", str(workdir / "agents")]
    rc = _run([*base, "--tasks", str(workdir / "tasks.jsonl"), "--platform", "desktop", "--out", str(workdir / "p.jsonl")])
    assert rc == 0, capsys.readouterr().err
    preds = [json.loads(line) for line in (workdir / "p.jsonl").read_text().splitlines()]
    assert preds[0]["agent"] == "SheetAgent" and preds[2]["agent"] == "MailAgent"  # the phone task gets a desktop agent
    assert all(AGENTS[p["agent"]] == "desktop" and {n for n, _ in p["ranking"]} == {"SheetAgent", "MailAgent"}
               and abs(sum(q for _, q in p["ranking"]) - 1) < 1e-5 for p in preds)
    own = workdir / "own.jsonl"
    own.write_text(json.dumps({"id": "s", "instruction": "Play some jazz on Spotify", "platform": "mobile"}) + "\n")
    assert _run([*base, "--tasks", str(own), "--platform", "desktop", "--out", str(workdir / "o.jsonl")]) == 0
    assert json.loads((workdir / "o.jsonl").read_text())["agent"] == "SpotifyAgent"
    capsys.readouterr()
    assert _run([*base, "--tasks", str(own), "--platform", "tablet", "--out", str(workdir / "x.jsonl")]) != 0
    assert "--platform must be one of desktop, mobile, not 'tablet'" in capsys.readouterr().err
    own.write_text(json.dumps({"id": "s", "instruction": "Play jazz", "platform": "watch"}) + "\n")
    assert _run([*base, "--tasks", str(own), "--out", str(workdir / "x.jsonl")]) != 0
    assert f"{own}:1" in capsys.readouterr().err and not (workdir / "x.jsonl").exists()


def test_route_applies_the_store_policy_unless_told_open(tmp_path: Path, capsys) -> None:
    """With a generalist in the store, ``agentlab route`` (default ``--policy store``) gives a
    single-application request to a specialist and one naming two applications to the generalist;
    ``--policy open`` lets every agent compete."""
    agents = tmp_path / "agents" / "desktop"
    agents.mkdir(parents=True)
    for name in ("SheetAgent", "WordAgent", "PCAgent"):
        shutil.copy(agents_dir() / "desktop" / f"{name}.md", agents / f"{name}.md")
    tasks = tmp_path / "t.jsonl"
    two = "Copy the names from attendees.docx into column A of roster.xlsx and save roster.xlsx"
    tasks.write_text(json.dumps({"id": "two", "instruction": two}) + "\n"
                     + json.dumps({"id": "one", "instruction": "Move files between applications on this PC"}) + "\n")
    base = ["route", "--router", "embedding", "--agents", str(tmp_path / "agents"), "--tasks", str(tasks)]
    assert _run([*base, "--out", str(tmp_path / "s.jsonl")]) == 0, capsys.readouterr().err
    assert "(store policy)" in capsys.readouterr().out
    store = {p["id"]: p["agent"] for p in map(json.loads, (tmp_path / "s.jsonl").read_text().splitlines())}
    assert store["two"] == "PCAgent" and store["one"] in ("SheetAgent", "WordAgent")
    assert _run([*base, "--policy", "open", "--out", str(tmp_path / "o.jsonl")]) == 0
    opened = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert all(p["agent"] == p["ranking"][0][0] for p in opened)  # open: the router's top, whoever it is
    capsys.readouterr()
    assert _run([*base, "--policy", "nope", "--out", str(tmp_path / "x.jsonl")]) != 0
    assert "--policy must be one of store, open" in capsys.readouterr().err


def test_train_add_keeps_the_hybrid_settings_of_the_store_it_joins(workdir: Path, capsys) -> None:
    """Issue #39's README journey: `train --add X --out NEW` then `route --router hybrid --tokens NEW`.
    NEW must route with the base's λ and encoder temperature (the shipped Gemma tokens use λ = 0.5),
    not the defaults a checkpoint without hybrid.json falls back to."""
    w = workdir
    rc = _run(["train", "--out", str(w / "hy-base"), "--agents", str(w / "agents"), "--config", str(w / "cfg.yaml"), "--hybrid"])
    assert rc == 0, capsys.readouterr().err
    side = {"kind": "hybrid", "weight": 0.5, "embed_temperature": 0.07}
    (w / "hy-base" / "hybrid.json").write_text(json.dumps(side))
    more = w / "agents-more"
    shutil.copytree(w / "agents", more)
    shutil.copy(agents_dir() / "mobile" / "ClockAgent.md", more / "mobile" / "ClockAgent.md")
    rc = _run(["train", "--add", "ClockAgent", "--tokens", str(w / "hy-base"), "--out", str(w / "hy-new"),
               "--agents", str(more), "--config", str(w / "cfg.yaml")])
    assert rc == 0, capsys.readouterr().err
    assert json.loads((w / "hy-new" / "hybrid.json").read_text()) == side
    assert "ClockAgent" in json.loads((w / "hy-new" / "tokens.json").read_text())["agents"]
    from agentlab.metaagent.hybrid import HybridRouter
    from agentlab.pool import AgentPool

    loaded = HybridRouter.load(w / "hy-new", AgentPool.from_dir(more))
    assert loaded.weight == 0.5 and loaded.embed_temperature == 0.07


def test_a_bad_train_option_is_one_line_before_anything_loads(tmp_path: Path, capsys) -> None:
    assert _run(["train", "--source", "bogus", "--out", str(tmp_path / "t")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and err.startswith("error: options: source: Input should be 'all', 'seed' or 'generated'")
    assert not (tmp_path / "t").exists()
